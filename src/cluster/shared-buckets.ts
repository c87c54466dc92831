/**
 * Rate-limit buckets shared by the replicas (docs/scaling.md): each take is one Lua script run
 * atomically in Redis (EVALSHA), so N replicas together admit the configured rate, not N times it.
 * The script reads Redis's own clock, so replicas whose clocks disagree still fill a bucket at one
 * pace, and gives every bucket a TTL of the time it takes to fill up: an idle bucket would be full
 * by then anyway, so it vanishes instead of being kept.
 *
 * Redis unreachable (not connected, an error, or slower than `commandTimeoutMs`): `failMode`
 * decides, per take, without waiting for Redis to come back (and for a second after a failed take
 * without asking it). `local` counts on this replica's own buckets (auth/rate-limit.ts keeps them;
 * the cluster may then admit up to N times the rate); `closed` refuses with
 * GW_RATE_LIMIT_UNAVAILABLE. The change is logged once, and so is the return.
 */
import { createHash } from 'node:crypto';
import type { BucketConfig, ClusterConfig } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import type { ClusterRedis } from './redis.ts';

/** A take: 0 when granted, else the milliseconds until a token is there; a rejection refuses outright. */
export type SharedTake = (key: string, now: number) => number | Promise<number>;

/** KEYS[1] the bucket; ARGV rate per second, burst, TTL in ms. Returns the wait in ms (0: granted). */
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
else
  tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
end
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) / rate * 1000)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return wait
`;

const SHA = createHash('sha1').update(SCRIPT).digest('hex');

/** A bucket refills in burst / rate seconds; a second more, so one read just before expiry still finds it. */
const ttlOf = ({ perSecond, burst }: BucketConfig) => Math.ceil((burst / perSecond) * 1000) + 1_000;

/** Keys name no principal (they are hashed) and stay short whatever the principal's length. */
const keyOf = (prefix: string, kind: string, key: string) => `${prefix}rl:${kind}:${createHash('sha256').update(key).digest('base64url')}`;

async function run(redis: ClusterRedis, key: string, rate: number, burst: number, ttl: number): Promise<number> {
  try {
    return Number(await redis.client.evalsha(SHA, 1, key, rate, burst, ttl));
  } catch (err) {
    // A Redis that restarted has forgotten the script: send it whole, once.
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return Number(await redis.client.eval(SCRIPT, 1, key, rate, burst, ttl));
  }
}

/**
 * After a failed take Redis is left alone this long: a stalled Redis (connected, not answering)
 * costs one request per second a wait of `commandTimeoutMs`, not every request.
 */
const HOLD_OFF_MS = 1_000;

/** Whether the shared buckets are in use, and who hears when that changes. */
function createMode(logger: Logger, failMode: 'local' | 'closed') {
  let shared = true;
  let holdUntil = 0;
  return {
    /** Within the hold-off after a failure. */
    holding: (now: number) => now < holdUntil,
    lost(err: unknown, now: number) {
      holdUntil = now + HOLD_OFF_MS;
      if (!shared) return;
      shared = false;
      const reason = err instanceof Error ? err.message : String(err);
      const effect = failMode === 'local' ? 'each replica counts on its own until it is back' : 'rate-limited requests are refused (GW_RATE_LIMIT_UNAVAILABLE) until it is back';
      logger.warn({ failMode, reason }, `shared rate limits unreachable in Redis; ${effect}`);
    },
    back() {
      if (shared) return;
      shared = true;
      logger.info('shared rate limits reachable in Redis again');
    },
  };
}

/**
 * The shared store, ready to hand to auth/rate-limit.ts (its SharedBuckets): per kind of bucket,
 * a take that goes to Redis, with `local` (this replica's own buckets) for failMode `local`.
 */
export function sharedBuckets(redis: ClusterRedis, config: ClusterConfig['redis'], logger: Logger) {
  const mode = createMode(logger.child({ component: 'rate-limits' }), config.failMode);
  const unavailable = () => Promise.reject(new GatewayError('GW_RATE_LIMIT_UNAVAILABLE', undefined, { retryAfterSec: 1 }));
  return (kind: string, bucket: BucketConfig, local: (key: string, now: number) => number): SharedTake => {
    const ttl = ttlOf(bucket);
    const fallback = (key: string, now: number) => (config.failMode === 'local' ? local(key, now) : unavailable());
    return (key, now) => {
      // Not connected: decided at once, no round trip (commands would fail anyway, never queue).
      if (redis.state() !== 'ready') {
        mode.lost(new Error(`Redis ${redis.state()}`), now);
        return fallback(key, now);
      }
      if (mode.holding(now)) return fallback(key, now);
      return run(redis, keyOf(config.keyPrefix, kind, key), bucket.perSecond, bucket.burst, ttl).then(
        (wait) => {
          mode.back();
          return wait;
        },
        (err: unknown) => {
          mode.lost(err, Date.now());
          return fallback(key, now);
        },
      );
    };
  };
}
