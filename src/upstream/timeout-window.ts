/**
 * Request timeouts in a sliding window, and from how many distinct callers: what a target's circuit
 * breaker counts (a shared upstream: several callers must see it hang) and what a supervisor counts
 * of its own per-session child (one caller is enough: the child is that caller's).
 *
 * Bounded whatever the traffic: at most `count` times and `callers` caller keys are kept.
 */
export interface TimeoutWindow {
  /**
   * One more timeout, of `caller` at `at` (ms): true when the window now holds `count` timeouts
   * and at least `callers` distinct callers timed out in it. Then it starts afresh.
   */
  add(caller: string, at: number): boolean;
  /** Forgets everything (the upstream recovered, or a fresh connection). */
  clear(): void;
}

/** `count` 0: never full (the trigger is off). `callers` below 1 counts as 1. */
export function createTimeoutWindow(count: number, windowMs: number, callers = 1): TimeoutWindow {
  const times: number[] = [];
  /** Caller -> its latest timeout; insertion order is oldest first (a caller is re-inserted on each). */
  const latest = new Map<string, number>();
  const needed = Math.max(1, callers);
  return {
    add(caller, at) {
      if (count === 0) return false;
      const since = at - windowMs;
      times.push(at);
      while (times.length > count || (times[0] as number) <= since) times.shift();
      latest.delete(caller);
      latest.set(caller, at);
      for (const [key, when] of latest) {
        if (latest.size <= needed && when > since) break;
        latest.delete(key);
      }
      if (times.length < count || latest.size < needed) return false;
      times.length = 0;
      latest.clear();
      return true;
    },
    clear() {
      times.length = 0;
      latest.clear();
    },
  };
}
