/**
 * Round-trip overhead of the gateway: the same tools/call echo loop against
 *
 *   direct-stdio  the echo server spawned here and spoken to in NDJSON over its pipes (the floor);
 *   gateway       `node src/cli.ts --port 0 -- node bench/echo-server.mjs` in its own process,
 *                 driven over HTTP/1.1 keep-alive with an undici Pool.
 *
 * Both systems run in ONE invocation and alternate over several rounds (the order flips every
 * round), so drift on a noisy machine hits both alike. Each round starts the system fresh, warms it
 * up, then measures a sequential phase (1 session, 1 call in flight) and a concurrent phase
 * (1 session, 16 calls in flight). Every answer is checked: id and echoed text.
 *
 * CPU time comes from /proc/<pid>/stat (utime + stime) for the gateway and the upstream, and from
 * process.cpuUsage() for this client process.
 *
 * Usage: node bench/overhead.ts [--rounds N] [--sequential N] [--concurrent N] [--in-flight N]
 *                               [--warmup N] [--no-write] [--cpu-prof DIR]
 * `npm run bench:overhead` runs it with the defaults and rewrites the results section of
 * docs/benchmarks.md (between the overhead:begin/end markers); --no-write only prints.
 * --cpu-prof DIR runs the gateway under `node --cpu-prof` (one profile per round, in DIR) and
 * prints its top functions by self time at the end; the CPU figures then include the profiler.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { machineFacts } from './lib/machine.ts';
import { formatTop, readSelfTimes } from './lib/profile.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ECHO_SERVER = fileURLToPath(new URL('./echo-server.mjs', import.meta.url));
const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const DOC = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url));
const BEGIN = '<!-- overhead:begin (written by bench/overhead.ts) -->';
const END = '<!-- overhead:end -->';
const PROTOCOL_VERSION = '2025-11-25';
/** Whatever happens, the whole run stops after this long (children included). */
const WATCHDOG_MS = 180_000;
/** One call that takes longer than this means something is broken, not slow. */
const CALL_TIMEOUT_MS = 10_000;

const { values: argv } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    sequential: { type: 'string', default: '5000' },
    concurrent: { type: 'string', default: '20000' },
    'in-flight': { type: 'string', default: '16' },
    warmup: { type: 'string', default: '1000' },
    'no-write': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
  },
});

function positive(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${text}`);
  return n;
}

const settings = {
  rounds: positive('rounds', argv.rounds),
  sequential: positive('sequential', argv.sequential),
  concurrent: positive('concurrent', argv.concurrent),
  inFlight: positive('in-flight', argv['in-flight']),
  warmup: positive('warmup', argv.warmup),
};

// ---------------------------------------------------------------------------------------------
// Process bookkeeping: everything spawned is tracked so that no exit path leaves it running.

const spawned = new Set<ChildProcess>();
const strayPids = new Set<number>();

function track(child: ChildProcess): ChildProcess {
  spawned.add(child);
  child.once('exit', () => spawned.delete(child));
  return child;
}

function killEverythingNow(): void {
  for (const child of spawned) child.kill('SIGKILL');
  for (const pid of strayPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
process.on('exit', killEverythingNow);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping every child\n`);
    process.exit(130);
  });
}
const watchdog = setTimeout(() => {
  process.stderr.write(`bench: still running after ${WATCHDOG_MS / 1000} s; giving up\n`);
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// CPU time from /proc.

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime and stime of a process, in ms (resolution 1000 / CLK_TCK ms). */
function cpuOf(pid: number): { user: number; sys: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: (Number(fields[11]) * 1000) / CLK_TCK, sys: (Number(fields[12]) * 1000) / CLK_TCK };
}

const cpuMsOf = (pid: number) => {
  const { user, sys } = cpuOf(pid);
  return user + sys;
};

function clientCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Children of `ppid`, found by scanning /proc (no /proc/<pid>/task/<tid>/children here). */
function childrenOf(ppid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === ppid) out.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The two systems under test.

interface System {
  readonly name: SystemName;
  /** The gateway process, when there is one. */
  readonly gatewayPid: number | undefined;
  readonly upstreamPid: number;
  /** One tools/call echo; resolves once the answer has been read and checked. */
  call(id: number, text: string): Promise<void>;
  stop(): Promise<void>;
}

type SystemName = 'direct-stdio' | 'gateway';
const SYSTEMS: SystemName[] = ['direct-stdio', 'gateway'];

const echoRequest = (id: number, text: string) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text } } });

const initializeRequest = (id: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'bench-overhead', version: '1' } },
  });

interface Answer {
  id?: unknown;
  result?: { content?: Array<{ text?: string }>; protocolVersion?: string };
  error?: unknown;
}

function checkEcho(answer: Answer, id: number, text: string, system: string): void {
  if (answer.id !== id) throw new Error(`${system}: answer id ${JSON.stringify(answer.id)}, expected ${id}`);
  const got = answer.result?.content?.[0]?.text;
  if (got !== text) throw new Error(`${system}: id ${id} echoed ${JSON.stringify(got)} (error ${JSON.stringify(answer.error)}), expected ${JSON.stringify(text)}`);
}

/** The echo server on our own pipes: NDJSON out, NDJSON in, answers matched by id. */
async function startDirect(): Promise<System> {
  const child = track(spawn(process.execPath, [ECHO_SERVER], { stdio: ['pipe', 'pipe', 'inherit'] }));
  const pid = child.pid;
  if (pid === undefined) throw new Error('direct-stdio: spawn failed');
  const stdin = child.stdin!;
  const pending = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();
  let buffer = '';
  let failure: Error | undefined;
  const failAll = (error: Error) => {
    failure ??= error;
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  };
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    buffer += chunk;
    let start = 0;
    let nl: number;
    while ((nl = buffer.indexOf('\n', start)) !== -1) {
      const answer = JSON.parse(buffer.slice(start, nl)) as Answer;
      start = nl + 1;
      const waiter = typeof answer.id === 'number' ? pending.get(answer.id) : undefined;
      if (waiter === undefined) {
        failAll(new Error(`direct-stdio: unexpected message ${JSON.stringify(answer)}`));
        continue;
      }
      pending.delete(answer.id as number);
      waiter.resolve(answer);
    }
    buffer = buffer.slice(start);
  });
  child.once('exit', (code, signal) => failAll(new Error(`direct-stdio: echo server exited (${code ?? signal})`)));

  const ask = (id: number, line: string): Promise<Answer> =>
    new Promise((resolve, reject) => {
      if (failure) return reject(failure);
      pending.set(id, { resolve, reject });
      stdin.write(line + '\n');
    });

  const init = await ask(0, initializeRequest(0));
  if (init.result?.protocolVersion === undefined) throw new Error(`direct-stdio: initialize failed: ${JSON.stringify(init)}`);
  stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');

  return {
    name: 'direct-stdio',
    gatewayPid: undefined,
    upstreamPid: pid,
    async call(id, text) {
      checkEcho(await ask(id, echoRequest(id, text)), id, text, 'direct-stdio');
    },
    async stop() {
      stdin.end();
      if (!(await waitExit(child, 5_000))) {
        process.stderr.write('bench: echo server did not exit after stdin closed; SIGKILL\n');
        child.kill('SIGKILL');
        await waitExit(child, 5_000);
      }
    },
  };
}

/** The CLI in quick mode, in its own process; the URL is read from its start-up log line. */
async function startGateway(cpuProfDir: string | undefined): Promise<System> {
  const nodeFlags = cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`];
  const child = track(
    spawn(process.execPath, [...nodeFlags, CLI, '--host', '127.0.0.1', '--port', '0', '--log-level', 'info', '--', process.execPath, ECHO_SERVER], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error('gateway: spawn failed');

  // Log lines: the first with `endpoints` gives the URL; warnings and errors are kept for the report.
  const complaints: string[] = [];
  let stderrText = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => void (stderrText += chunk));
  const endpoint = await new Promise<string>((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`gateway: no endpoint line within 15 s; stderr: ${stderrText}`)), 15_000);
    child.once('exit', (code) => reject(new Error(`gateway exited during start (${code}): ${stderrText}`)));
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) !== -1) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        let entry: { level?: number; endpoints?: string[] };
        try {
          entry = JSON.parse(line) as typeof entry;
        } catch {
          complaints.push(line);
          continue;
        }
        if ((entry.level ?? 0) >= 40) complaints.push(line);
        if (Array.isArray(entry.endpoints) && entry.endpoints[0] !== undefined) {
          clearTimeout(timer);
          resolve(entry.endpoints[0]);
        }
      }
    });
  });

  const url = new URL(endpoint);
  const pool = new Pool(url.origin, {
    connections: settings.inFlight,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: CALL_TIMEOUT_MS,
    bodyTimeout: CALL_TIMEOUT_MS,
  });
  const baseHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

  const post = async (body: string, headers: Record<string, string>) => {
    const res = await pool.request({ path: url.pathname, method: 'POST', headers: { ...baseHeaders, ...headers }, body });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text };
  };

  const init = await post(initializeRequest(0), {});
  const sessionId = init.headers['mcp-session-id'];
  if (init.status !== 200 || typeof sessionId !== 'string') throw new Error(`gateway: initialize failed: ${init.status} ${init.text}`);
  const sessionHeaders = { 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL_VERSION };
  const note = await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), sessionHeaders);
  if (note.status !== 202) throw new Error(`gateway: notifications/initialized got ${note.status} ${note.text}`);

  const upstream = childrenOf(pid);
  if (upstream.length !== 1) throw new Error(`gateway: expected one upstream child, found ${JSON.stringify(upstream)}`);
  const upstreamPid = upstream[0] as number;
  strayPids.add(upstreamPid);

  return {
    name: 'gateway',
    gatewayPid: pid,
    upstreamPid,
    async call(id, text) {
      const res = await post(echoRequest(id, text), sessionHeaders);
      if (res.status !== 200) throw new Error(`gateway: id ${id}: HTTP ${res.status} ${res.text}`);
      const type = String(res.headers['content-type'] ?? '');
      let answer: Answer;
      if (type.startsWith('text/event-stream')) {
        // Not expected for a bare echo (no progress, no logs), but legal: take the last event.
        const data = res.text
          .split('\n')
          .filter((l) => l.startsWith('data:') && l.length > 6)
          .map((l) => l.slice(5).trim());
        answer = JSON.parse(data.at(-1) ?? '{}') as Answer;
      } else {
        answer = JSON.parse(res.text) as Answer;
      }
      checkEcho(answer, id, text, 'gateway');
    },
    async stop() {
      await pool.close();
      child.kill('SIGTERM');
      if (!(await waitExit(child, 10_000))) {
        process.stderr.write('bench: gateway did not stop within 10 s of SIGTERM; SIGKILL\n');
        child.kill('SIGKILL');
        await waitExit(child, 5_000);
      }
      if (!(await waitGone(upstreamPid, 5_000))) {
        process.stderr.write(`bench: upstream ${upstreamPid} outlived the gateway; SIGKILL\n`);
        process.kill(upstreamPid, 'SIGKILL');
      }
      strayPids.delete(upstreamPid);
      if (child.exitCode !== 0) complaints.push(`gateway exit code ${child.exitCode} signal ${child.signalCode}; stderr: ${stderrText}`);
      for (const line of complaints) process.stderr.write(`bench: gateway said: ${line}\n`);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Phases and statistics.

type PhaseName = 'sequential' | 'concurrent';

interface PhaseResult {
  callsPerSecond: number;
  p50: number;
  p90: number;
  p99: number;
  /** CPU ms per 1,000 calls; gateway is NaN for direct-stdio. */
  gatewayCpu: number;
  /** Share of the gateway's CPU time spent in the kernel (stime), 0..1. */
  gatewaySys: number;
  upstreamCpu: number;
  clientCpu: number;
}

let nextId = 1;

/** `calls` echo calls with `inFlight` workers; per-call latency in ms. */
async function drive(system: System, calls: number, inFlight: number): Promise<{ seconds: number; latencies: Float64Array }> {
  const latencies = new Float64Array(calls);
  let issued = 0;
  const worker = async () => {
    while (issued < calls) {
      const slot = issued++;
      const id = nextId++;
      const text = `echo-${id}`;
      const t0 = performance.now();
      await system.call(id, text);
      latencies[slot] = performance.now() - t0;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: Math.min(inFlight, calls) }, worker));
  return { seconds: (performance.now() - t0) / 1000, latencies };
}

function percentile(sorted: Float64Array, p: number): number {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

async function measure(system: System, calls: number, inFlight: number): Promise<PhaseResult> {
  const none = { user: NaN, sys: NaN };
  const gw0 = system.gatewayPid === undefined ? none : cpuOf(system.gatewayPid);
  const up0 = cpuMsOf(system.upstreamPid);
  const cl0 = clientCpuMs();
  const { seconds, latencies } = await drive(system, calls, inFlight);
  const gw1 = system.gatewayPid === undefined ? none : cpuOf(system.gatewayPid);
  const up1 = cpuMsOf(system.upstreamPid);
  const cl1 = clientCpuMs();
  latencies.sort();
  const perThousand = (ms: number) => (ms * 1000) / calls;
  return {
    callsPerSecond: calls / seconds,
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
    gatewayCpu: perThousand(gw1.user + gw1.sys - gw0.user - gw0.sys),
    gatewaySys: (gw1.sys - gw0.sys) / (gw1.user + gw1.sys - gw0.user - gw0.sys),
    upstreamCpu: perThousand(up1 - up0),
    clientCpu: perThousand(cl1 - cl0),
  };
}

function median(values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

// ---------------------------------------------------------------------------------------------
// Report.

const fmt = (n: number, digits: number) => (Number.isNaN(n) ? '-' : n.toFixed(digits));
const fmtInt = (n: number) => (Number.isNaN(n) ? '-' : Math.round(n).toLocaleString('en-US'));

function machine(): string[] {
  const facts = machineFacts(ROOT);
  return [
    `- CPU: ${os.availableParallelism()} x ${facts.model} (nproc ${os.availableParallelism()}); kernel ${os.release()}`,
    `- Node ${process.version}, undici Pool (HTTP/1.1 keep-alive, ${settings.inFlight} connections)`,
    `- Gateway: ${facts.source}, log level info, default limits`,
    `- Load average at start: ${facts.load}`,
  ];
}

function render(results: Map<string, PhaseResult[]>, date: string, machineLines: string[], elapsed: number): string {
  machineLines = [...machineLines, `- Load average at the end: ${os.loadavg().map((n) => n.toFixed(2)).join(' ')} (other work shares this machine)`];
  const key = (s: SystemName, p: PhaseName) => `${s}/${p}`;
  const med = (s: SystemName, p: PhaseName, f: keyof PhaseResult) => median((results.get(key(s, p)) ?? []).map((r) => r[f]));
  const lines: string[] = [];
  lines.push(`Run of ${date}, ${fmt(elapsed, 0)} s in all. ${settings.rounds} rounds; per round and system: ${settings.warmup} warm-up calls`);
  lines.push(`sequential and ${settings.warmup} at ${settings.inFlight} in flight, then ${fmtInt(settings.sequential)} sequential calls`);
  lines.push(`(1 session, 1 in flight) and ${fmtInt(settings.concurrent)} concurrent calls (1 session, ${settings.inFlight} in flight).`);
  lines.push('Medians across rounds. CPU is utime + stime per 1,000 calls, in ms ("sys %" is the stime share).');
  lines.push('');
  lines.push(...machineLines);
  lines.push('');
  lines.push('| system | phase | calls/s | p50 ms | p90 ms | p99 ms | gateway CPU | of which sys % | upstream CPU | client CPU |');
  lines.push('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const p of ['sequential', 'concurrent'] as const) {
    for (const s of SYSTEMS) {
      lines.push(
        `| ${s} | ${p} | ${fmtInt(med(s, p, 'callsPerSecond'))} | ${fmt(med(s, p, 'p50'), 3)} | ${fmt(med(s, p, 'p90'), 3)} | ${fmt(med(s, p, 'p99'), 3)} | ${fmt(med(s, p, 'gatewayCpu'), 0)} | ${fmt(100 * med(s, p, 'gatewaySys'), 0)} | ${fmt(med(s, p, 'upstreamCpu'), 0)} | ${fmt(med(s, p, 'clientCpu'), 0)} |`,
      );
    }
  }
  lines.push('');
  lines.push('Gateway vs direct-stdio (ratio of the medians; "added" is the difference):');
  lines.push('');
  lines.push('| phase | throughput | p50 | p90 | p99 | added p50 ms | gateway CPU ms per call |');
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const p of ['sequential', 'concurrent'] as const) {
    const r = (f: keyof PhaseResult) => med('gateway', p, f) / med('direct-stdio', p, f);
    lines.push(
      `| ${p} | ${fmt(r('callsPerSecond'), 3)}x | ${fmt(r('p50'), 1)}x | ${fmt(r('p90'), 1)}x | ${fmt(r('p99'), 1)}x | ${fmt(med('gateway', p, 'p50') - med('direct-stdio', p, 'p50'), 3)} | ${fmt(med('gateway', p, 'gatewayCpu') / 1000, 3)} |`,
    );
  }
  lines.push('');
  lines.push('Calls/s in each round (spread of the medians above):');
  lines.push('');
  lines.push('| system | phase | ' + Array.from({ length: settings.rounds }, (_, i) => `r${i + 1}`).join(' | ') + ' |');
  lines.push('| --- | --- |' + ' ---: |'.repeat(settings.rounds));
  for (const p of ['sequential', 'concurrent'] as const) {
    for (const s of SYSTEMS) {
      lines.push(`| ${s} | ${p} | ${(results.get(key(s, p)) ?? []).map((r) => fmtInt(r.callsPerSecond)).join(' | ')} |`);
    }
  }
  return lines.join('\n');
}

function writeDoc(section: string): void {
  const block = `${BEGIN}\n${section}\n${END}`;
  let text = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '';
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin !== -1 && end > begin) text = text.slice(0, begin) + block + text.slice(end + END.length);
  else text = `${text}${text === '' ? '# Benchmarks\n\n' : '\n'}${block}\n`;
  writeFileSync(DOC, text);
}

// ---------------------------------------------------------------------------------------------
// --cpu-prof: where the gateway's time went (self time per function, idle excluded).

function summariseProfiles(dir: string, since: number, calls: number): string {
  const times = readSelfTimes(dir, since, ROOT);
  const lines = [
    `Gateway CPU profiles: ${times.files} file(s) in ${dir}; ${(times.busy / 1000).toFixed(0)} ms on the main thread outside idle,`,
    `${(times.busy / calls).toFixed(1)} us per call over ${calls} gateway calls (start-up included). Top self time:`,
  ];
  return [...lines, ...formatTop(times, 25)].join('\n');
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 24) process.stderr.write(`bench: running on Node ${process.version}; the figures are meant for Node 24 (npm run bench:overhead)\n`);
  const started = performance.now();
  const startedAt = Date.now();
  const profDir = argv['cpu-prof'];
  if (profDir !== undefined) mkdirSync(profDir, { recursive: true });
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const machineLines = machine();
  const results = new Map<string, PhaseResult[]>();
  const record = (s: SystemName, p: PhaseName, r: PhaseResult) => {
    const list = results.get(`${s}/${p}`) ?? [];
    list.push(r);
    results.set(`${s}/${p}`, list);
  };

  for (let round = 0; round < settings.rounds; round++) {
    // Flip the order every round so that neither system always runs on a warmer (or busier) machine.
    const order = round % 2 === 0 ? SYSTEMS : [...SYSTEMS].reverse();
    for (const name of order) {
      const system = name === 'gateway' ? await startGateway(profDir) : await startDirect();
      try {
        await drive(system, settings.warmup, 1);
        await drive(system, settings.warmup, settings.inFlight);
        const seq = await measure(system, settings.sequential, 1);
        const conc = await measure(system, settings.concurrent, settings.inFlight);
        record(name, 'sequential', seq);
        record(name, 'concurrent', conc);
        process.stderr.write(
          `round ${round + 1}/${settings.rounds} ${name.padEnd(12)} seq ${fmtInt(seq.callsPerSecond).padStart(6)}/s p50 ${fmt(seq.p50, 3)} ms | ` +
            `x${settings.inFlight} ${fmtInt(conc.callsPerSecond).padStart(6)}/s p50 ${fmt(conc.p50, 3)} ms\n`,
        );
      } finally {
        await system.stop();
      }
    }
  }

  const section = render(results, date, machineLines, (performance.now() - started) / 1000);
  process.stdout.write(`\n${section}\n`);
  if (profDir !== undefined) {
    const gatewayCalls = settings.rounds * (2 * settings.warmup + settings.sequential + settings.concurrent);
    process.stdout.write(`\n${summariseProfiles(profDir, startedAt, gatewayCalls)}\n`);
  }
  if (!argv['no-write']) {
    writeDoc(section);
    process.stdout.write(`\n(written to ${DOC})\n`);
  }
}

main()
  .then(() => {
    // Every system was stopped in its round; check that the kernel agrees.
    const left = [...new Set([...[...spawned].map((c) => c.pid), ...strayPids, ...childrenOf(process.pid)])];
    if (left.length > 0) {
      process.stderr.write(`bench: processes left at the end: ${left.join(' ')}; killing them\n`);
      process.exitCode = 1;
      for (const pid of left) if (pid !== undefined) strayPids.add(pid);
      killEverythingNow();
    }
    clearTimeout(watchdog);
  })
  .catch((error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
    killEverythingNow();
  });
