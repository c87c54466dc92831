/**
 * The console's sign-in: OpenID Connect authorization code with PKCE (RFC 7636, S256) against the
 * issuer of gateway.auth (OpenID Connect Discovery 1.0: `<issuer>/.well-known/openid-configuration`).
 * The access token is asked for the console's own URL as its resource (RFC 8707, `<origin>/admin`)
 * and then verified by the gateway's own authenticator, exactly as a bearer on the admin API would
 * be: the principal, its scopes and claims come from there, never from this module. The ID token is
 * checked too (signature by the issuer's keys, `iss`, `aud`, `nonce`).
 *
 * Bounded: discovery and the token request time out after FETCH_MS; a failed discovery is tried
 * again at the next sign-in, a good one kept for the process.
 */
import { createHash } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify } from 'jose';

const FETCH_MS = 10_000;

interface Metadata {
  readonly issuer: string;
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
  readonly keys: ReturnType<typeof createRemoteJWKSet>;
}

export interface OidcClientSettings {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string | undefined;
  /** Scopes asked for besides `openid`. */
  readonly scopes: readonly string[];
}

export interface OidcClient {
  /** Where to send the browser; `resource` is the console's URL, `redirectUri` its callback. */
  authorizationUrl(args: { state: string; nonce: string; verifier: string; redirectUri: string; resource: string }): Promise<string>;
  /** The access token for `code`, once the ID token checked out. Throws with a reason for the log. */
  redeem(args: { code: string; verifier: string; nonce: string; redirectUri: string; resource: string }): Promise<string>;
}

const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

async function getJson(url: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
  const res = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(FETCH_MS) });
  const body: unknown = await res.json().catch(() => undefined);
  if (!res.ok || typeof body !== 'object' || body === null) throw new Error(`${url} answered ${res.status}`);
  return body as Record<string, unknown>;
}

async function discover(issuer: string): Promise<Metadata> {
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  const doc = await getJson(url);
  // The document must be the issuer's own (Discovery 1.0, section 4.3).
  if (doc.issuer !== issuer) throw new Error(`discovery names issuer ${String(doc.issuer)}, not ${issuer}`);
  const { authorization_endpoint: authorize, token_endpoint: token, jwks_uri: jwks } = doc;
  if (typeof authorize !== 'string' || typeof token !== 'string' || typeof jwks !== 'string') throw new Error('discovery lacks authorization_endpoint, token_endpoint or jwks_uri');
  return { issuer, authorizationEndpoint: authorize, tokenEndpoint: token, keys: createRemoteJWKSet(new URL(jwks), { timeoutDuration: FETCH_MS }) };
}

export function createOidcClient(settings: OidcClientSettings): OidcClient {
  let metadata: Promise<Metadata> | undefined;
  const meta = () => {
    metadata ??= discover(settings.issuer).catch((err: unknown) => {
      metadata = undefined;
      throw err;
    });
    return metadata;
  };
  return {
    async authorizationUrl({ state, nonce, verifier, redirectUri, resource }) {
      const url = new URL((await meta()).authorizationEndpoint);
      const params = {
        response_type: 'code',
        client_id: settings.clientId,
        redirect_uri: redirectUri,
        scope: ['openid', ...settings.scopes].join(' '),
        state,
        nonce,
        code_challenge: challengeOf(verifier),
        code_challenge_method: 'S256',
        resource,
      };
      for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
      return url.href;
    },
    async redeem({ code, verifier, nonce, redirectUri, resource }) {
      const m = await meta();
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
      const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier, resource });
      if (settings.clientSecret === undefined) form.set('client_id', settings.clientId);
      else headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(settings.clientId)}:${encodeURIComponent(settings.clientSecret)}`).toString('base64')}`;
      const tokens = await getJson(m.tokenEndpoint, { method: 'POST', headers, body: form });
      const { access_token: access, id_token: id } = tokens;
      if (typeof access !== 'string' || typeof id !== 'string') throw new Error('the token endpoint gave no access_token or id_token');
      const { payload } = await jwtVerify(id, m.keys, { issuer: m.issuer, audience: settings.clientId });
      if (payload.nonce !== nonce) throw new Error('the ID token carries another nonce');
      return access;
    },
  };
}
