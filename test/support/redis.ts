/**
 * A real Redis for the cluster tests: Debian's `redis-server` on a free loopback port, with its own
 * settings on the command line (no persistence, no system config, no system service), stopped by
 * pid pass or fail. `stop()` then `restart()` keeps the port, for "Redis comes back" cases.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';

export interface TestRedis {
  readonly port: number;
  readonly url: string;
  readonly pid: () => number | undefined;
  /** Stops the server (SIGKILL when `hard`), waiting for its exit. */
  stop(hard?: boolean): Promise<void>;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
}

/** `password`: `--requirepass` (the `default` user's); `users`: ACL users `[name, password]` with every right; `tls`: PEM files, TLS only (no plain port). */
export interface RedisOptions {
  readonly password?: string;
  readonly users?: ReadonlyArray<readonly [string, string]>;
  readonly tls?: { readonly cert: string; readonly key: string; readonly ca: string };
}

const BINARY = process.env['REDIS_SERVER'] ?? 'redis-server';
const READY = /Ready to accept connections/;

function argsOf(port: number, options: RedisOptions): string[] {
  const out = options.tls === undefined ? ['--port', String(port)] : ['--port', '0', '--tls-port', String(port), '--tls-cert-file', options.tls.cert, '--tls-key-file', options.tls.key, '--tls-ca-cert-file', options.tls.ca, '--tls-auth-clients', 'no'];
  if (options.password !== undefined) out.push('--requirepass', options.password);
  for (const [name, password] of options.users ?? []) out.push('--user', name, 'on', `>${password}`, '~*', '&*', '+@all');
  return out;
}

function launch(port: number, dir: string, options: RedisOptions = {}): Promise<ChildProcess> {
  mkdirSync(dir, { recursive: true });
  const args = [...argsOf(port, options), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--loglevel', 'notice', '--protected-mode', 'yes'];
  const child = spawn(BINARY, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`redis-server did not start in 10 s:\n${output}`)), 10_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    child.once('error', (err) => fail(new Error(`cannot run ${BINARY} (apt-get install redis-server): ${err.message}`)));
    child.once('exit', (code) => fail(new Error(`redis-server exited with ${code}:\n${output}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (!READY.test(output)) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      child.stderr!.resume();
      resolve(child);
    });
  });
}

async function stopChild(child: ChildProcess | undefined, hard: boolean): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(hard ? 'SIGKILL' : 'SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Starts a Redis; the caller stops it in `afterAll`/`finally`. */
export async function startRedis(options: RedisOptions = {}): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-redis-'));
  let port = 0;
  let child: ChildProcess | undefined;
  for (let attempt = 0; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await launch(port, dir, options);
    } catch (err) {
      if (attempt >= 2) throw err;
    }
  }
  return {
    port,
    url: `${options.tls === undefined ? 'redis' : 'rediss'}://127.0.0.1:${port}`,
    pid: () => child?.pid,
    async stop(hard = false) {
      await stopChild(child, hard);
      if (!hard) rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await stopChild(child, false);
      child = await launch(port, dir, options);
    },
  };
}
