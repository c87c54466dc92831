/**
 * The cluster benchmark (issue 24): calls/s through Debian's HAProxy (round robin, no stickiness)
 * in front of 1, 2 and 3 gateway replicas sharing a real Redis, and the cost of a forwarded
 * request (session on r0, calls sent to r1, which relays them) against the same calls sent to
 * the owner. The upstream is bench/echo-server.mjs over stdio; the load is lib/load.ts (S
 * sessions x C calls in flight, every answer checked). Prints a Markdown table; writes nothing.
 *
 *   node bench/cluster.ts [--duration 5000] [--warmup 1000] [--sessions 8] [--in-flight 4] [--replicas 1,2,3]
 *
 * Needs `redis-server` and `haproxy` (apt-get install redis-server haproxy). Every process it
 * starts is killed on the way out, pass or fail.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { answerFromBody, checkEcho, echoBody, httpConnector, PROTOCOL_VERSION, type Connector } from './lib/clients.ts';
import { runLoad, type LoadResult } from './lib/load.ts';
import { ECHO_SERVER, ROOT } from './lib/systems.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5000' },
    warmup: { type: 'string', default: '1000' },
    sessions: { type: 'string', default: '8' },
    'in-flight': { type: 'string', default: '4' },
    replicas: { type: 'string', default: '1,2,3' },
    // `relay`: only the relayed and the owner's rows (a profile of the hop alone); `haproxy`: only HAProxy's.
    only: { type: 'string', default: '' },
    // HAProxy learns each session's replica from the answer's Mcp-Session-Id (deploy/cluster/haproxy.cfg does).
    sticky: { type: 'boolean', default: false },
  },
});
const LOAD = { sessions: Number(values.sessions), inFlight: Number(values['in-flight']), bytes: 0, warmupMs: Number(values.warmup), durationMs: Number(values.duration), gatewayPid: undefined };
const KEY = 'bench-cluster-key-0123456789abcdefghijklmnopq';
const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((path) => existsSync(path)) ?? 'haproxy';
const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-cluster-'));
const started: ChildProcess[] = [];
/** Session affinity learnt from the answer (as deploy/cluster/haproxy.cfg): a 2025 session's requests go to its owner. */
const STICKY = ['  stick-table type string len 200 size 100k expire 30m', '  stick store-response res.hdr(mcp-session-id)', '  stick on req.hdr(mcp-session-id)'];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Spawns a process, resolves once its output matches `ready`. */
async function launch(command: string, args: string[], ready: RegExp | undefined, env = process.env): Promise<ChildProcess> {
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env, detached: true });
  started.push(child);
  if (ready === undefined) {
    // Read and drop what it writes: a pipe nobody reads fills up and then stalls (or spins) its writer.
    child.stdout?.resume();
    child.stderr?.resume();
    return child;
  }
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} not ready in 60 s:\n${out.slice(-2_000)}`)), 60_000);
    const look = (chunk: Buffer) => {
      out += chunk.toString();
      if (!ready.test(out)) return;
      clearTimeout(timer);
      resolve();
    };
    child.stdout?.on('data', look);
    child.stderr?.on('data', look);
    child.once('exit', (code) => reject(new Error(`${command} exited (${code}):\n${out.slice(-2_000)}`)));
  });
  child.removeAllListeners('exit');
  return child;
}

function killAll(): void {
  for (const child of started) {
    try {
      process.kill(-(child.pid as number), 'SIGKILL'); // the whole group: a replica's stdio children too
    } catch {
      // Gone already.
    }
  }
  started.length = 0;
}

async function startReplica(id: string, redisUrl: string, frontPort: number): Promise<{ url: string; pid: number }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const file = join(dir, `${id}.json`);
  const cluster = { replicaId: id, advertiseUrl: url, redis: { url: redisUrl }, keys: [KEY] };
  const gateway = { host: '127.0.0.1', port, logging: { level: 'warn' }, allowedHosts: [`127.0.0.1:${port}`, `127.0.0.1:${frontPort}`], cluster };
  writeFileSync(file, JSON.stringify({ gateway, mcpServers: { echo: { command: process.execPath, args: [ECHO_SERVER] } } }));
  // `warn` hides "joined the cluster"; /readyz says when it serves.
  // BENCH_CPU_PROF=<dir>: each replica runs under `node --cpu-prof` (a profile per process, written at exit).
  const prof = process.env.BENCH_CPU_PROF === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`];
  const child = await launch(process.execPath, [...prof, join(ROOT, 'src/cli.ts'), '--config', file], undefined);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = await fetch(`${url}/readyz`).then((r) => r.status, () => 0);
    if (status === 200) return { url, pid: child.pid as number };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`replica ${id} not ready`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function startHaproxy(port: number, backends: string[]): Promise<void> {
  const servers = backends.map((url, i) => `  server r${i} ${new URL(url).host} check inter 500`);
  const cfg = ['defaults', '  mode http', '  timeout connect 2s', '  timeout client 60s', '  timeout server 60s', '  retries 2', '  option redispatch 1',
    'frontend mcp', `  bind 127.0.0.1:${port}`, '  default_backend gateways', 'backend gateways', '  balance roundrobin', '  option httpchk GET /readyz', ...(values.sticky ? STICKY : []), ...servers, ''];
  const file = join(dir, `haproxy-${port}.cfg`);
  writeFileSync(file, cfg.join('\n'));
  await launch(HAPROXY, ['-db', '-f', file], undefined);
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    if ((await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0)) === 200) return;
  }
  throw new Error('haproxy did not answer');
}

/** Sessions opened on `openUrl`, every call sent to `callUrl` (another replica: it relays them). */
function relayedConnector(openUrl: string, callUrl: string): Connector {
  const opener = httpConnector(openUrl, 4);
  const target = new URL(callUrl);
  const pool = new Pool(target.origin, { connections: LOAD.sessions * LOAD.inFlight, keepAliveTimeout: 60_000 });
  const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': PROTOCOL_VERSION };
  return {
    wire: 'http',
    pids: [],
    async open() {
      const res = await fetch(openUrl, { method: 'POST', headers: base, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }) });
      await res.text();
      const headers = { ...base, 'mcp-session-id': res.headers.get('mcp-session-id') as string };
      await (await fetch(openUrl, { method: 'POST', headers, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })).text();
      return {
        async call(id, text, bytes) {
          const answer = await pool.request({ path: target.pathname, method: 'POST', headers, body: echoBody(id, text, bytes) });
          const body = await answer.body.text();
          if (answer.statusCode !== 200) throw new Error(`id ${id}: HTTP ${answer.statusCode} ${body.slice(0, 300)}`);
          checkEcho(answerFromBody(String(answer.headers['content-type'] ?? ''), body, id), id, text, bytes);
        },
        close: async () => void (await fetch(openUrl, { method: 'DELETE', headers })).arrayBuffer(),
      };
    },
    close: async () => {
      await opener.close();
      await pool.close();
    },
  };
}

async function measure(connector: Connector, roots: number[]): Promise<LoadResult> {
  try {
    return await runLoad(connector, { ...LOAD, roots });
  } finally {
    await connector.close();
  }
}

const row = (name: string, r: LoadResult) =>
  `| ${name} | ${r.callsPerSecond.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.errors} | ${r.serverCpu.toFixed(0)} |`;

async function main(): Promise<void> {
  const rows: string[] = [];
  const path = '/servers/echo/mcp';
  for (const n of values.replicas.split(',').map(Number)) {
    const redis = await freePort();
    await launch('redis-server', ['--port', String(redis), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], /Ready to accept connections/);
    const front = await freePort();
    const replicas = [];
    for (let i = 0; i < n; i++) replicas.push(await startReplica(`r${i}`, `redis://127.0.0.1:${redis}`, front));
    const pids = replicas.map((r) => r.pid);
    if (values.only !== 'relay') await startHaproxy(front, replicas.map((r) => r.url));
    if (values.only !== 'relay') rows.push(row(`HAProxy, ${n} replica${n === 1 ? '' : 's'}`, await measure(httpConnector(`http://127.0.0.1:${front}${path}`, LOAD.sessions * LOAD.inFlight), pids)));
    if (n >= 2 && values.only !== 'haproxy') {
      const [r0, r1] = replicas as unknown as [{ url: string }, { url: string }];
      rows.push(row('r1 relays to the owner r0 (no HAProxy)', await measure(relayedConnector(r0.url + path, r1.url + path), pids)));
      rows.push(row('the owner r0 directly (no HAProxy)', await measure(httpConnector(r0.url + path, LOAD.sessions * LOAD.inFlight), pids)));
    }
    if (process.env.BENCH_CPU_PROF !== undefined) {
      // A profile is written at a clean exit only: SIGTERM (a drain, idle by now), then the group's SIGKILL.
      for (const child of started) child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 5_000));
    }
    killAll();
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  console.log(`${LOAD.sessions} sessions x ${LOAD.inFlight} calls in flight, ${LOAD.durationMs} ms after ${LOAD.warmupMs} ms warm-up, echo over stdio\n`);
  console.log('| Setup | calls/s | p50 ms | p99 ms | errors | CPU ms / 1,000 calls (replicas) |\n| --- | --- | --- | --- | --- | --- |');
  console.log(rows.join('\n'));
}

// Stopped by a signal (Ctrl-C, or a `timeout`): Redis, HAProxy and the replicas go too.
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  process.on(signal, () => {
    killAll();
    process.exit(code);
  });
}
try {
  await main();
} finally {
  killAll();
  rmSync(dir, { recursive: true, force: true });
}
