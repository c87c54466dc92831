/**
 * A fixed-bucket histogram kept as plain numbers, read when Prometheus scrapes: observing is a
 * short loop over the bounds and three additions, with nothing allocated. prom-client's own
 * Histogram builds a label object and a hash string on every observation.
 */

/** Seconds: 100 us to 10 s, about three per decade (gateway-added time is sub-millisecond, tool calls take seconds). */
export const LATENCY_BUCKETS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface Histogram {
  readonly bounds: readonly number[];
  /** Per bound, the observations <= it (not cumulative; the exposition adds them up). */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

export function createHistogram(bounds: readonly number[] = LATENCY_BUCKETS): Histogram {
  return { bounds, counts: new Float64Array(bounds.length), sum: 0, count: 0 };
}

export function observe(h: Histogram, value: number): void {
  const { bounds } = h;
  for (let i = 0; i < bounds.length; i++) {
    if (value <= (bounds[i] as number)) {
      h.counts[i] = (h.counts[i] as number) + 1;
      break;
    }
  }
  h.sum += value;
  h.count += 1;
}
