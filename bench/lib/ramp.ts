/**
 * The ramp: open sessions up to N (each opened with initialize + notifications/initialized and
 * checked with one call), keep them all open, then call once more on every one of them. Reports
 * the setup rate and the gateway's resident memory per open session.
 */
import { performance } from 'node:perf_hooks';
import type { Connector, McpSession } from './clients.ts';
import { percentile, withTimeout } from './load.ts';
import { rssKiBOf, usageOf } from './proc.ts';

export interface RampOptions {
  sessions: number;
  /** Sessions being opened at once. */
  parallel: number;
  roots: readonly number[];
  /** The process whose memory is "gateway-side" (the gateway alone; the server for direct-http). */
  memoryPid: number;
}

export interface RampResult {
  opened: number;
  errors: number;
  firstError: string | undefined;
  /** Sessions opened (and checked) per second. */
  setupPerSecond: number;
  /** Growth of `memoryPid`'s RSS per open session, KiB. */
  rssPerSessionKiB: number;
  /** RSS of every server-side process with all sessions open, MiB. */
  treeRssMiB: number;
  /** Server-side processes with all sessions open. */
  processes: number;
  /** Latency of one call on each open session, 64 at a time (ms). */
  p50: number;
  p99: number;
}

let nextId = 2_000_000_000;

export async function runRamp(connector: Connector, options: RampOptions): Promise<RampResult> {
  const sessions: McpSession[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const fail = (err: unknown) => {
    errors++;
    firstError ??= (err as Error).message;
  };
  const rss0 = rssKiBOf(options.memoryPid);
  let started = 0;
  const t0 = performance.now();
  const opener = async () => {
    while (started < options.sessions && errors < 50) {
      started++;
      try {
        const session = await withTimeout(connector.open(), 30_000, 'a session did not open within 30 s');
        sessions.push(session);
        const id = nextId++;
        await withTimeout(session.call(id, `ramp-${id}`, 0), 30_000, 'a call did not answer within 30 s');
      } catch (err) {
        fail(err);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.parallel }, opener));
    const seconds = (performance.now() - t0) / 1000;
    const rss1 = rssKiBOf(options.memoryPid);
    const tree = usageOf(options.roots);
    const latencies = new Float64Array(sessions.length);
    let next = 0;
    let done = 0;
    const caller = async () => {
      while (next < sessions.length) {
        const session = sessions[next++] as McpSession;
        const id = nextId++;
        const c0 = performance.now();
        try {
          await withTimeout(session.call(id, `again-${id}`, 0), 30_000, 'a call did not answer within 30 s');
          latencies[done++] = performance.now() - c0;
        } catch (err) {
          fail(err);
        }
      }
    };
    await Promise.all(Array.from({ length: 64 }, caller));
    const sorted = latencies.subarray(0, done).sort();
    return {
      opened: sessions.length,
      errors,
      firstError,
      setupPerSecond: sessions.length / seconds,
      rssPerSessionKiB: sessions.length === 0 ? NaN : (rss1 - rss0) / sessions.length,
      treeRssMiB: tree.treeRssKiB / 1024,
      processes: tree.processes,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
    };
  } finally {
    let i = 0;
    const closer = async () => {
      while (i < sessions.length) await (sessions[i++] as McpSession).close().catch(() => undefined);
    };
    await Promise.all(Array.from({ length: 32 }, closer));
  }
}
