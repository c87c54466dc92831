/**
 * Credential -> principal, for the HTTP edge (http/auth-hook.ts reads the headers and calls this
 * before any body is read). The methods combine: an API key (in `Authorization: Bearer` or its own
 * header), a JWT bearer token, and anonymous access when the config says so explicitly. Then the
 * scopes every request needs.
 */
import type { AuthConfig } from '../config/types.ts';
import { createApiKeyCheck } from './api-keys.ts';
import { createJwtCheck, type Verified } from './jwt.ts';
import { ANONYMOUS } from '../upstream/caller.ts';
import { AuthFailure } from './principal.ts';

export interface Credentials {
  /** The bearer token of `Authorization` (or of a WebSocket subprotocol). */
  readonly bearer: string | undefined;
  /** The value of the API-key header when it is not `Authorization`. */
  readonly apiKey: string | undefined;
}

/** The principal, and until when (ms) the credential stays valid (Infinity for a key). */
export type Authenticate = (credentials: Credentials, resource: string) => Promise<Verified>;

/** A compact JWS: three base64url parts. */
const looksLikeJwt = (value: string) => /^[\w-]+\.[\w-]+\.[\w-]*$/.test(value);

/** `claimNames`: the token claims the policy names (router/policy.ts claimNamesOf). */
export function createAuthenticator(config: AuthConfig, claimNames: readonly string[] = []): Authenticate {
  const apiKey = config.apiKeys.length > 0 ? createApiKeyCheck(config.apiKeys) : undefined;
  const jwt = config.jwt !== undefined ? createJwtCheck(config.jwt, claimNames) : undefined;
  const bearerIsKey = config.apiKeyHeader === 'authorization';

  const identify = async ({ bearer, apiKey: headerKey }: Credentials, resource: string): Promise<Verified> => {
    const presentedKey = bearerIsKey ? bearer : headerKey;
    if (presentedKey !== undefined && apiKey !== undefined) {
      const principal = apiKey(presentedKey);
      if (principal !== undefined) return { principal, until: Infinity };
      if (!bearerIsKey || jwt === undefined || !looksLikeJwt(presentedKey)) throw new AuthFailure(401, 'unknown API key');
    }
    if (bearer !== undefined && jwt !== undefined) return jwt(bearer, resource);
    if (bearer !== undefined || headerKey !== undefined) throw new AuthFailure(401, 'credential of a method not configured');
    if (config.anonymous) return { principal: ANONYMOUS, until: Infinity };
    throw new AuthFailure(401, 'no credential');
  };

  return async (credentials, resource) => {
    const verified = await identify(credentials, resource);
    const { principal } = verified;
    const missing = config.scopes.filter((s) => !principal.scopes.has(s));
    if (missing.length > 0 && principal.kind !== 'anonymous') throw new AuthFailure(403, `missing scopes: ${missing.join(' ')}`, missing);
    return verified;
  };
}
