/**
 * The soak test (`npm run soak`; not part of `npm test`): the gateway as its own process
 * (`src/cli.ts`), session open/close cycles and echo calls over Streamable HTTP, WebSocket and
 * legacy HTTP+SSE at the same time, with upstream crashes mixed into the cycles (a tool that exits
 * its child). Samples the gateway's RSS, open file descriptors and child processes every
 * `--sample-sec`; at the end, with every client gone, no child and no descriptor may remain
 * beyond those of the idle gateway. Reports the RSS slope (least squares after the warm-up).
 *
 *   npm run soak -- [--cycles 10000] [--calls 1000000] [--minutes 120] [--concurrency 4]
 *                   [--cycle-workers 2] [--crash-every 20] [--sample-sec 10]
 *                   [--json out.json] [--svg out.svg]
 *
 * Every loop stops at its count or at `--minutes`, whichever comes first; loopback only. Exit code
 * 1 when a child or descriptor leaked or an answer was wrong. Figures: docs/soak.md.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderLineChart } from './lib/line-chart.ts';
import { createOpener, WIRES, type Answer, type SoakSession } from './lib/soak-clients.ts';
import { descendants, fdCount, linearFit, rssKiB } from './lib/soak-proc.ts';

const { values: argv } = parseArgs({
  options: {
    cycles: { type: 'string', default: '10000' },
    calls: { type: 'string', default: '1000000' },
    minutes: { type: 'string', default: '120' },
    concurrency: { type: 'string', default: '4' },
    'cycle-workers': { type: 'string', default: '2' },
    'crash-every': { type: 'string', default: '20' },
    'sample-sec': { type: 'string', default: '10' },
    json: { type: 'string' },
    svg: { type: 'string' },
  },
});
const num = (name: keyof typeof argv) => {
  const n = Number(argv[name]);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name}: expected a number, got ${String(argv[name])}`);
  return n;
};
const CYCLES = num('cycles');
const CALLS = num('calls');
const DEADLINE = Date.now() + num('minutes') * 60_000;
const CONCURRENCY = Math.max(1, num('concurrency'));
const CYCLE_WORKERS = Math.max(1, num('cycle-workers'));
const CRASH_EVERY = Math.max(1, num('crash-every'));
const SAMPLE_MS = Math.max(1, num('sample-sec')) * 1000;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ECHO = join(ROOT, 'bench', 'echo-server.mjs');
const MISBEHAVING = join(ROOT, 'test', 'fixtures', 'misbehaving-server.mjs');

interface Gateway {
  url: URL;
  pid: number;
  stop(): Promise<number | null>;
  logLines: { warn: number; error: number; last: string[] };
}

/** A free loopback port (the gateway logs its address only at level info, which the soak keeps off). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startGateway(): Promise<Gateway> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-soak-'));
  const file = join(dir, 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      gateway: { host: '127.0.0.1', port, logging: { level: 'warn' } },
      mcpServers: { echo: { command: process.execPath, args: [ECHO] }, crashy: { command: process.execPath, args: [MISBEHAVING, 'normal'] } },
    }),
  );
  const child = spawn(process.execPath, [join(ROOT, 'src', 'cli.ts'), '--config', file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const logLines = { warn: 0, error: 0, last: [] as string[] };
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let buffer = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      const level = Number(/"level":(\d+)/.exec(line)?.[1] ?? 0);
      if (level >= 50) logLines.error++;
      else if (level >= 40) logLines.warn++;
      if (level >= 40) logLines.last = [...logLines.last.slice(-4), line.slice(0, 400)];
    }
  });
  const url = new URL(`http://127.0.0.1:${port}/`);
  // Ready when /healthz answers (bounded: 30 s).
  for (let tries = 0; ; tries++) {
    if (child.exitCode !== null) throw new Error(`gateway exited (${child.exitCode})`);
    const ok = await fetch(new URL('/healthz', url)).then((r) => r.ok, () => false);
    if (ok) break;
    if (tries > 300) throw new Error('gateway did not answer /healthz within 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: child.pid as number,
    logLines,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

const stats = { cycles: 0, crashes: 0, calls: 0, failures: new Map<string, number>(), first: [] as string[] };
function fail(where: string, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  const key = `${where}: ${message.replace(/\d+/g, 'N').slice(0, 120)}`;
  stats.failures.set(key, (stats.failures.get(key) ?? 0) + 1);
  if (stats.first.length < 10) stats.first.push(`${where}: ${message.slice(0, 300)}`);
}

const echoCall = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"s${id}"}}}`;
const crashCall = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"crash","arguments":{"code":7}}}`;
const echoed = (answer: Answer) => answer.result?.content?.[0]?.text;
let nextId = 1;
const live = () => Date.now() < DEADLINE;

async function cycleLoop(opener: ReturnType<typeof createOpener>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < CYCLES && live()) {
      const i = next++;
      const wire = WIRES[i % WIRES.length] ?? 'http';
      const crash = i % CRASH_EVERY === CRASH_EVERY - 1;
      let session: SoakSession | undefined;
      try {
        session = await opener.open(wire, crash ? 'crashy' : 'echo');
        const id = nextId++;
        if (crash) {
          const answer = await session.ask(id, crashCall(id));
          if (answer.error?.data?.code !== 'GW_UPSTREAM_EXITED') throw new Error(`crash answered ${JSON.stringify(answer).slice(0, 200)}`);
          stats.crashes++;
        } else {
          const answer = await session.ask(id, echoCall(id));
          if (echoed(answer) !== `s${id}`) throw new Error(`wrong echo ${JSON.stringify(answer).slice(0, 200)}`);
        }
        stats.cycles++;
      } catch (err) {
        fail(`cycle ${wire}${crash ? ' crash' : ''}`, err);
      } finally {
        await session?.close().catch((err: unknown) => fail(`close ${wire}`, err));
      }
    }
  };
  await Promise.all(Array.from({ length: CYCLE_WORKERS }, worker));
}

async function callLoop(opener: ReturnType<typeof createOpener>): Promise<void> {
  const caller = async (wire: (typeof WIRES)[number]) => {
    let session: SoakSession | undefined;
    while (stats.calls < CALLS && live()) {
      try {
        session ??= await opener.open(wire, 'echo');
        const id = nextId++;
        const answer = await session.ask(id, echoCall(id));
        if (echoed(answer) !== `s${id}`) throw new Error(`wrong echo ${JSON.stringify(answer).slice(0, 200)}`);
        stats.calls++;
      } catch (err) {
        fail(`call ${wire}`, err);
        await session?.close().catch(() => undefined);
        session = undefined;
        await new Promise((r) => setTimeout(r, 100)); // a broken gateway must not turn this into a busy loop
      }
    }
    await session?.close().catch((err: unknown) => fail(`close ${wire}`, err));
  };
  await Promise.all(WIRES.flatMap((wire) => Array.from({ length: CONCURRENCY }, () => caller(wire))));
}

interface Sample {
  minutes: number;
  rssMiB: number;
  fds: number;
  children: number;
  cycles: number;
  calls: number;
}

const gateway = await startGateway();
const started = Date.now();
const samples: Sample[] = [];
const sample = (): Sample => {
  const s = {
    minutes: (Date.now() - started) / 60_000,
    rssMiB: rssKiB(gateway.pid) / 1024,
    fds: fdCount(gateway.pid),
    children: descendants(gateway.pid).length,
    cycles: stats.cycles,
    calls: stats.calls,
  };
  samples.push(s);
  process.stderr.write(`[soak] ${s.minutes.toFixed(1)} min: rss ${s.rssMiB.toFixed(1)} MiB, fds ${s.fds}, children ${s.children}, cycles ${s.cycles}, calls ${s.calls}, crashes ${stats.crashes}, failures ${[...stats.failures.values()].reduce((a, b) => a + b, 0)}\n`);
  return s;
};
const baseline = sample();
const sampler = setInterval(sample, SAMPLE_MS);
const opener = createOpener(gateway.url, CONCURRENCY * WIRES.length + CYCLE_WORKERS * 2);
await Promise.all([cycleLoop(opener), callLoop(opener)]);
const loopsEnded = Date.now();
clearInterval(sampler);
await opener.close();

// Sessions end and children exit in the background: give them up to 15 s to settle.
let after = sample();
for (let waited = 0; waited < 15_000 && (after.children > 0 || after.fds > baseline.fds); waited += 500) {
  await new Promise((r) => setTimeout(r, 500));
  after = { ...after, fds: fdCount(gateway.pid), children: descendants(gateway.pid).length };
}
samples.push({ ...after, minutes: (Date.now() - started) / 60_000, rssMiB: rssKiB(gateway.pid) / 1024 });
const exitCode = await gateway.stop();

// RSS slope after the warm-up (the first fifth of the run: heap and arenas growing to their working size).
const warm = samples.filter((s) => s.minutes >= samples.at(-1)!.minutes / 5 && s.minutes <= (loopsEnded - started) / 60_000);
const fit = linearFit(warm.map((s) => [s.minutes, s.rssMiB] as const));
const seconds = (loopsEnded - started) / 1000;
const summary = {
  durationMin: +(seconds / 60).toFixed(1),
  cycles: stats.cycles,
  crashes: stats.crashes,
  calls: stats.calls,
  callsPerSec: Math.round(stats.calls / seconds),
  cyclesPerSec: +(stats.cycles / seconds).toFixed(1),
  rssMiB: { baseline: +baseline.rssMiB.toFixed(1), max: +Math.max(...samples.map((s) => s.rssMiB)).toFixed(1), end: +samples.at(-1)!.rssMiB.toFixed(1) },
  rssSlopeMiBPerHour: +(fit.slope * 60).toFixed(2),
  fds: { baseline: baseline.fds, max: Math.max(...samples.map((s) => s.fds)), end: after.fds, leaked: Math.max(0, after.fds - baseline.fds) },
  children: { max: Math.max(...samples.map((s) => s.children)), leaked: after.children },
  failures: Object.fromEntries(stats.failures),
  firstFailures: stats.first,
  gatewayLog: gateway.logLines,
  gatewayExitCode: exitCode,
  options: { cycles: CYCLES, calls: CALLS, minutes: num('minutes'), concurrency: CONCURRENCY, cycleWorkers: CYCLE_WORKERS, crashEvery: CRASH_EVERY, sampleSec: SAMPLE_MS / 1000 },
};
console.log(JSON.stringify(summary, null, 2));
if (argv.json !== undefined) writeFileSync(argv.json, JSON.stringify({ summary, samples }, null, 2));
if (argv.svg !== undefined) {
  const first = warm[0]?.minutes ?? 0;
  const last = warm.at(-1)?.minutes ?? 0;
  writeFileSync(
    argv.svg,
    renderLineChart(
      [
        { title: 'Gateway RSS', unit: 'MiB', points: samples.map((s) => [s.minutes, s.rssMiB] as const), trend: [first, fit.at(first), last, fit.at(last)] },
        { title: 'Gateway open file descriptors', unit: 'count', points: samples.map((s) => [s.minutes, s.fds] as const) },
        { title: 'Child processes of the gateway', unit: 'count', points: samples.map((s) => [s.minutes, s.children] as const) },
      ],
      'minutes',
      `npm run soak: ${summary.cycles} session cycles (${summary.crashes} upstream crashes), ${summary.calls} calls over Streamable HTTP, WebSocket, legacy SSE; dashed: RSS fit after warm-up, ${summary.rssSlopeMiBPerHour} MiB/h`,
    ),
  );
}
const leaked = summary.children.leaked > 0 || summary.fds.leaked > 0;
process.exit(leaked || stats.failures.size > 0 || exitCode !== 0 ? 1 : 0);
