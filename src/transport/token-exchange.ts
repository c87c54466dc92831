/**
 * OAuth 2.0 Token Exchange (RFC 8693) at an authorization server's token endpoint: the caller's
 * access token (the subject token) for one meant for an upstream (`audience` / `resource`,
 * RFC 8707). The gateway authenticates as a confidential client with `client_secret_basic`
 * (RFC 6749 section 2.3.1). One POST, bounded by transport/http-json.ts.
 *
 * Failures are GW_TOKEN_EXCHANGE_FAILED with a short `reason`; the server's OAuth error code goes
 * to `internal` (the log) but not its `error_description`, which may quote the refused token; no
 * token or secret is ever put in an error.
 */
import { GatewayError, correlated } from '../errors/gateway-error.ts';
import { postForm } from './http-json.ts';

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

export interface TokenExchangeRequest {
  /** The target's name, for errors. */
  readonly target: string;
  readonly tokenEndpoint: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly subjectToken: string;
  readonly audience?: string | undefined;
  readonly resource?: string | undefined;
  readonly scope?: string | undefined;
}

export interface ExchangedToken {
  readonly accessToken: string;
  /** `expires_in` (s); undefined when the server did not say. */
  readonly expiresInSec: number | undefined;
}

/** RFC 6749 section 2.3.1: id and secret are form-urlencoded before they are joined and base64-encoded. */
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

function failure(target: string, reason: string, extra: Record<string, unknown> = {}, internal?: Record<string, unknown>): GatewayError {
  return new GatewayError('GW_TOKEN_EXCHANGE_FAILED', `Token exchange for upstream "${target}" failed: ${reason}`, correlated(target, { reason, ...extra }), internal === undefined ? undefined : { internal });
}

/** An OAuth error code is a short ASCII token (RFC 6749 section 5.2); anything else is not quoted. */
const oauthError = (body: unknown) => {
  const error = (body as { error?: unknown } | undefined)?.error;
  return typeof error === 'string' && /^[\x20-\x21\x23-\x5B\x5D-\x7E]{1,64}$/.test(error) ? error : undefined;
};

export async function exchangeToken(req: TokenExchangeRequest): Promise<ExchangedToken> {
  const form = new URLSearchParams({ grant_type: GRANT, subject_token: req.subjectToken, subject_token_type: ACCESS_TOKEN, requested_token_type: ACCESS_TOKEN });
  if (req.audience !== undefined) form.set('audience', req.audience);
  if (req.resource !== undefined) form.set('resource', req.resource);
  if (req.scope !== undefined) form.set('scope', req.scope);
  let res;
  try {
    res = await postForm(req.tokenEndpoint, form, { authorization: basic(req.clientId, req.clientSecret) }, { timeoutMs: 5_000, maxBytes: 64 * 1024 });
  } catch (err) {
    throw failure(req.target, 'unreachable', {}, { cause: (err as { code?: unknown }).code ?? (err as Error).name });
  }
  if (res.status !== 200) {
    // Only the error code is logged: a server's error_description may quote the token it refused.
    throw failure(req.target, 'refused', { status: res.status }, { oauthError: oauthError(res.body) });
  }
  const body = res.body as { access_token?: unknown; token_type?: unknown; expires_in?: unknown } | undefined;
  const token = body?.access_token;
  // The token goes into a header: printable ASCII only, as any bearer token (RFC 6750 section 2.1).
  if (typeof token !== 'string' || !/^[\x21-\x7E]{1,8192}$/.test(token)) throw failure(req.target, 'bad response');
  if (typeof body?.token_type === 'string' && body.token_type.toLowerCase() !== 'bearer') throw failure(req.target, 'bad response', {}, { tokenType: body.token_type.slice(0, 32) });
  const expires = body?.expires_in;
  return { accessToken: token, expiresInSec: typeof expires === 'number' && Number.isFinite(expires) && expires > 0 ? expires : undefined };
}
