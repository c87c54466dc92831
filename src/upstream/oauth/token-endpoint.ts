/**
 * The gateway's requests to an upstream's authorization server on a user's behalf: redeeming an
 * authorization code with its PKCE verifier (OAuth 2.1 section 4.1.3), refreshing (section 4.3),
 * revoking (RFC 7009), every one naming the upstream as the `resource` (RFC 8707) so a token is
 * only ever for that upstream. A confidential client authenticates with `client_secret_basic` (or
 * `client_secret_post` where registration said so), a
 * public one sends its `client_id`. Errors name the OAuth error code (a short token), never the
 * server's description (it may quote a token) and never a token.
 */
import { GatewayError } from '../../errors/gateway-error.ts';
import { postForm } from '../../transport/http-json.ts';

export interface ClientCredentials {
  readonly clientId: string;
  readonly clientSecret?: string | undefined;
  /**
   * How the secret is presented (RFC 7591 `token_endpoint_auth_method`, as registration answered):
   * `client_secret_post` in the form, else `client_secret_basic` (RFC 6749 section 2.3.1's default).
   */
  readonly authMethod?: 'client_secret_post' | 'client_secret_basic' | undefined;
}

export interface TokenSet {
  readonly accessToken: string;
  readonly refreshToken: string | undefined;
  /** Epoch ms; undefined when the server did not say. */
  readonly expiresAt: number | undefined;
  readonly scopes: readonly string[];
  /** The account the token acts for, as the token itself says (a JWT's `sub`); never checked, only named in audit lines. */
  readonly subject: string | undefined;
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

const oauthErrorOf = (body: unknown) => {
  const error = (body as { error?: unknown } | undefined)?.error;
  return typeof error === 'string' && /^[\x20-\x21\x23-\x5B\x5D-\x7E]{1,64}$/.test(error) ? error : undefined;
};

export class TokenEndpointError extends GatewayError {
  readonly oauthError: string | undefined;
  constructor(target: string, reason: string, oauthError: string | undefined) {
    super('GW_UPSTREAM_AUTH_FAILED', `Connecting an account at upstream "${target}" failed: ${reason}`, { target, reason, ...(oauthError === undefined ? {} : { oauthError }) });
    this.oauthError = oauthError;
  }
}

/** A JWT's `sub`, read without verifying (the upstream verifies; this only labels audit lines). */
function subjectOf(token: string): string | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const sub = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown }).sub;
    return typeof sub === 'string' && sub.length <= 256 ? sub : undefined;
  } catch {
    return undefined;
  }
}

async function post(target: string, endpoint: string, client: ClientCredentials, form: URLSearchParams) {
  const headers: Record<string, string> = {};
  if (client.clientSecret === undefined || client.authMethod === 'client_secret_post') form.set('client_id', client.clientId);
  if (client.clientSecret !== undefined && client.authMethod === 'client_secret_post') form.set('client_secret', client.clientSecret);
  else if (client.clientSecret !== undefined) headers.authorization = basic(client.clientId, client.clientSecret);
  try {
    return await postForm(endpoint, form, headers, { timeoutMs: 10_000, maxBytes: 64 * 1024 });
  } catch {
    throw new TokenEndpointError(target, 'the authorization server is unreachable', undefined);
  }
}

/** Asks the token endpoint and reads a token set; `previous` keeps a refresh token the answer does not replace. */
async function tokens(target: string, endpoint: string, client: ClientCredentials, form: URLSearchParams, now: number, previous?: string): Promise<TokenSet> {
  const res = await post(target, endpoint, client, form);
  if (res.status !== 200) throw new TokenEndpointError(target, 'the authorization server refused', oauthErrorOf(res.body));
  const body = res.body as { access_token?: unknown; token_type?: unknown; refresh_token?: unknown; expires_in?: unknown; scope?: unknown } | undefined;
  const token = body?.access_token;
  // It goes into a header: printable ASCII only (RFC 6750 section 2.1).
  if (typeof token !== 'string' || !/^[\x21-\x7E]{1,8192}$/.test(token)) throw new TokenEndpointError(target, 'the token answer holds no usable token', undefined);
  if (typeof body?.token_type !== 'string' || body.token_type.toLowerCase() !== 'bearer') throw new TokenEndpointError(target, 'the token is not a bearer token', undefined);
  const refresh = typeof body.refresh_token === 'string' && /^[\x21-\x7E]{1,8192}$/.test(body.refresh_token) ? body.refresh_token : previous;
  const expires = typeof body.expires_in === 'number' && Number.isFinite(body.expires_in) && body.expires_in > 0 ? now + body.expires_in * 1_000 : undefined;
  const scopes = typeof body.scope === 'string' ? body.scope.split(' ').filter(Boolean) : (form.get('scope') ?? '').split(' ').filter(Boolean);
  return { accessToken: token, refreshToken: refresh, expiresAt: expires, scopes, subject: subjectOf(token) };
}

export interface CodeRedemption {
  readonly target: string;
  readonly tokenEndpoint: string;
  readonly client: ClientCredentials;
  readonly code: string;
  readonly verifier: string;
  readonly redirectUri: string;
  readonly resource: string;
}

export function redeemCode(r: CodeRedemption, now: number): Promise<TokenSet> {
  const form = new URLSearchParams({ grant_type: 'authorization_code', code: r.code, redirect_uri: r.redirectUri, code_verifier: r.verifier, resource: r.resource });
  return tokens(r.target, r.tokenEndpoint, r.client, form, now);
}

export function refreshTokens(target: string, tokenEndpoint: string, client: ClientCredentials, refreshToken: string, resource: string, now: number): Promise<TokenSet> {
  const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, resource });
  return tokens(target, tokenEndpoint, client, form, now, refreshToken);
}

/** RFC 7009: best effort (the vault forgets the tokens whatever the answer). */
export async function revokeToken(target: string, endpoint: string, client: ClientCredentials, token: string, hint: 'access_token' | 'refresh_token'): Promise<boolean> {
  const res = await post(target, endpoint, client, new URLSearchParams({ token, token_type_hint: hint })).catch(() => undefined);
  return res?.status === 200;
}
