/**
 * Where an upstream's request timeouts are counted: where they happen.
 *
 * - A per-session child (stdio, not shared) is its session's own: its timeouts say nothing about
 *   another session's child, so they never reach the target's circuit breaker. When its own
 *   requests keep timing out (`circuitBreaker.timeouts` within `windowMs`), that one child is
 *   ended; the supervisor's exit path then restarts it or ends the session, as `onExit` says.
 * - A shared child or a remote target is the same upstream for every session: its timeouts are
 *   evidence about the target, told to the breaker with the caller (which wants several callers).
 */
import { GatewayError } from '../errors/gateway-error.ts';
import type { TargetConfig } from '../config/types.ts';
import type { CircuitBreaker } from './circuit-breaker.ts';
import { DEFAULT_BREAKER_POLICY } from './circuit-breaker.ts';
import { createTimeoutWindow } from './timeout-window.ts';

export interface ConnectionHealth {
  /**
   * A request on the current connection timed out: `caller` sent it, `probe` it was the breaker's
   * probe. Returns the reason to end that connection with, when its own child is hung.
   */
  timedOut(caller: string, probe: boolean): GatewayError | undefined;
  /** A fresh connection: its count starts at zero. */
  reset(): void;
}

/** True when the target's sessions each have a child of their own. */
export const ownsChild = (target: TargetConfig): boolean => target.type === 'stdio' && target.upstream?.mode !== 'shared';

export function createConnectionHealth(target: TargetConfig, breaker: CircuitBreaker | undefined, now: () => number = Date.now): ConnectionHealth {
  if (!ownsChild(target)) {
    return {
      timedOut(caller, probe) {
        breaker?.timedOut(caller, probe);
        return undefined;
      },
      reset() {},
    };
  }
  const { timeouts, windowMs } = target.circuitBreaker ?? DEFAULT_BREAKER_POLICY;
  const window = createTimeoutWindow(timeouts, windowMs);
  return {
    timedOut() {
      if (!window.add('', now())) return undefined;
      const reason = `${timeouts} requests timed out within ${windowMs} ms`;
      return new GatewayError('GW_UPSTREAM_TIMEOUT', `Upstream "${target.name}" stopped answering: ${reason}; its child was ended`, { target: target.name, reason });
    },
    reset: () => window.clear(),
  };
}
