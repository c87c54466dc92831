/**
 * Gateway replicas on this machine (issues 24 and 34): a real Redis, N replicas of one build's
 * src/cli.ts sharing it (`gateway.cluster`), and Debian's HAProxy in front of them. Used by the
 * cluster CLI (bench/cluster.ts) and by the `relay` and `replicas` scenarios of `npm run bench`.
 *
 * Every process is started in a process group of its own and tracked; `killClusterProcesses`
 * (synchronous, for exit handlers) SIGKILLs the groups, so a replica's stdio children go too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { Pool } from 'undici';
import { answerFromBody, checkEcho, echoBody, httpConnector, PROTOCOL_VERSION, type Connector } from './clients.ts';
import { freePort, ROOT, Unavailable } from './spawn.ts';

const ECHO_SERVER = join(ROOT, 'bench/echo-server.mjs');
const KEY = 'bench-cluster-key-0123456789abcdefghijklmnopq';
/** Session affinity learnt from the answer (as deploy/cluster/haproxy.cfg): a 2025 session's requests go to its owner. */
const STICKY = ['  stick-table type string len 200 size 100k expire 30m', '  stick store-response res.hdr(mcp-session-id)', '  stick on req.hdr(mcp-session-id)'];

/** A program on PATH or in the sbin folders Debian puts daemons in; undefined when absent. */
export function findProgram(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/bin', '/sbin'];
  return dirs.filter(Boolean).map((dir) => join(dir, name)).find((path) => existsSync(path));
}

export const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((path) => existsSync(path)) ?? 'haproxy';

/** Why the cluster cannot run here ("redis-server not installed"), or undefined when it can. */
export function missingPrograms(names: readonly string[]): string | undefined {
  const missing = names.filter((name) => findProgram(name) === undefined);
  return missing.length === 0 ? undefined : `${missing.join(' and ')} not installed (apt-get install ${missing.join(' ')})`;
}

const groups = new Set<ChildProcess>();

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-(child.pid as number), 'SIGKILL'); // the whole group: a replica's stdio children too
  } catch {
    // Gone already.
  }
  groups.delete(child);
}

/** SIGKILLs every process group started here (idempotent, synchronous: safe in an exit handler). */
export function killClusterProcesses(): void {
  for (const child of [...groups]) killGroup(child);
}

/** Spawns a process in a group of its own, resolves once its output matches `ready`. */
async function launch(command: string, args: string[], ready: RegExp | undefined, own: ChildProcess[]): Promise<ChildProcess> {
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  groups.add(child);
  own.push(child);
  if (ready === undefined) {
    // Read and drop what it writes: a pipe nobody reads fills up and then stalls (or spins) its writer.
    child.once('error', () => undefined); // a failed spawn shows as a replica or HAProxy that never answers
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
    child.once('error', (err) => reject(new Error(`${command}: ${err.message}`)));
    child.once('exit', (code) => reject(new Error(`${command} exited (${code}):\n${out.slice(-2_000)}`)));
  });
  child.removeAllListeners('exit');
  return child;
}

export interface Replica {
  readonly id: string;
  readonly url: string;
  readonly pid: number;
}

export interface ClusterOptions {
  /** The build's src/cli.ts. */
  readonly cli: string;
  /** A folder for the config files (the caller removes it). */
  readonly dir: string;
  /** Each replica under `node --cpu-prof` into this folder (a profile per process, written at a clean exit). */
  readonly cpuProfDir?: string | undefined;
}

export interface Cluster {
  readonly replicas: readonly Replica[];
  /** HAProxy in front of every replica; resolves with its base URL once it answers /readyz. */
  startHaproxy(sticky: boolean): Promise<string>;
  /** Kills every process of this cluster; `graceMs` > 0: SIGTERM first and wait that long (profiles). */
  stop(graceMs?: number): Promise<void>;
}

async function startReplica(id: string, redisUrl: string, frontPort: number, options: ClusterOptions, own: ChildProcess[]): Promise<Replica> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const file = join(options.dir, `${id}.json`);
  const cluster = { replicaId: id, advertiseUrl: url, redis: { url: redisUrl }, keys: [KEY] };
  const gateway = { host: '127.0.0.1', port, logging: { level: 'warn' }, allowedHosts: [`127.0.0.1:${port}`, `127.0.0.1:${frontPort}`], cluster };
  writeFileSync(file, JSON.stringify({ gateway, mcpServers: { echo: { command: process.execPath, args: [ECHO_SERVER] } } }));
  // `warn` hides "joined the cluster"; /readyz says when it serves.
  const prof = options.cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`];
  const child = await launch(process.execPath, [...prof, options.cli, '--config', file], undefined, own);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = await fetch(`${url}/readyz`).then((r) => r.status, () => 0);
    if (status === 200) return { id, url, pid: child.pid as number };
    // Exit code 2: the build refuses the config (no `gateway.cluster` yet), not a failure of the run.
    if (child.exitCode === 2) throw new Unavailable(`replica ${id}: the build refused the cluster config (exit code 2)`);
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`replica ${id} not ready`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function startHaproxy(port: number, backends: readonly Replica[], sticky: boolean, dir: string, own: ChildProcess[]): Promise<string> {
  const servers = backends.map((r, i) => `  server r${i} ${new URL(r.url).host} check inter 500`);
  const cfg = ['defaults', '  mode http', '  timeout connect 2s', '  timeout client 60s', '  timeout server 60s', '  retries 2', '  option redispatch 1',
    'frontend mcp', `  bind 127.0.0.1:${port}`, '  default_backend gateways', 'backend gateways', '  balance roundrobin', '  option httpchk GET /readyz', ...(sticky ? STICKY : []), ...servers, ''];
  const file = join(dir, `haproxy-${port}.cfg`);
  writeFileSync(file, cfg.join('\n'));
  await launch(HAPROXY, ['-db', '-f', file], undefined, own);
  const base = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    if ((await fetch(`${base}/readyz`).then((r) => r.status, () => 0)) === 200) return base;
  }
  throw new Error('haproxy did not answer');
}

/** A fresh Redis and `n` replicas sharing it, started one after the other. */
export async function startCluster(n: number, options: ClusterOptions): Promise<Cluster> {
  const own: ChildProcess[] = [];
  const stop = async (graceMs = 0) => {
    if (graceMs > 0) {
      for (const child of own) child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, graceMs));
    }
    for (const child of own) killGroup(child);
    own.length = 0;
  };
  try {
    const redis = await freePort();
    await launch('redis-server', ['--port', String(redis), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], /Ready to accept connections/, own);
    const front = await freePort();
    const replicas: Replica[] = [];
    for (let i = 0; i < n; i++) replicas.push(await startReplica(`r${i}`, `redis://127.0.0.1:${redis}`, front, options, own));
    return { replicas, startHaproxy: (sticky) => startHaproxy(front, replicas, sticky, options.dir, own), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Sessions opened on `openUrl`, every call sent to `callUrl` (another replica: it relays them). */
export function relayedConnector(openUrl: string, callUrl: string, connections: number): Connector {
  const opener = httpConnector(openUrl, 4);
  const target = new URL(callUrl);
  const pool = new Pool(target.origin, { connections, keepAliveTimeout: 60_000 });
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
