/**
 * Rate limits keyed on who calls, not on the session (a client cannot reset them by
 * re-initializing): a token bucket per principal for every JSON-RPC request, and one per principal
 * and tool name for `tools/call`. Each kind keeps at most `maxKeys` buckets, the least recently used
 * going first (a forgotten bucket comes back full, which errs toward the caller, never toward
 * unbounded memory).
 */
import type { BucketConfig, RateLimitsConfig } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';

interface Bucket {
  tokens: number;
  at: number;
}

/** Takes one token for `key`: 0 when granted, else the milliseconds until one is there. */
type Take = (key: string, now: number) => number;

function createBuckets({ perSecond, burst }: BucketConfig, maxKeys: number): Take {
  const buckets = new Map<string, Bucket>();
  return (key, now) => {
    let bucket = buckets.get(key);
    if (bucket === undefined) {
      bucket = { tokens: burst, at: now };
      if (buckets.size >= maxKeys) buckets.delete(buckets.keys().next().value as string);
    } else {
      buckets.delete(key); // re-inserted below: Map order is the recency order
      bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
      bucket.at = now;
    }
    buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - bucket.tokens) / perSecond) * 1000);
  };
}

export interface RequestLimits {
  /** Throws GW_RATE_LIMITED (with `retryAfterSec`) when one of `messages`' requests is over a limit. */
  check(principal: string, messages: readonly JsonRpcMessage[], now?: number): void;
}

/** `onrejected`: told of every refusal (the rate-limit metric). */
export function createRequestLimits(config: RateLimitsConfig | undefined, onrejected: () => void = () => undefined): RequestLimits | undefined {
  if (config === undefined || (config.perPrincipal === undefined && config.perTool === undefined)) return undefined;
  const perPrincipal = config.perPrincipal && createBuckets(config.perPrincipal, config.maxKeys);
  const perTool = config.perTool && createBuckets(config.perTool, config.maxKeys);
  return {
    check(principal, messages, now = Date.now()) {
      let wait = 0;
      for (const m of messages) {
        const method = (m as { method?: unknown }).method;
        if (typeof method !== 'string' || !('id' in m)) continue; // notifications and answers are free
        wait = Math.max(wait, perPrincipal?.(principal, now) ?? 0);
        const name = method === 'tools/call' ? (m as { params?: { name?: unknown } }).params?.name : undefined;
        if (perTool !== undefined && typeof name === 'string') wait = Math.max(wait, perTool(`${principal}\n${name}`, now));
      }
      if (wait > 0) onrejected();
      if (wait > 0) throw new GatewayError('GW_RATE_LIMITED', undefined, { retryAfterSec: Math.ceil(wait / 1000) });
    },
  };
}
