/**
 * The circuit breakers of one gateway (the Runtime owns them), one per target name, so a target's
 * failures are remembered across sessions. A reload that changes a target (any key) gives it a
 * fresh breaker, closed: the fix the operator just made deserves a try. A removed target's breaker
 * goes. Sessions still running on a changed target's old config get a breaker of that config
 * (kept weakly, gone with the last session), so their failures do not count against the new one.
 */
import { isDeepStrictEqual } from 'node:util';
import type { TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { createCircuitBreaker, DEFAULT_BREAKER_POLICY, type CircuitBreaker } from './circuit-breaker.ts';
import { ownsChild } from './connection-health.ts';

export interface Breakers {
  /** The breaker of `target` (the config object a session was built with). */
  of(target: TargetConfig): CircuitBreaker;
  /** The targets of the config now in force: changed ones get a fresh breaker, removed ones lose theirs. */
  retain(targets: Iterable<TargetConfig>): void;
}

interface Entry {
  config: TargetConfig;
  readonly breaker: CircuitBreaker;
}

/** One breaker per target of `targets`, closed; `now` for tests. */
export function createBreakers(targets: Iterable<TargetConfig>, logger: Logger, now?: () => number): Breakers {
  const entries = new Map<string, Entry>();
  const stale = new WeakMap<TargetConfig, CircuitBreaker>();
  const make = (target: TargetConfig) =>
    createCircuitBreaker({
      target: target.name,
      policy: target.circuitBreaker ?? DEFAULT_BREAKER_POLICY,
      sharedFate: !ownsChild(target),
      logger,
      ...(now ? { now } : {}),
    });
  for (const target of targets) entries.set(target.name, { config: target, breaker: make(target) });

  return {
    of(target) {
      const entry = entries.get(target.name);
      // Another object of the same config (a reload that left the target as it was): the same breaker.
      if (entry !== undefined && (entry.config === target || isDeepStrictEqual(entry.config, target))) return entry.breaker;
      // A config the gateway no longer runs (or a hand-built target it never had).
      let breaker = stale.get(target);
      if (breaker === undefined) stale.set(target, (breaker = make(target)));
      return breaker;
    },
    retain(next) {
      const names = new Set<string>();
      for (const target of next) {
        names.add(target.name);
        const entry = entries.get(target.name);
        if (entry !== undefined && isDeepStrictEqual(entry.config, target)) entry.config = target;
        else entries.set(target.name, { config: target, breaker: make(target) });
      }
      for (const name of entries.keys()) if (!names.has(name)) entries.delete(name);
    },
  };
}
