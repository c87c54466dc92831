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
import type { RemoteTargetConfig } from '../../config/types.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { Logger } from '../../log/logger.ts';
import type { Principal } from '../caller.ts';
import { challengeParam, type Discovered } from './discovery.ts';
import { redeemCode, revokeToken } from './token-endpoint.ts';
import type { Vault } from './vault.ts';
import { createConsents, type Flow } from './consents.ts';
import { consentError, consentUrl, fresh, who, type Connection, type Consents, type OAuthState, type PendingFlow } from './user-oauth-flow.ts';

export { REFRESH_MARGIN_MS, type Connection } from './user-oauth-flow.ts';

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

export function createUserOAuth(options: UserOAuthOptions): UserOAuth {
  return new UserOAuthClient(options);
}

/** The client's state (OAuthState) and its API; tokens and consents are in user-oauth-flow.ts. */
class UserOAuthClient implements UserOAuth, OAuthState {
  readonly vault: Vault;
  readonly now: () => number;
  readonly log: Logger;
  readonly baseUrl: () => string;
  readonly clientName: string;
  readonly consentTtlSec: number;
  readonly consents: Consents;
  /** What discovery found per target URL, for 10 minutes (bounded by the number of targets). */
  readonly discovered = new Map<string, { at: number; value: Promise<Discovered> }>();
  readonly stale = new Set<string>();
  readonly lastToken = new Map<string, string>();
  readonly inflight = new Map<string, Promise<string>>();
  readonly listeners = new Set<(principal: string, target: string, elicitationId: string) => void>();

  constructor(options: UserOAuthOptions) {
    this.vault = options.vault;
    this.now = options.now ?? Date.now;
    this.log = options.logger.child({ component: 'user-oauth' });
    this.baseUrl = options.baseUrl;
    this.clientName = options.clientName;
    this.consentTtlSec = options.consentTtlSec;
    this.consents = createConsents(options.consentTtlSec, this.now);
  }

  tokenFor(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined): Promise<string> {
    const key = `${target.name}\0${who(principal)}`;
    let pending = this.inflight.get(key);
    if (pending === undefined) {
      pending = fresh(this, target, principal, key).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }

  rejected(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined, token: string | undefined): void {
    const key = `${target.name}\0${who(principal)}`;
    // Only the token in use now: a refused older one was replaced already.
    if (token !== undefined && token === this.lastToken.get(key) && this.stale.size < 10_000) this.stale.add(key);
  }

  async insufficientScope(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined, challenge: string): Promise<GatewayError | undefined> {
    if (challengeParam(challenge, 'error') !== 'insufficient_scope') return undefined;
    const named = (challengeParam(challenge, 'scope') ?? '').split(' ').filter((s) => /^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/.test(s)).slice(0, 32);
    if (named.length === 0) return undefined;
    this.log.info({ target: target.name, principal: who(principal), scopes: named }, 'the upstream wants more scopes: asking for consent');
    return consentError(target, await consentUrl(this, target, principal, named), { reason: 'insufficient_scope', requiredScopes: named });
  }

  peek(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined): string | undefined {
    return this.lastToken.get(`${target.name}\0${who(principal)}`);
  }

  consentUrl(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined, extraScopes?: readonly string[]): Promise<Flow> {
    return consentUrl(this, target, principal, extraScopes);
  }

  async redeem(query: URLSearchParams): Promise<{ principal: string; target: string; elicitationId: string }> {
    const { vault, now } = this;
    const state = query.get('state') ?? '';
    const flow = state.length > 0 && state.length <= 128 ? await vault.take<PendingFlow>('flow', [state]) : undefined;
    if (flow === undefined) throw new GatewayError('GW_UPSTREAM_AUTH_FAILED', 'This consent link is unknown, used or expired; start again from your client', { reason: 'unknown state' });
    this.consents.forget(flow.principal, flow.target);
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
    this.stale.delete(`${flow.target}\0${flow.principal}`);
    this.log.info({ target: flow.target, principal: flow.principal, upstreamSubject: tokens.subject }, 'connected an upstream account');
    for (const listener of this.listeners) listener(flow.principal, flow.target, flow.elicitationId);
    return { principal: flow.principal, target: flow.target, elicitationId: flow.elicitationId };
  }

  async connections(principal?: string): Promise<ConnectionInfo[]> {
    const all = await this.vault.all<Connection>('conn', 10_000);
    return all
      .filter((c) => principal === undefined || c.principal === principal)
      .map((c) => ({ principal: c.principal, target: c.target, upstreamSubject: c.subject, expiresAt: c.expiresAt, scopes: c.scopes, connectedAt: c.connectedAt }));
  }

  async disconnect(principal: string, target: RemoteTargetConfig): Promise<boolean> {
    const held = await this.vault.take<Connection>('conn', [principal, target.name]);
    this.lastToken.delete(`${target.name}\0${principal}`);
    if (held === undefined) return false;
    if (held.revocationEndpoint !== undefined) {
      if (held.refreshToken !== undefined) await revokeToken(target.name, held.revocationEndpoint, held.client, held.refreshToken, 'refresh_token');
      await revokeToken(target.name, held.revocationEndpoint, held.client, held.accessToken, 'access_token');
    }
    this.log.info({ target: target.name, principal, upstreamSubject: held.subject }, 'disconnected an upstream account');
    return true;
  }

  onConnected(listener: (principal: string, target: string, elicitationId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
