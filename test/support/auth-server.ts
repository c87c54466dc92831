/**
 * A local token issuer for authentication tests: real key pairs (jose), a JWKS served over HTTP
 * that counts its fetches and can be rotated, and a minting function for access tokens (and for
 * every kind of bad token the negative tests need). The full OAuth flow (discovery, registration,
 * PKCE) is beyond it; it is what a resource server sees of an authorization server.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { AuthConfig } from '../../src/config/types.ts';

export interface Issuer {
  readonly issuer: string;
  readonly jwksUrl: string;
  /** Times the JWKS was fetched. */
  readonly fetches: number;
  /** The JWKS response's Cache-Control (unset: none). */
  cacheControl: string | undefined;
  /** Signs an access token; `claims` override the defaults (sub, exp in 5 min, scope). */
  mint(claims: Record<string, unknown>, options?: { kid?: string; alg?: string; typ?: string; key?: CryptoKey }): Promise<string>;
  /** A key pair with `kid`, signing only until published. */
  addKey(kid: string): Promise<CryptoKey>;
  /** Publishes a key added with `addKey` in the JWKS. */
  publish(kid: string): void;
  close(): Promise<void>;
}

export async function startIssuer(): Promise<Issuer> {
  const keys = new Map<string, { privateKey: CryptoKey; jwk: JWK; published: boolean }>();
  let fetches = 0;
  const server = createServer((req, res) => {
    if (req.url !== '/jwks') return void res.writeHead(404).end();
    fetches++;
    const published = [...keys.values()].filter((k) => k.published).map((k) => k.jwk);
    const headers = { 'content-type': 'application/json', ...(api.cacheControl !== undefined ? { 'cache-control': api.cacheControl } : {}) };
    res.writeHead(200, headers).end(JSON.stringify({ keys: published }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const addKey = async (kid: string) => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    keys.set(kid, { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }, published: false });
    return privateKey;
  };
  await addKey('k1');
  keys.get('k1')!.published = true;

  const api: Issuer = {
    cacheControl: undefined,
    issuer: origin,
    jwksUrl: `${origin}/jwks`,
    get fetches() {
      return fetches;
    },
    async mint(claims, options = {}) {
      const kid = options.kid ?? 'k1';
      const key = options.key ?? keys.get(kid)?.privateKey ?? (await addKey(kid));
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ sub: 'alice', scope: 'mcp', iat: now, exp: now + 300, iss: origin, ...claims })
        .setProtectedHeader({ alg: options.alg ?? 'ES256', kid, typ: options.typ ?? 'at+jwt' })
        .sign(key);
    },
    addKey,
    publish(kid) {
      const key = keys.get(kid);
      if (key) key.published = true;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return api;
}

/** `alg: none`: an unsigned token, which no verifier may accept. */
export function unsignedToken(claims: Record<string, unknown>): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}

/** `gateway.auth` with API keys only, one principal `key:<name>` per entry (no scopes). */
export function keyAuth(keys: Record<string, string>): AuthConfig {
  return {
    anonymous: false,
    publicUrl: undefined,
    apiKeys: Object.entries(keys).map(([name, key]) => ({ name, sha256: createHash('sha256').update(key).digest('hex'), scopes: [] })),
    apiKeyHeader: 'authorization',
    jwt: undefined,
    scopes: [],
    authorizationServers: [],
  };
}

/**
 * `gateway.auth` with JWTs from `issuer` (a test issuer or the oidc-provider authorization server):
 * ES256, its JWKS refetched within a second, `scopes` required of every caller.
 */
export function jwtAuth(issuer: { issuer: string; jwksUrl: string }, scopes: string[] = []): AuthConfig {
  return {
    anonymous: false,
    publicUrl: undefined,
    apiKeys: [],
    apiKeyHeader: 'authorization',
    jwt: { issuers: [issuer.issuer], jwksUrl: issuer.jwksUrl, jwksRefetchSec: 1, jwksMinCacheSec: 60, jwksMaxCacheSec: 3_600, keys: undefined, algorithms: ['ES256'], clockSkewSec: 5, audiences: [] },
    scopes,
    authorizationServers: [issuer.issuer],
  };
}
