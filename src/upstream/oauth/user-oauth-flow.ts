/**
 * The per-user OAuth client's state (user-oauth.ts) and what a request and a consent do with it:
 * the caller's fresh token (refreshed near expiry or after a refusal), a consent URL (authorization
 * code + PKCE S256, `resource` = the upstream, a single-use `state` naming the pending consent),
 * the GW_UPSTREAM_AUTH_REQUIRED error that carries it. The vault's record types live here too, so
 * that this file and user-oauth.ts do not import each other (user-oauth.ts re-exports them).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { RemoteTargetConfig } from '../../config/types.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { Logger } from '../../log/logger.ts';
import type { Principal } from '../caller.ts';
import { discover, type Discovered } from './discovery.ts';
import { CALLBACK_PATH, clientFor } from './registration.ts';
import { refreshTokens, TokenEndpointError, type ClientCredentials, type TokenSet } from './token-endpoint.ts';
import type { Vault } from './vault.ts';
import type { createConsents, Flow } from './consents.ts';

export type Consents = ReturnType<typeof createConsents>;

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

/** A consent under way, in the vault under its `state`. */
export interface PendingFlow {
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

/** The client's state, shared by its API (user-oauth.ts) and the functions here. */
export interface OAuthState {
  readonly vault: Vault;
  readonly now: () => number;
  readonly log: Logger;
  readonly baseUrl: () => string;
  readonly clientName: string;
  readonly consentTtlSec: number;
  readonly consents: Consents;
  /** What discovery found per target URL, for 10 minutes (bounded by the number of targets). */
  readonly discovered: Map<string, { at: number; value: Promise<Discovered> }>;
  readonly stale: Set<string>;
  readonly lastToken: Map<string, string>;
}

export const who = (principal: Pick<Principal, 'id'> | undefined) => principal?.id ?? 'anonymous';
const b64 = (bytes: Buffer) => bytes.toString('base64url');

function discoveryOf(st: OAuthState, target: RemoteTargetConfig): Promise<Discovered> {
  const known = st.discovered.get(target.url);
  if (known !== undefined && st.now() - known.at < 600_000) return known.value;
  const value = discover(target.name, target.url, target.oauth?.scopes);
  value.catch(() => st.discovered.delete(target.url));
  st.discovered.set(target.url, { at: st.now(), value });
  return value;
}

function remember(st: OAuthState, key: string, token: string): string {
  st.lastToken.delete(key);
  st.lastToken.set(key, token);
  if (st.lastToken.size > 10_000) st.lastToken.delete(st.lastToken.keys().next().value as string);
  return token;
}

const configuredClient = (target: RemoteTargetConfig): ClientCredentials | undefined =>
  target.oauth?.clientId === undefined ? undefined : { clientId: target.oauth.clientId, clientSecret: target.oauth.clientSecret };

export async function consentUrl(st: OAuthState, target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined, extraScopes: readonly string[] = []): Promise<Flow> {
  const { vault, consents } = st;
  const reused = extraScopes.length === 0 ? consents.pending(who(principal), target.name) : undefined;
  if (reused !== undefined) return reused;
  const found = await discoveryOf(st, target);
  const base = st.baseUrl();
  const client = await clientFor(vault, { target: target.name, configured: configuredClient(target), server: found.server, base, clientName: st.clientName });
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
  await vault.put('flow', [state], pending, st.consentTtlSec);
  const flow = { url: url.href, elicitationId, expiresAt: st.now() + st.consentTtlSec * 1_000 };
  if (extraScopes.length === 0) consents.remember(who(principal), target.name, flow);
  return flow;
}

export function consentError(target: RemoteTargetConfig, flow: Flow, extra: Record<string, unknown> = {}): GatewayError {
  return new GatewayError('GW_UPSTREAM_AUTH_REQUIRED', `Connect your account at "${target.name}": open ${flow.url}`, {
    target: target.name,
    ...extra,
    authorizationUrl: flow.url,
    // MCP 2025-11-25 URLElicitationRequiredError: what a client that takes URL elicitation shows.
    elicitations: [{ mode: 'url', elicitationId: flow.elicitationId, url: flow.url, message: `Connect your account at "${target.name}"` }],
  });
}

async function authRequired(st: OAuthState, target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined): Promise<never> {
  throw consentError(target, await consentUrl(st, target, principal));
}

/** The caller's token at `target`: the vault's, refreshed when near expiry or refused; else a consent. */
export async function fresh(st: OAuthState, target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined, key: string): Promise<string> {
  const { vault, now, log } = st;
  const parts = [who(principal), target.name];
  const held = await vault.get<Connection>('conn', parts);
  if (held === undefined) return authRequired(st, target, principal);
  const refused = st.stale.delete(key);
  const expiring = held.expiresAt !== undefined && now() >= held.expiresAt - REFRESH_MARGIN_MS;
  if (!refused && !expiring) return remember(st, key, held.accessToken);
  if (held.refreshToken === undefined) {
    await vault.delete('conn', parts);
    return authRequired(st, target, principal);
  }
  try {
    const next = await refreshTokens(target.name, held.tokenEndpoint, held.client, held.refreshToken, held.resource, now());
    await vault.put('conn', parts, { ...held, ...next, subject: next.subject ?? held.subject });
    log.info({ target: target.name, principal: who(principal), upstreamSubject: next.subject ?? held.subject }, 'refreshed an upstream token');
    return remember(st, key, next.accessToken);
  } catch (err) {
    // invalid_grant: the grant is gone (revoked, expired); anything else may pass, the token may still work.
    if (err instanceof TokenEndpointError && err.oauthError !== 'invalid_grant' && !refused && held.expiresAt !== undefined && now() < held.expiresAt) return remember(st, key, held.accessToken);
    log.warn({ target: target.name, principal: who(principal), err: { code: (err as GatewayError).code, oauthError: (err as TokenEndpointError).oauthError } }, 'refreshing an upstream token failed');
    await vault.delete('conn', parts);
    return authRequired(st, target, principal);
  }
}
