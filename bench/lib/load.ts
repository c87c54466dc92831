/**
 * The load generator: S sessions x C calls in flight for a fixed time after a warm-up, and a ramp
 * that opens sessions up to N and keeps them open. Every answer is checked (clients.ts); a wrong
 * or failed one counts as an error, never as a call.
 */
import { performance } from 'node:perf_hooks';
import type { Connector, McpSession } from './clients.ts';
import { cpuMsOf, usageOf } from './proc.ts';

export interface LoadOptions {
  sessions: number;
  inFlight: number;
  /** Padding of every echo result (0: the bare text). */
  bytes: number;
  warmupMs: number;
  durationMs: number;
  /** Stop after this many measured calls (for smoke tests); default unbounded. */
  maxCalls?: number;
  /** Server-side process roots: the gateway (its children count) and any separate upstream. */
  roots: readonly number[];
  /** The gateway process alone (no children); undefined when the system has none. */
  gatewayPid: number | undefined;
}

export interface LoadResult {
  calls: number;
  errors: number;
  firstError: string | undefined;
  callsPerSecond: number;
  p50: number;
  p90: number;
  p99: number;
  /** CPU ms per 1,000 calls: every server-side process (gateway tree and separate upstreams). */
  serverCpu: number;
  /** CPU ms per 1,000 calls of the gateway process alone (NaN without a gateway). */
  gatewayCpu: number;
}

/** The p-th percentile (nearest rank) of sorted values. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

let nextId = 1;

/** Opens `count` sessions, `parallel` at a time. */
export async function openSessions(connector: Connector, count: number, parallel: number): Promise<McpSession[]> {
  const sessions: McpSession[] = [];
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started++;
      sessions.push(await connector.open());
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
  return sessions;
}

/** S x C for warm-up + duration; latencies and CPU only from the measured part. */
export async function runLoad(connector: Connector, options: LoadOptions): Promise<LoadResult> {
  const { bytes } = options;
  const sessions = await withTimeout(openSessions(connector, options.sessions, 8), 60_000, `${options.sessions} sessions did not open within 60 s`);
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  let errors = 0;
  let firstError: string | undefined;
  let measuring = false;
  let stopping = false;
  const maxCalls = options.maxCalls ?? Infinity;

  const worker = async (session: McpSession) => {
    while (!stopping) {
      const id = nextId++;
      const text = `echo-${id}`;
      const t0 = performance.now();
      try {
        await session.call(id, text, bytes);
      } catch (err) {
        if (!measuring) throw err; // a broken system fails in the warm-up, loudly
        errors++;
        firstError ??= (err as Error).message;
        if (errors > 1_000) stopping = true;
        continue;
      }
      if (!measuring) continue;
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = performance.now() - t0;
      if (count >= maxCalls) stopping = true;
    }
  };

  try {
    const workers = sessions.flatMap((s) => Array.from({ length: options.inFlight }, () => worker(s)));
    const all = Promise.all(workers);
    let failed: unknown;
    all.catch((err: unknown) => {
      failed = err;
      stopping = true;
    });
    await raceSleep(all, options.warmupMs);
    if (failed !== undefined) throw failed;
    const gw = options.gatewayPid;
    const gwBefore = gw === undefined ? NaN : cpuMsOf(gw);
    const before = usageOf(options.roots);
    const t0 = performance.now();
    measuring = true;
    await raceSleep(all, options.durationMs);
    measuring = false;
    const seconds = (performance.now() - t0) / 1000;
    const after = usageOf(options.roots);
    const gwAfter = gw === undefined ? NaN : cpuMsOf(gw);
    stopping = true;
    await withTimeout(all, STOP_TIMEOUT_MS, 'calls still unanswered 30 s after the end of the measurement (a hung system)');
    const sorted = latencies.subarray(0, count).sort();
    const perThousand = (ms: number) => (count === 0 ? NaN : (ms * 1000) / count);
    return {
      calls: count,
      errors,
      firstError,
      callsPerSecond: count / seconds,
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      serverCpu: perThousand(after.treeCpuMs - before.treeCpuMs),
      gatewayCpu: perThousand(gwAfter - gwBefore),
    };
  } finally {
    stopping = true;
    await Promise.allSettled(sessions.map((s) => s.close()));
  }
}

/** A call that takes this long after the stop means the system hangs: fail the cell, not the run. */
const STOP_TIMEOUT_MS = 30_000;

/** `work`, or a rejection with `message` after `ms`. */
export function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Resolves after `ms`, or earlier when `work` settles (everything stopped). */
function raceSleep(work: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    work.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });
}
