/**
 * The gateway as each user's OAuth client at remote targets that opt in (`oauth.perUser`):
 * docs/upstreams.md, "Each user's own account". A request to such a target asks `tokenFor` for the
 * caller's token there: a fresh one from the vault, refreshed shortly before it expires (or after
 * the upstream refused it), else GW_UPSTREAM_AUTH_REQUIRED carrying a consent URL (authorization
 * code + PKCE S256, `resource` = the upstream, a `state` that names the pending consent: random,
 * single-use, expiring, its record sealed and bound to the principal and target). The callback
 * (`redeem`) checks `iss` (RFC 9207), redeems the code and stores the tokens for exactly the
 * principal and target the state was made for, whoever's browser brings it.
 *
 * Tokens never appear in a log line, an error or /status: errors carry the consent URL (no
 * secret) and OAuth error codes; the console lists connections with the upstream subject only.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { RemoteTargetConfig } from '../../config/types.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { Logger } from '../../log/logger.ts';
import type { Principal } from '../caller.ts';
import { challengeParam, discover, type Discovered } from './discovery.ts';
import { CALLBACK_PATH, clientFor } from './registration.ts';
import { redeemCode, refreshTokens, revokeToken, TokenEndpointError, type ClientCredentials, type TokenSet } from './token-endpoint.ts';
import type { Vault } from './vault.ts';
import { createConsents, type Flow } from './consents.ts';

/** A token is refreshed this long before it expires. */
export const REFRESH_MARGIN_MS = 60_000;

/** What the vault keeps per (principal, target). */
export interface Connection extends TokenSet {
  readonly principal: string;
  readonly target: string;
  readonly issuer: string;
  readonly client: ClientCredentials;
  readonly tokenEndpoint: string;
  readonly revocationEndpoint: string | undefined;
  readonly resource: string;
  readonly connectedAt: number;
}

/** One connection as the console and the /connections page show it: never a token. */
export interface ConnectionInfo {
  readonly principal: string;
  readonly target: string;
  readonly upstreamSubject: string | undefined;
  readonly expiresAt: number | undefined;
  readonly scopes: readonly string[];
  readonly connectedAt: number;
}

export interface UserOAuthOptions {
  readonly vault: Vault;
  readonly logger: Logger;
  /** The gateway's public origin (`gateway.oauth.publicUrl`, else the one it listens on). */
  readonly baseUrl: () => string;
  readonly clientName: string;
  /** How long a consent may take, from the URL being handed out to the callback. */
  readonly consentTtlSec: number;
  readonly now?: () => number;
}

export interface UserOAuth {
  /** The caller's token at `target`; rejects GW_UPSTREAM_AUTH_REQUIRED (with the consent URL) when there is none. */
  tokenFor(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined): Promise<string>;
  /** The upstream answered 401 to `token`: if it is the one in use, the next `tokenFor` refreshes (or asks for consent). */
  rejected(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined, token: string | undefined): void;
  /**
   * The upstream's 403 challenge: for `insufficient_scope`, GW_UPSTREAM_AUTH_REQUIRED with a consent
   * URL for the union of the scopes held and those named (the token held keeps serving other calls).
   */
  insufficientScope(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined, challenge: string): Promise<GatewayError | undefined>;
  /** The token last handed out for them (log scrubbing only). */
  peek(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined): string | undefined;
  /** A consent URL, for `extraScopes` on top of those held (403 insufficient_scope, the /connections page). */
  consentUrl(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined, extraScopes?: readonly string[]): Promise<Flow>;
  /** The callback's query: redeems the code; resolves with who connected which target. */
  redeem(query: URLSearchParams): Promise<{ principal: string; target: string; elicitationId: string }>;
  /** Connections, every principal's or one's (the console, /connections). */
  connections(principal?: string): Promise<ConnectionInfo[]>;
  /** Revokes at the server where it offers RFC 7009, and forgets; whether there was one. */
  disconnect(principal: string, target: RemoteTargetConfig): Promise<boolean>;
  /** Called after each successful consent (elicitation complete, list_changed). */
  onConnected(listener: (principal: string, target: string, elicitationId: string) => void): () => void;
}

const who = (principal: Pick<Principal, 'id'> | undefined) => principal?.id ?? 'anonymous';
const b64 = (bytes: Buffer) => bytes.toString('base64url');

export function createUserOAuth(options: UserOAuthOptions): UserOAuth {
  const { vault } = options;
  const now = options.now ?? Date.now;
  const log = options.logger.child({ component: 'user-oauth' });
  const consents = createConsents(options.consentTtlSec, now);
  /** What discovery found per target URL, for 10 minutes (bounded by the number of targets). */
  const discovered = new Map<string, { at: number; value: Promise<Discovered> }>();
  const stale = new Set<string>();
  const lastToken = new Map<string, string>();
  const inflight = new Map<string, Promise<string>>();
  const listeners = new Set<(principal: string, target: string, elicitationId: string) => void>();

  const discoveryOf = (target: RemoteTargetConfig) => {
    const known = discovered.get(target.url);
    if (known !== undefined && now() - known.at < 600_000) return known.value;
    const value = discover(target.name, target.url, target.oauth?.scopes);
    value.catch(() => discovered.delete(target.url));
    discovered.set(target.url, { at: now(), value });
    return value;
  };
  const remember = (key: string, token: string) => {
    lastToken.delete(key);
    lastToken.set(key, token);
    if (lastToken.size > 10_000) lastToken.delete(lastToken.keys().next().value as string);
    return token;
  };
  const configuredClient = (target: RemoteTargetConfig): ClientCredentials | undefined =>
    target.oauth?.clientId === undefined ? undefined : { clientId: target.oauth.clientId, clientSecret: target.oauth.clientSecret };

  const consentUrl = async (target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined, extraScopes: readonly string[] = []): Promise<Flow> => {
    const reused = extraScopes.length === 0 ? consents.pending(who(principal), target.name) : undefined;
    if (reused !== undefined) return reused;
    const found = await discoveryOf(target);
    const base = options.baseUrl();
    const client = await clientFor(vault, { target: target.name, configured: configuredClient(target), server: found.server, base, clientName: options.clientName });
    const held = await vault.get<Connection>('conn', [who(principal), target.name]);
    const scopes = [...new Set([...found.scopes, ...(held?.scopes ?? []), ...extraScopes])];
    const verifier = b64(randomBytes(32));
    const state = b64(randomBytes(32));
    const elicitationId = b64(randomBytes(16));
    const redirectUri = `${base}${CALLBACK_PATH}`;
    const url = new URL(found.server.authorizationEndpoint);
    const params = { response_type: 'code', client_id: client.clientId, redirect_uri: redirectUri, code_challenge: b64(createHash('sha256').update(verifier).digest()), code_challenge_method: 'S256', state, resource: found.resource };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    if (scopes.length > 0) url.searchParams.set('scope', scopes.join(' '));
    const pending = { principal: who(principal), target: target.name, verifier, redirectUri, issuer: found.server.issuer, issRequired: found.server.issInResponse, client, tokenEndpoint: found.server.tokenEndpoint, revocationEndpoint: found.server.revocationEndpoint, resource: found.resource, elicitationId };
    await vault.put('flow', [state], pending, options.consentTtlSec);
    const flow = { url: url.href, elicitationId, expiresAt: now() + options.consentTtlSec * 1_000 };
    if (extraScopes.length === 0) consents.remember(who(principal), target.name, flow);
    return flow;
  };

  const consentError = (target: RemoteTargetConfig, flow: Flow, extra: Record<string, unknown> = {}) =>
    new GatewayError('GW_UPSTREAM_AUTH_REQUIRED', `Connect your account at "${target.name}": open ${flow.url}`, {
      target: target.name,
      ...extra,
      authorizationUrl: flow.url,
      // MCP 2025-11-25 URLElicitationRequiredError: what a client that takes URL elicitation shows.
      elicitations: [{ mode: 'url', elicitationId: flow.elicitationId, url: flow.url, message: `Connect your account at "${target.name}"` }],
    });
  const authRequired = async (target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined): Promise<never> => {
    throw consentError(target, await consentUrl(target, principal));
  };

  const fresh = async (target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined, key: string): Promise<string> => {
    const parts = [who(principal), target.name];
    const held = await vault.get<Connection>('conn', parts);
    if (held === undefined) return authRequired(target, principal);
    const refused = stale.delete(key);
    const expiring = held.expiresAt !== undefined && now() >= held.expiresAt - REFRESH_MARGIN_MS;
    if (!refused && !expiring) return remember(key, held.accessToken);
    if (held.refreshToken === undefined) {
      await vault.delete('conn', parts);
      return authRequired(target, principal);
    }
    try {
      const next = await refreshTokens(target.name, held.tokenEndpoint, held.client, held.refreshToken, held.resource, now());
      await vault.put('conn', parts, { ...held, ...next, subject: next.subject ?? held.subject });
      log.info({ target: target.name, principal: who(principal), upstreamSubject: next.subject ?? held.subject }, 'refreshed an upstream token');
      return remember(key, next.accessToken);
    } catch (err) {
      // invalid_grant: the grant is gone (revoked, expired); anything else may pass, the token may still work.
      if (err instanceof TokenEndpointError && err.oauthError !== 'invalid_grant' && !refused && held.expiresAt !== undefined && now() < held.expiresAt) return remember(key, held.accessToken);
      log.warn({ target: target.name, principal: who(principal), err: { code: (err as GatewayError).code, oauthError: (err as TokenEndpointError).oauthError } }, 'refreshing an upstream token failed');
      await vault.delete('conn', parts);
      return authRequired(target, principal);
    }
  };

  return {
    tokenFor(target, principal) {
      const key = `${target.name}\0${who(principal)}`;
      let pending = inflight.get(key);
      if (pending === undefined) {
        pending = fresh(target, principal, key).finally(() => inflight.delete(key));
        inflight.set(key, pending);
      }
      return pending;
    },
    rejected(target, principal, token) {
      const key = `${target.name}\0${who(principal)}`;
      // Only the token in use now: a refused older one was replaced already.
      if (token !== undefined && token === lastToken.get(key) && stale.size < 10_000) stale.add(key);
    },
    async insufficientScope(target, principal, challenge) {
      if (challengeParam(challenge, 'error') !== 'insufficient_scope') return undefined;
      const named = (challengeParam(challenge, 'scope') ?? '').split(' ').filter((s) => /^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/.test(s)).slice(0, 32);
      if (named.length === 0) return undefined;
      log.info({ target: target.name, principal: who(principal), scopes: named }, 'the upstream wants more scopes: asking for consent');
      return consentError(target, await consentUrl(target, principal, named), { reason: 'insufficient_scope', requiredScopes: named });
    },
    peek: (target, principal) => lastToken.get(`${target.name}\0${who(principal)}`),
    consentUrl,
    async redeem(query) {
      const state = query.get('state') ?? '';
      const flow = state.length > 0 && state.length <= 128 ? await vault.take<PendingFlow>('flow', [state]) : undefined;
      if (flow === undefined) throw new GatewayError('GW_UPSTREAM_AUTH_FAILED', 'This consent link is unknown, used or expired; start again from your client', { reason: 'unknown state' });
      consents.forget(flow.principal, flow.target);
      const fail = (reason: string) => new GatewayError('GW_UPSTREAM_AUTH_FAILED', `Connecting an account at upstream "${flow.target}" failed: ${reason}`, { target: flow.target, reason });
      const iss = query.get('iss');
      // RFC 9207: a response from another server (mix-up) is refused before its code is used anywhere.
      if (iss !== null ? iss !== flow.issuer : flow.issRequired) throw fail('the response is not from the expected authorization server');
      const oauthError = query.get('error');
      if (oauthError !== null) throw fail(`the authorization server answered ${/^[\x20-\x7E]{1,64}$/.test(oauthError) ? oauthError : 'an error'}`);
      const code = query.get('code');
      if (code === null || code.length === 0 || code.length > 4_096) throw fail('no authorization code');
      const tokens = await redeemCode({ target: flow.target, tokenEndpoint: flow.tokenEndpoint, client: flow.client, code, verifier: flow.verifier, redirectUri: flow.redirectUri, resource: flow.resource }, now());
      const record: Connection = { ...tokens, principal: flow.principal, target: flow.target, issuer: flow.issuer, client: flow.client, tokenEndpoint: flow.tokenEndpoint, revocationEndpoint: flow.revocationEndpoint, resource: flow.resource, connectedAt: now() };
      await vault.put('conn', [flow.principal, flow.target], record);
      stale.delete(`${flow.target}\0${flow.principal}`);
      log.info({ target: flow.target, principal: flow.principal, upstreamSubject: tokens.subject }, 'connected an upstream account');
      for (const listener of listeners) listener(flow.principal, flow.target, flow.elicitationId);
      return { principal: flow.principal, target: flow.target, elicitationId: flow.elicitationId };
    },
    async connections(principal) {
      const all = await vault.all<Connection>('conn', 10_000);
      return all
        .filter((c) => principal === undefined || c.principal === principal)
        .map((c) => ({ principal: c.principal, target: c.target, upstreamSubject: c.subject, expiresAt: c.expiresAt, scopes: c.scopes, connectedAt: c.connectedAt }));
    },
    async disconnect(principal, target) {
      const held = await vault.take<Connection>('conn', [principal, target.name]);
      lastToken.delete(`${target.name}\0${principal}`);
      if (held === undefined) return false;
      if (held.revocationEndpoint !== undefined) {
        if (held.refreshToken !== undefined) await revokeToken(target.name, held.revocationEndpoint, held.client, held.refreshToken, 'refresh_token');
        await revokeToken(target.name, held.revocationEndpoint, held.client, held.accessToken, 'access_token');
      }
      log.info({ target: target.name, principal, upstreamSubject: held.subject }, 'disconnected an upstream account');
      return true;
    },
    onConnected(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

interface PendingFlow {
  readonly principal: string;
  readonly target: string;
  readonly verifier: string;
  readonly redirectUri: string;
  readonly issuer: string;
  readonly issRequired: boolean;
  readonly client: ClientCredentials;
  readonly tokenEndpoint: string;
  readonly revocationEndpoint: string | undefined;
  readonly resource: string;
  readonly elicitationId: string;
}
