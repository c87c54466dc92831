/**
 * Bearer JWTs, verified with `jose`: signature against the issuers' keys (a JWKS URL, cached per
 * its max-age within bounds and refetched for an unknown `kid` at most every `jwksRefetchSec`
 * (jwks.ts), or static keys), issuer on the allow-list,
 * audience equal to the resource URL the client called (RFC 8707) or a configured extra, `exp`
 * and `nbf` with bounded skew, asymmetric algorithms only (`none` and HMAC never), and no ID
 * tokens (OpenID Connect's `nonce`, `at_hash`, `c_hash` mark one).
 *
 * A client sends the same token with every request until it refreshes it: a verified token is
 * remembered (with the resource it was verified for) until it expires, so the signature check runs
 * once per token, not per call (an ES256 verification costs about 0.15 ms, two thirds of the
 * gateway's whole budget for a call). At most `CACHE_ENTRIES`, the oldest going first.
 */
import { createLocalJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { JwtConfig } from '../config/types.ts';
import { pickClaims } from './claims.ts';
import { createJwksCache } from './jwks.ts';
import type { Principal } from '../upstream/caller.ts';
import { AuthFailure } from './principal.ts';

/** The principal, and until when (ms) the token stays valid. */
export interface Verified {
  readonly principal: Principal;
  /** When the token stops being valid (ms): its `exp` plus the allowed skew, as jose judges it. */
  readonly until: number;
}

export type JwtCheck = (token: string, resource: string) => Promise<Verified>;

const ID_TOKEN_CLAIMS = ['nonce', 'at_hash', 'c_hash'];
const CACHE_ENTRIES = 10_000;

function keySet(config: JwtConfig): JWTVerifyGetKey {
  if (config.jwksUrl !== undefined) {
    return createJwksCache({ url: config.jwksUrl, minCacheSec: config.jwksMinCacheSec, maxCacheSec: config.jwksMaxCacheSec, refetchSec: config.jwksRefetchSec }).getKey;
  }
  return createLocalJWKSet({ keys: (config.keys ?? []) as never });
}

/** The token's scopes: `scope` (space-separated, RFC 9068) or `scp` (a list, common elsewhere). */
function scopesOf(payload: Record<string, unknown>): Set<string> {
  if (typeof payload.scope === 'string') return new Set(payload.scope.split(' ').filter(Boolean));
  if (Array.isArray(payload.scp)) return new Set(payload.scp.filter((s): s is string => typeof s === 'string'));
  return new Set();
}

function reasonOf(err: unknown): string {
  if (err instanceof errors.JOSEError) return `${err.code}: ${err.message}`;
  return 'token could not be verified';
}

/** `claimNames`: the token claims the policy names, kept on the principal (claims.ts). */
export function createJwtCheck(config: JwtConfig, claimNames: readonly string[] = []): JwtCheck {
  const keys = keySet(config);
  const options = {
    issuer: [...config.issuers],
    algorithms: [...config.algorithms],
    clockTolerance: config.clockSkewSec,
    requiredClaims: ['exp', 'sub'],
  };
  const cache = new Map<string, Verified>();
  const verify = async (token: string, resource: string): Promise<Verified> => {
    let verified;
    try {
      verified = await jwtVerify(token, keys, { ...options, audience: [resource, ...config.audiences] });
    } catch (err) {
      throw new AuthFailure(401, reasonOf(err));
    }
    const { payload, protectedHeader } = verified;
    if (protectedHeader.typ?.toLowerCase() === 'id_token' || ID_TOKEN_CLAIMS.some((c) => c in payload)) {
      throw new AuthFailure(401, 'an ID token is not an access token');
    }
    const principal: Principal = Object.freeze({ id: `${String(payload.iss)}#${String(payload.sub)}`, kind: 'jwt', subject: String(payload.sub), scopes: scopesOf(payload), ...pickClaims(payload, claimNames) });
    return { principal, until: ((payload.exp as number) + config.clockSkewSec) * 1000 };
  };
  return async (token, resource) => {
    const key = `${resource}\n${token}`;
    const known = cache.get(key);
    if (known !== undefined) {
      if (Date.now() < known.until) return known;
      cache.delete(key);
    }
    const verified = await verify(token, resource);
    if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, verified);
    return verified;
  };
}
