/**
 * A per-second budget for log lines a peer can cause (child stderr, garbage on stdout), so that a
 * chatty or broken upstream cannot flood the gateway's log. What is over budget is counted and
 * reported as one summary line when the next second starts (or when the owner flushes).
 */

export interface LogThrottle {
  /** True when one more line may be logged now; otherwise the line is counted as suppressed. */
  take(): boolean;
  /** Lines suppressed since the last summary, resetting the count (0 when none). */
  drainSuppressed(): number;
}

/**
 * @param perSecond lines allowed per one-second window; 0 suppresses everything.
 * @param now clock, injectable for tests.
 */
export function createLogThrottle(perSecond: number, now: () => number = Date.now): LogThrottle {
  let windowStart = -Infinity;
  let used = 0;
  let suppressed = 0;
  return {
    take() {
      const t = now();
      if (t - windowStart >= 1000) {
        windowStart = t;
        used = 0;
      }
      if (used < perSecond) {
        used++;
        return true;
      }
      suppressed++;
      return false;
    },
    drainSuppressed() {
      const n = suppressed;
      suppressed = 0;
      return n;
    },
  };
}
