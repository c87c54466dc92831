/**
 * Start-up to steady state (issue 34, item 5): how long `src/cli.ts` takes from its spawn to the
 * `switchboard listening` line, how long the first session and the first call then take, and the
 * call latency (1 session, 1 in flight) per 250 ms window after `listening`, against the last
 * second's (the steady state). Prints a table; writes nothing.
 *
 *   npx node bench/startup.ts [--runs 5] [--seconds 4]
 *   BENCH_CLI=/other/checkout/src/cli.ts npx node bench/startup.ts   # another build
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { httpConnector } from './lib/clients.ts';
import { killAll, startSystem } from './lib/systems.ts';
import { percentile } from './lib/load.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, seconds: { type: 'string', default: '4' } } });
const runs = Number(values.runs);
const seconds = Number(values.seconds);
const WINDOW_MS = 250;

interface Run {
  listening: number;
  open: number;
  first: number;
  /** p50 per window after listening (ms). */
  windows: number[];
  /** When the window p50 first came within 1.2x of the last second's, ms after listening. */
  steady: number;
}

const p50 = (xs: number[]) => percentile(Float64Array.from(xs).sort(), 50);

async function once(): Promise<Run> {
  const t0 = performance.now();
  const system = await startSystem('switchboard', { sharedChildren: 2, nodeFlags: [] });
  const listening = performance.now();
  const connector = httpConnector(system.url as string, 1);
  try {
    const session = await connector.open();
    const opened = performance.now();
    const times: Array<[number, number]> = [];
    let id = 1;
    while (performance.now() - listening < seconds * 1000) {
      const start = performance.now();
      await session.call(id, `s-${id}`, 0);
      id++;
      times.push([start - listening, performance.now() - start]);
    }
    const windows: number[] = [];
    for (let w = 0; w * WINDOW_MS < seconds * 1000; w++) {
      const inWindow = times.filter(([at]) => at >= w * WINDOW_MS && at < (w + 1) * WINDOW_MS).map(([, d]) => d);
      windows.push(inWindow.length > 0 ? p50(inWindow) : NaN);
    }
    const last = p50(times.filter(([at]) => at >= (seconds - 1) * 1000).map(([, d]) => d));
    const at = windows.findIndex((m, w) => windows.slice(w).every((x) => !(x > 1.2 * last)));
    await session.close();
    return { listening: listening - t0, open: opened - listening, first: times[0]?.[1] ?? NaN, windows, steady: at * WINDOW_MS };
  } finally {
    await connector.close();
    await system.stop();
  }
}

const results: Run[] = [];
try {
  for (let r = 0; r < runs; r++) {
    const run = await once();
    results.push(run);
    process.stderr.write(`run ${r + 1}: listening ${run.listening.toFixed(0)} ms, open ${run.open.toFixed(1)} ms, first call ${run.first.toFixed(2)} ms, steady from ${run.steady} ms\n`);
  }
} finally {
  killAll();
}
const med = (f: (r: Run) => number) => p50(results.map(f));
const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');
console.log(`Start-up of ${process.env.BENCH_CLI ?? 'src/cli.ts'}, medians of ${runs} runs`);
console.log('| spawn to listening ms | first session open ms | first call ms | steady (window p50 <= 1.2x the last second) from ms after listening |');
console.log('| ---: | ---: | ---: | ---: |');
console.log(`| ${fmt(med((r) => r.listening), 0)} | ${fmt(med((r) => r.open))} | ${fmt(med((r) => r.first), 2)} | ${fmt(med((r) => r.steady), 0)} |`);
console.log(`Call p50 per ${WINDOW_MS} ms window after listening (ms): ${results[0]?.windows.map((_, w) => fmt(med((r) => r.windows[w] ?? NaN), 3)).join(', ')}`);
