/**
 * A remote JWKS, cached as its server says: the response's `Cache-Control: max-age` (RFC 9111
 * section 5.2.2.1), clamped between a floor and a ceiling. The floor keeps an authorization server
 * that says `max-age=0` (or `no-store`) from costing one fetch per token; the ceiling bounds how
 * long a key the server has withdrawn keeps verifying here. Without a max-age: `DEFAULT_MAX_AGE_SEC`,
 * clamped the same way.
 *
 * A token whose `kid` the cached set lacks (the server rotated its keys) fetches the set again,
 * but at most once per `refetchSec`: tokens with made-up key ids cannot make the gateway hammer
 * the server. A failed fetch keeps the keys already known (they still verify what they verified),
 * and is not tried again within `refetchSec`.
 */
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { getJson, maxAgeOf } from '../transport/http-json.ts';

export interface JwksCacheOptions {
  readonly url: string;
  readonly minCacheSec: number;
  readonly maxCacheSec: number;
  readonly refetchSec: number;
  /** The clock (ms); tests move it. */
  readonly now?: () => number;
  /** Where the fetch goes (default: transport/http-json.ts); tests may count. */
  readonly fetchSet?: (url: string) => Promise<{ keys: JSONWebKeySet; maxAgeSec: number | undefined }>;
}

/** What jose's own remote set assumes without a header: 10 minutes. */
export const DEFAULT_MAX_AGE_SEC = 600;
/** A JWKS larger than this is not one (a few dozen keys take a few kB). */
const MAX_JWKS_BYTES = 256 * 1024;

/** The default fetch: a 200 with a `keys` list, at most MAX_JWKS_BYTES, within 5 s. */
export async function fetchJwks(url: string): Promise<{ keys: JSONWebKeySet; maxAgeSec: number | undefined }> {
  const res = await getJson(url, { timeoutMs: 5_000, maxBytes: MAX_JWKS_BYTES });
  const body = res.body as { keys?: unknown } | undefined;
  if (res.status !== 200 || body === undefined || !Array.isArray(body.keys)) throw new errors.JOSEError(`JWKS fetch answered ${res.status} without a key set`);
  return { keys: body as JSONWebKeySet, maxAgeSec: maxAgeOf(res.cacheControl) };
}

export interface JwksCache {
  /** For jose's jwtVerify. */
  readonly getKey: JWTVerifyGetKey;
  /** When the cached set is due to be fetched again (ms; 0 before the first fetch). */
  readonly expiresAt: number;
}

export function createJwksCache(options: JwksCacheOptions): JwksCache {
  const now = options.now ?? Date.now;
  const fetchSet = options.fetchSet ?? fetchJwks;
  let local: JWTVerifyGetKey | undefined;
  let expiresAt = 0;
  let lastAttempt = -Infinity;
  let inflight: Promise<void> | undefined;

  const clamp = (sec: number) => Math.min(options.maxCacheSec, Math.max(options.minCacheSec, sec));

  const refresh = (): Promise<void> => {
    inflight ??= (async () => {
      lastAttempt = now();
      try {
        const { keys, maxAgeSec } = await fetchSet(options.url);
        local = createLocalJWKSet(keys);
        expiresAt = now() + clamp(maxAgeSec ?? DEFAULT_MAX_AGE_SEC) * 1_000;
      } catch (err) {
        if (local === undefined) throw err;
        // Keep the known keys; the next try waits out the refetch interval.
        expiresAt = lastAttempt + options.refetchSec * 1_000;
      }
    })().finally(() => (inflight = undefined));
    return inflight;
  };

  const mayRefetch = () => now() - lastAttempt >= options.refetchSec * 1_000;

  const getKey: JWTVerifyGetKey = async (header, token) => {
    if (inflight !== undefined) await inflight.catch(() => undefined);
    else if ((local === undefined || now() >= expiresAt) && mayRefetch()) await refresh();
    // No keys yet and the last fetch failed within the refetch interval.
    if (local === undefined) throw new errors.JWKSNoMatchingKey('no JWKS fetched yet');
    try {
      return await local(header, token);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey) || (inflight === undefined && !mayRefetch())) throw err;
      await (inflight ?? refresh());
      return local(header, token);
    }
  };
  return {
    getKey,
    get expiresAt() {
      return expiresAt;
    },
  };
}
