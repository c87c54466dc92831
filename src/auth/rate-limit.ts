/**
 * Rate limits keyed on who calls, not on the session (a client cannot reset them by
 * re-initializing): a token bucket per principal for every JSON-RPC request, checked at the edge
 * before routing, and one per principal, target and the target's own tool name for `tools/call`,
 * checked by the session once the call is routed (so `echo` on `/servers/ev/mcp` and `ev__echo`
 * on an aggregate, over any transport or era, take from one bucket). Each kind keeps at most
 * `maxKeys` buckets, the least recently used going first (a forgotten bucket comes back full,
 * which errs toward the caller, never toward unbounded memory).
 *
 * With `gateway.cluster` the buckets live in Redis (cluster/shared-buckets.ts), so replicas share
 * them: a take is then a promise, and callers await it only when one is returned. Without it every
 * take is the synchronous in-memory one below and the hot path has no await.
 */
import type { BucketConfig, RateLimitsConfig } from '../config/types.ts';
import { GatewayError, isGatewayError } from '../errors/gateway-error.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Takes one token for `key`: 0 when granted, else the milliseconds until one is there. A shared
 * store answers with a promise, which rejects with a GatewayError when it refuses outright.
 */
export type Take = (key: string, now: number) => number | Promise<number>;

/** The two kinds of bucket; a shared store keeps them apart. */
export type BucketKind = 'principal' | 'tool';

/**
 * Where buckets of one kind live when they are shared (cluster/shared-buckets.ts): given the
 * bucket settings and this process's own buckets (`local`, for when the store is unreachable).
 */
export type SharedBuckets = (kind: BucketKind, bucket: BucketConfig, local: (key: string, now: number) => number) => Take;

/** Told of every refusal, with its GW_* code (the rate-limit metric). */
export type OnRejected = (code: string) => void;

function createBuckets({ perSecond, burst }: BucketConfig, maxKeys: number): (key: string, now: number) => number {
  const buckets = new Map<string, Bucket>();
  return (key: string, now: number): number => {
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
  /**
   * Throws GW_RATE_LIMITED (with `retryAfterSec`) when one of `messages`' requests is over the
   * principal's limit. With shared buckets it may instead return a promise that settles the same
   * way: the caller awaits it only then (undefined: decided, nothing to wait for).
   */
  check(principal: string, messages: readonly JsonRpcMessage[], now?: number): Promise<void> | undefined;
}

const noop: OnRejected = () => undefined;

const refuse = (wait: number, onrejected: OnRejected) => {
  onrejected('GW_RATE_LIMITED');
  return new GatewayError('GW_RATE_LIMITED', undefined, { retryAfterSec: Math.ceil(wait / 1000) });
};

/** The answers of a shared store, the longest wait refused; a store's own refusal passes through. */
async function settle(pending: Array<Promise<number>>, wait: number, onrejected: OnRejected): Promise<void> {
  let waits: number[];
  try {
    waits = await Promise.all(pending);
  } catch (err) {
    onrejected(isGatewayError(err) ? err.code : 'GW_RATE_LIMITED');
    throw err;
  }
  const longest = Math.max(wait, ...waits);
  if (longest > 0) throw refuse(longest, onrejected);
}

/** One token per request in `messages`: undefined when all were decided at once, else the promise of the verdict. */
function takeAll(take: Take, key: string, messages: readonly JsonRpcMessage[], now: number, onrejected: OnRejected): Promise<void> | undefined {
  let wait = 0;
  let pending: Array<Promise<number>> | undefined;
  for (const m of messages) {
    const method = (m as { method?: unknown }).method;
    if (typeof method !== 'string' || !('id' in m)) continue; // notifications and answers are free
    const taken = take(key, now);
    if (typeof taken === 'number') wait = Math.max(wait, taken);
    else (pending ??= []).push(taken);
  }
  if (pending !== undefined) return settle(pending, wait, onrejected);
  if (wait > 0) throw refuse(wait, onrejected);
  return undefined;
}

/** Buckets of `kind`: this process's own, or shared through `shared` with them as the fallback. */
function bucketsOf(kind: BucketKind, bucket: BucketConfig, maxKeys: number, shared: SharedBuckets | undefined): Take {
  const local = createBuckets(bucket, maxKeys);
  return shared === undefined ? local : shared(kind, bucket, local);
}

/** The per-principal limit; `onrejected`: told of every refusal (the rate-limit metric); `shared`: the cluster's store. */
export function createRequestLimits(config: RateLimitsConfig | undefined, onrejected: OnRejected = noop, shared?: SharedBuckets): RequestLimits | undefined {
  if (config?.perPrincipal === undefined) return undefined;
  const perPrincipal = bucketsOf('principal', config.perPrincipal, config.maxKeys, shared);
  return {
    check: (principal, messages, now = Date.now()) => takeAll(perPrincipal, principal, messages, now, onrejected),
  };
}

/** Takes one call of `tool` on `target` by `principal`: throws GW_RATE_LIMITED, or returns the promise of a shared store's verdict. */
export type ToolLimits = (principal: string, target: string, tool: string, now?: number) => Promise<void> | undefined;

/**
 * The per-tool limit: takes one call of `tool` (the target's own name) on `target` by `principal`.
 * Undefined when `perTool` is not configured (nothing runs per call).
 */
export function createToolLimits(config: RateLimitsConfig | undefined, onrejected: OnRejected = noop, shared?: SharedBuckets): ToolLimits | undefined {
  if (config?.perTool === undefined) return undefined;
  const perTool = bucketsOf('tool', config.perTool, config.maxKeys, shared);
  return (principal, target, tool, now = Date.now()) => {
    // Unambiguous whatever a token's subject holds: the principal length-prefixed, and a target
    // name (from config) never contains NUL.
    const taken = perTool(`${principal.length}:${principal}${target}\u0000${tool}`, now);
    if (typeof taken !== 'number') return settle([taken], 0, onrejected);
    if (taken > 0) throw refuse(taken, onrejected);
    return undefined;
  };
}
