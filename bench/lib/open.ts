/**
 * Session open: how long a new client waits for its session. One session at a time: open it
 * (initialize + notifications/initialized, the time measured), check it with one call, close it
 * (DELETE), then wait `paceMs` before the next: clients that come now and then, not a burst (a
 * burst larger than the spares finds them taken and waits for a spawn, as without them).
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Connector } from './clients.ts';
import { percentile, withTimeout } from './load.ts';

export interface OpenOptions {
  sessions: number;
  /** Pause after each session is closed, before the next opens (ms). */
  paceMs: number;
  /** Pause after the system started, before the first open (ms): time for spares to start. */
  settleMs: number;
}

export interface OpenResult {
  opened: number;
  errors: number;
  firstError: string | undefined;
  /** Initialize round trip plus the initialized notification's (ms). */
  p50: number;
  p90: number;
  max: number;
}

let nextId = 3_000_000_000;

export async function runOpen(connector: Connector, options: OpenOptions): Promise<OpenResult> {
  const times: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  await sleep(options.settleMs);
  for (let i = 0; i < options.sessions && errors < 10; i++) {
    try {
      const t0 = performance.now();
      const session = await withTimeout(connector.open(), 30_000, 'a session did not open within 30 s');
      times.push(performance.now() - t0);
      const id = nextId++;
      await withTimeout(session.call(id, `open-${id}`, 0), 30_000, 'a call did not answer within 30 s');
      await session.close();
    } catch (err) {
      errors++;
      firstError ??= (err as Error).message;
    }
    await sleep(options.paceMs);
  }
  const sorted = Float64Array.from(times).sort();
  return { opened: times.length, errors, firstError, p50: percentile(sorted, 50), p90: percentile(sorted, 90), max: sorted.length > 0 ? (sorted[sorted.length - 1] as number) : NaN };
}
