/**
 * Exchanged upstream tokens (RFC 8693), one per (target, principal): every session of a principal
 * reuses the token until `MARGIN_SEC` before it expires, and two principals never share one (the
 * principal id is the key; the subject token is only what is exchanged). Concurrent requests for
 * the same key wait on one exchange. Bounded per target by `tokenExchange.maxCachedTokens`: the
 * least recently used token is forgotten first (it is exchanged again when next needed). Failures
 * are not cached: the next request tries again.
 */
import type { RemoteTargetConfig } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import { exchangeToken, type ExchangedToken, type TokenExchangeRequest } from '../transport/token-exchange.ts';
import type { Principal } from './caller.ts';

/** A token is renewed this long before it expires, so no request goes out with one about to lapse. */
export const MARGIN_SEC = 30;
/** Kept this long when the server gives no `expires_in`. */
export const DEFAULT_LIFETIME_SEC = 60;

export interface TokenCache {
  /** The upstream token for `principal` at `target`, exchanging `subjectToken` when none is fresh. */
  tokenFor(target: RemoteTargetConfig, principal: Caller | undefined, subjectToken: string | undefined): Promise<string>;
  /** The token held now for `principal` at `target`, without exchanging or touching its recency (log scrubbing). */
  peek(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined): string | undefined;
  /** The upstream refused `principal`'s token: forget it (the next request exchanges again). */
  forget(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined): void;
  /** Tokens held now, across targets (tests, status). */
  readonly size: number;
  /** Forgets every token (shutdown). */
  clear(): void;
}

/** Who asks for a token: its id (the cache key) and, when known, how it authenticated. */
type Caller = Pick<Principal, 'id'> & Partial<Pick<Principal, 'kind'>>;

const CREDENTIAL_WORDS: Record<Principal['kind'], string> = { 'api-key': 'an API key', anonymous: 'an anonymous caller', jwt: 'this token' };

/**
 * A caller without a verified JWT (an API key, anonymous) has nothing the authorization server can
 * exchange, and an API key must never be sent to it (identity.ts): the caller's error, said as
 * such (not "the server is unavailable"), before anything is sent to the token endpoint or upstream.
 */
function notExchangeable(target: string, principal: Caller | undefined): GatewayError {
  const kind = principal?.kind ?? 'anonymous';
  return new GatewayError(
    'GW_CREDENTIAL_NOT_EXCHANGEABLE',
    `Server "${target}" takes only a token the gateway exchanges for the caller's (RFC 8693), and ${CREDENTIAL_WORDS[kind]} cannot be exchanged: authenticate with a JWT from the gateway's authorization server`,
    { target, credential: kind },
  );
}

interface Entry {
  readonly token: string;
  readonly renewAt: number;
}

export interface TokenCacheOptions {
  readonly logger: Logger;
  /** The exchange itself (default: transport/token-exchange.ts). */
  readonly exchange?: (req: TokenExchangeRequest) => Promise<ExchangedToken>;
  readonly now?: () => number;
}

export function createTokenCache(options: TokenCacheOptions): TokenCache {
  const exchange = options.exchange ?? exchangeToken;
  const now = options.now ?? Date.now;
  const log = options.logger.child({ component: 'token-exchange' });
  /** target name -> principal id -> entry; a Map's order is its LRU order (touched = re-inserted). */
  const byTarget = new Map<string, Map<string, Entry>>();
  /** The settings each target's tokens were exchanged under: a reload that changes them drops the tokens. */
  const settings = new Map<string, { config: unknown; text: string }>();

  /** Same object: same settings (the common case, no work); another object: compare by value. */
  const sameSettings = (target: RemoteTargetConfig): boolean => {
    const known = settings.get(target.name);
    if (known?.config === target.tokenExchange) return true;
    const text = JSON.stringify(target.tokenExchange) + target.url;
    settings.set(target.name, { config: target.tokenExchange, text });
    return known?.text === text;
  };
  const inflight = new Map<string, Promise<string>>();

  const store = (target: RemoteTargetConfig, key: string, entry: Entry) => {
    let entries = byTarget.get(target.name);
    if (entries === undefined) byTarget.set(target.name, (entries = new Map()));
    entries.delete(key);
    while (entries.size >= (target.tokenExchange?.maxCachedTokens ?? 1)) entries.delete(entries.keys().next().value as string);
    entries.set(key, entry);
  };

  const fresh = async (target: RemoteTargetConfig, key: string, subjectToken: string | undefined, principal: Caller | undefined): Promise<string> => {
    const te = target.tokenExchange!;
    if (subjectToken === undefined) throw notExchangeable(target.name, principal);
    try {
      const got = await exchange({ target: target.name, tokenEndpoint: te.tokenEndpoint, clientId: te.clientId, clientSecret: te.clientSecret, subjectToken, audience: te.audience, resource: te.resource, scope: te.scope });
      const lifetime = got.expiresInSec ?? DEFAULT_LIFETIME_SEC;
      // A token shorter-lived than the margin is still used, for half its life.
      const keep = lifetime > 2 * MARGIN_SEC ? lifetime - MARGIN_SEC : lifetime / 2;
      store(target, key, { token: got.accessToken, renewAt: now() + keep * 1_000 });
      log.debug({ target: target.name, principal: key, expiresInSec: got.expiresInSec }, 'exchanged a token for the upstream');
      return got.accessToken;
    } catch (err) {
      if (err instanceof GatewayError) log.warn({ target: target.name, principal: key, err: { code: err.code, ...err.details, ...err.internal } }, 'token exchange failed');
      throw err;
    }
  };

  return {
    tokenFor(target, principal, subjectToken) {
      const key = principal?.id ?? 'anonymous';
      if (!sameSettings(target)) byTarget.delete(target.name);
      const entries = byTarget.get(target.name);
      const known = entries?.get(key);
      if (known !== undefined && now() < known.renewAt) {
        entries!.delete(key);
        entries!.set(key, known);
        return Promise.resolve(known.token);
      }
      const flightKey = `${target.name}\n${key}`;
      let pending = inflight.get(flightKey);
      if (pending === undefined) {
        pending = fresh(target, key, subjectToken, principal).finally(() => inflight.delete(flightKey));
        inflight.set(flightKey, pending);
      }
      return pending;
    },
    peek(target, principal) {
      return byTarget.get(target.name)?.get(principal?.id ?? 'anonymous')?.token;
    },
    forget(target, principal) {
      byTarget.get(target.name)?.delete(principal?.id ?? 'anonymous');
    },
    get size() {
      let n = 0;
      for (const entries of byTarget.values()) n += entries.size;
      return n;
    },
    clear() {
      byTarget.clear();
      settings.clear();
    },
  };
}
