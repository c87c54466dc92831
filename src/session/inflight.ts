/**
 * Caps on requests in flight, per session and per gateway (`gateway.limits.maxInflightPerSession`,
 * `maxInflight`). A request over either is refused at once with GW_OVERLOADED; nothing waits in a
 * queue, so a burst costs the gateway no memory beyond the caps, and the client is told when to
 * come back (`Retry-After`).
 *
 * What counts: every request in a session's in-flight map, from the moment it is admitted until its
 * answer (or error, or cancel) is delivered, whether it is forwarded or the gateway answers it
 * itself: an aggregate list fans out to every member and costs more than one call. `initialize` is
 * not counted (the session caps bound it), nor are notifications and answers to server->client
 * requests (they hold nothing).
 */
import { GatewayError } from '../errors/gateway-error.ts';
import type { GatewayConfig } from '../config/types.ts';

/** The gateway-wide count, shared by every session of one store. */
export interface InflightBudget {
  /** Requests in flight in all sessions now. */
  active: number;
  readonly maxTotal: number;
  readonly maxPerSession: number;
}

/** Defaults when a hand-built config sets none (the loader always does): see the schema. */
const DEFAULT_PER_SESSION = 256;
const DEFAULT_TOTAL = 4_096;

/**
 * One second: a slot frees as soon as any call ends, and the gateway cannot know when that is;
 * a client that waits longer than needed loses little, one that retries at once only adds load.
 */
export const OVERLOAD_RETRY_AFTER_SEC = 1;

/** The gateway's count, empty, with the caps of `limits`. */
export function createInflightBudget(limits: GatewayConfig['limits']): InflightBudget {
  return { active: 0, maxTotal: limits.maxInflight ?? DEFAULT_TOTAL, maxPerSession: limits.maxInflightPerSession ?? DEFAULT_PER_SESSION };
}

/** Throws GW_OVERLOADED when `adding` more requests would pass a cap (`session`: the session's count now). */
export function checkInflight(budget: InflightBudget, session: number, adding: number): void {
  const perSession = session + adding > budget.maxPerSession;
  if (!perSession && budget.active + adding <= budget.maxTotal) return;
  const limit = perSession ? budget.maxPerSession : budget.maxTotal;
  const kind = perSession ? 'session' : 'gateway';
  throw new GatewayError('GW_OVERLOADED', `Too many requests in flight (${kind} limit ${limit}); retry after ${OVERLOAD_RETRY_AFTER_SEC} s`, {
    kind,
    limit,
    retryAfterSec: OVERLOAD_RETRY_AFTER_SEC,
  });
}
