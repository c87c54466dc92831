/**
 * A target's recent traffic for the status page: calls and errors per second over the last
 * minute, and the last `samples` latencies for p50/p99. Fixed-size typed arrays: recording is a
 * few index operations and allocates nothing.
 */

export const WINDOW_SECONDS = 60;

export interface TrafficWindow {
  readonly second: Float64Array;
  readonly calls: Uint32Array;
  readonly errors: Uint32Array;
  readonly latencies: Float64Array;
  latencyCount: number;
}

export function createWindow(samples = 512): TrafficWindow {
  return {
    second: new Float64Array(WINDOW_SECONDS),
    calls: new Uint32Array(WINDOW_SECONDS),
    errors: new Uint32Array(WINDOW_SECONDS),
    latencies: new Float64Array(samples),
    latencyCount: 0,
  };
}

export function record(w: TrafficWindow, nowMs: number, failed: boolean, latencyMs: number): void {
  const sec = Math.floor(nowMs / 1000);
  const i = sec % WINDOW_SECONDS;
  if (w.second[i] !== sec) {
    w.second[i] = sec;
    w.calls[i] = 0;
    w.errors[i] = 0;
  }
  w.calls[i] = (w.calls[i] as number) + 1;
  if (failed) w.errors[i] = (w.errors[i] as number) + 1;
  w.latencies[w.latencyCount % w.latencies.length] = latencyMs;
  w.latencyCount++;
}

export interface WindowSummary {
  /** Calls per second over the last minute (or since the first call, if sooner). */
  readonly callsPerSec: number;
  /** Errors / calls over the last minute; 0 without calls. */
  readonly errorRate: number;
  /** Milliseconds, over the last samples; undefined without any. */
  readonly p50: number | undefined;
  readonly p99: number | undefined;
}

export function summarize(w: TrafficWindow, nowMs: number): WindowSummary {
  const now = Math.floor(nowMs / 1000);
  let calls = 0;
  let errors = 0;
  let oldest = now;
  for (let i = 0; i < WINDOW_SECONDS; i++) {
    const sec = w.second[i] as number;
    if (sec > now - WINDOW_SECONDS && sec <= now && (w.calls[i] as number) > 0) {
      calls += w.calls[i] as number;
      errors += w.errors[i] as number;
      oldest = Math.min(oldest, sec);
    }
  }
  const span = Math.max(1, now - oldest + 1);
  const n = Math.min(w.latencyCount, w.latencies.length);
  const sorted = w.latencies.slice(0, n).sort();
  const pick = (q: number) => (n === 0 ? undefined : (sorted[Math.min(n - 1, Math.floor(q * n))] as number));
  return { callsPerSec: calls / span, errorRate: calls === 0 ? 0 : errors / calls, p50: pick(0.5), p99: pick(0.99) };
}
