/**
 * Debian's HAProxy (`/usr/sbin/haproxy`, installed by .ci/run) as a real load balancer in front of
 * gateway processes: started in the foreground on a free loopback port with a config written to a
 * temp folder (round robin, `option httpchk GET /readyz`, fast checks for tests), never the system
 * service, and stopped by pid, pass or fail (`useHaproxy()` registers the cleanup).
 *
 * Every answer carries `x-served-by: <server name>`, so a test sees which backend served it, and
 * `states()` reads the servers' check states from HAProxy's stats socket.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { freePort } from './ports.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach } from 'vitest';

/** Where Debian puts it (/usr/sbin is not on every user's PATH). */
export const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find(isExecutable) ?? 'haproxy';

export interface Backend {
  /** Server name in HAProxy (and in `x-served-by`). */
  name: string;
  /** `http://127.0.0.1:<port>`: only host and port are used. */
  url: string | URL;
}

export interface HaproxyOptions {
  backends: Backend[];
  /** The health check path (default `/readyz`, as deploy/cluster/haproxy.cfg). */
  checkPath?: string;
  /** Check interval (default 100 ms); a server is out after 2 failed checks, back after 1 good one. */
  checkIntervalMs?: number;
  /**
   * Also retry (on another server) a request whose server closed the connection without a byte
   * of answer, as a killed replica's pooled connections do (default: connection failures only).
   */
  retryOnEmptyResponse?: boolean;
  /** The frontend's port (default a free one), for backends that must know it first (`allowedHosts`). */
  port?: number;
}

export type ServerState = 'UP' | 'DOWN' | 'MAINT' | 'NOLB' | string;

export interface RunningHaproxy {
  /** The frontend: `http://127.0.0.1:<port>`. */
  url: URL;
  pid: number;
  /** The config file it runs, for a failure message. */
  config: string;
  /** Each server's state (`UP`, `DOWN`, `UP 1/2`...) and last check status (`L7OK`, `L7STS`, `L4CON`...). */
  states(): Promise<Record<string, { status: ServerState; check: string }>>;
  /** Resolves once every named server has the wanted status; rejects after `timeoutMs` with what it saw. */
  waitFor(wanted: Record<string, 'UP' | 'DOWN'>, timeoutMs?: number): Promise<void>;
  stderr(): string;
  stop(): Promise<void>;
}

const running = new Set<RunningHaproxy>();

/** Stops every HAProxy a test started, pass or fail. */
export function useHaproxy(): void {
  afterEach(async () => {
    await Promise.all([...running].map((h) => h.stop()));
  });
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export { freePort };

/** The config a test HAProxy runs: the shape of deploy/cluster/haproxy.cfg with test timings. */
export function haproxyConfig(options: HaproxyOptions & { port: number; socket: string }): string {
  const inter = options.checkIntervalMs ?? 100;
  const servers = options.backends.map(({ name, url }) => {
    const { hostname, port } = new URL(url);
    return `  server ${name} ${hostname}:${port} check`;
  });
  return [
    'global',
    `  stats socket ${options.socket} mode 600 level admin`,
    '  maxconn 512',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout http-request 10s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout check 5s',
    '  retries 2',
    '  option redispatch 1',
    ...(options.retryOnEmptyResponse === true ? ['  retry-on conn-failure empty-response'] : []),
    'frontend mcp',
    `  bind 127.0.0.1:${options.port}`,
    '  default_backend gateways',
    'backend gateways',
    '  balance roundrobin',
    `  option httpchk GET ${options.checkPath ?? '/readyz'}`,
    '  http-check expect status 200',
    '  http-response set-header x-served-by %s',
    `  default-server inter ${inter} fall 2 rise 1`,
    ...servers,
    '',
  ].join('\n');
}

/** One command on the stats socket, its whole answer. */
function ask(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const conn = connect(socket, () => conn.end(`${command}\n`));
    conn.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    conn.on('end', () => resolve(text));
    conn.on('error', reject);
  });
}

/** Parses `show stat` CSV into the backend servers' status and last check. */
function parseStats(csv: string): Record<string, { status: string; check: string }> {
  const [header = '', ...rows] = csv.trim().split('\n');
  const columns = header.replace(/^# /, '').split(',');
  const at = (name: string) => columns.indexOf(name);
  const out: Record<string, { status: string; check: string }> = {};
  for (const row of rows) {
    const cells = row.split(',');
    const server = cells[at('svname')] ?? '';
    if (cells[at('pxname')] !== 'gateways' || server === 'BACKEND' || server === 'FRONTEND') continue;
    out[server] = { status: cells[at('status')] ?? '', check: cells[at('check_status')] ?? '' };
  }
  return out;
}

/** Starts HAProxy and resolves once its frontend accepts connections. */
export async function startHaproxy(options: HaproxyOptions): Promise<RunningHaproxy> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-haproxy-'));
  const socket = join(dir, 'stats.sock');
  const port = options.port ?? (await freePort());
  const config = join(dir, 'haproxy.cfg');
  await writeFile(config, haproxyConfig({ ...options, port, socket }));
  // -db: foreground, no daemon: the pid is HAProxy itself, and it dies with the test's kill.
  const child: ChildProcess = spawn(HAPROXY, ['-db', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  child.once('error', (err) => (stderr += `\n${err.message}`));
  const url = new URL(`http://127.0.0.1:${port}`);
  const states = async () => parseStats(await ask(socket, 'show stat'));
  const handle: RunningHaproxy = {
    url,
    pid: child.pid ?? -1,
    config,
    states,
    stderr: () => stderr,
    async waitFor(wanted, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      let seen: Record<string, { status: string; check: string }> = {};
      while (Date.now() < deadline) {
        seen = await states();
        if (Object.entries(wanted).every(([name, status]) => seen[name]?.status === status)) return;
        await sleep(25);
      }
      throw new Error(`HAProxy servers never reached ${JSON.stringify(wanted)}: ${JSON.stringify(seen)}`);
    },
    async stop() {
      running.delete(handle);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
  running.add(handle);
  try {
    await untilListening(port, child, () => stderr);
  } catch (err) {
    await handle.stop();
    throw err;
  }
  return handle;
}

/** Connects until the port accepts (HAProxy prints nothing when it is up), or the process exits. */
async function untilListening(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`haproxy exited (${child.exitCode ?? child.signalCode}):\n${stderr()}`);
    const up = await new Promise<boolean>((resolve) => {
      const conn = connect(port, '127.0.0.1', () => {
        conn.destroy();
        resolve(true);
      });
      conn.once('error', () => resolve(false));
    });
    if (up) return;
    await sleep(20);
  }
  throw new Error(`haproxy did not listen on ${port} within 20 s:\n${stderr()}`);
}

export interface HaproxySection {
  /** `global`, `defaults`, `frontend`, `backend`, `listen`, `resolvers`... */
  kind: string;
  name: string;
  /** Its directives, comments and blank lines dropped, spaces collapsed. */
  lines: string[];
}

/** Reads a haproxy.cfg into sections, enough to check what a deploy file says (not a full parser). */
export function parseHaproxyConfig(text: string): HaproxySection[] {
  const sections: HaproxySection[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim().replace(/\s+/g, ' ');
    if (line === '') continue;
    if (!/^\s/.test(raw)) {
      const [kind = '', name = ''] = line.split(' ');
      sections.push({ kind, name, lines: [] });
    } else sections.at(-1)?.lines.push(line);
  }
  return sections;
}
