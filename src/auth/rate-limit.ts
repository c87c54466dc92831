/**
 * Rate limits keyed on who calls, not on the session (a client cannot reset them by
 * re-initializing): a token bucket per principal for every JSON-RPC request, checked at the edge
 * before routing, and one per principal, target and the target's own tool name for `tools/call`,
 * checked by the session once the call is routed (so `echo` on `/servers/ev/mcp` and `ev__echo`
 * on an aggregate, over any transport or era, take from one bucket). Each kind keeps at most
 * `maxKeys` buckets, the least recently used going first (a forgotten bucket comes back full,
 * which errs toward the caller, never toward unbounded memory).
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
  /** Throws GW_RATE_LIMITED (with `retryAfterSec`) when one of `messages`' requests is over the principal's limit. */
  check(principal: string, messages: readonly JsonRpcMessage[], now?: number): void;
}

const refuse = (wait: number, onrejected: () => void) => {
  onrejected();
  return new GatewayError('GW_RATE_LIMITED', undefined, { retryAfterSec: Math.ceil(wait / 1000) });
};

/** The per-principal limit; `onrejected`: told of every refusal (the rate-limit metric). */
export function createRequestLimits(config: RateLimitsConfig | undefined, onrejected: () => void = () => undefined): RequestLimits | undefined {
  if (config?.perPrincipal === undefined) return undefined;
  const perPrincipal = createBuckets(config.perPrincipal, config.maxKeys);
  return {
    check(principal, messages, now = Date.now()) {
      let wait = 0;
      for (const m of messages) {
        const method = (m as { method?: unknown }).method;
        if (typeof method !== 'string' || !('id' in m)) continue; // notifications and answers are free
        wait = Math.max(wait, perPrincipal(principal, now));
      }
      if (wait > 0) throw refuse(wait, onrejected);
    },
  };
}

/**
 * The per-tool limit: takes one call of `tool` (the target's own name) on `target` by `principal`,
 * or throws GW_RATE_LIMITED. Undefined when `perTool` is not configured (nothing runs per call).
 */
export function createToolLimits(
  config: RateLimitsConfig | undefined,
  onrejected: () => void = () => undefined,
): ((principal: string, target: string, tool: string, now?: number) => void) | undefined {
  if (config?.perTool === undefined) return undefined;
  const perTool = createBuckets(config.perTool, config.maxKeys);
  return (principal, target, tool, now = Date.now()) => {
    // Unambiguous whatever a token's subject holds: the principal length-prefixed, and a target
    // name (from config) never contains NUL.
    const wait = perTool(`${principal.length}:${principal}${target}\u0000${tool}`, now);
    if (wait > 0) throw refuse(wait, onrejected);
  };
}
