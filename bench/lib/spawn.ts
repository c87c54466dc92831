/**
 * The processes of a benchmark: each one it starts is tracked, so that `killAll` (run on every exit
 * path) leaves none behind; a system is stopped with SIGTERM, then SIGKILL, and its descendants.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { alive, treeOf } from './proc.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The system could not be started for a reason that is not a failure of the run (not built yet). */
export class Unavailable extends Error {}

const tracked = new Set<ChildProcess>();
const trackedPids = new Set<number>();

/** SIGKILLs every process group the benchmark started (idempotent, synchronous). */
export function killAll(): void {
  for (const child of tracked) {
    for (const pid of child.pid === undefined ? [] : treeOf([child.pid])) trackedPids.add(pid);
  }
  for (const pid of trackedPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (const child of tracked) child.kill('SIGKILL');
}

export function start(command: string, args: string[], cwd = ROOT): ChildProcess {
  const child = spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  tracked.add(child);
  child.once('exit', () => tracked.delete(child));
  return child;
}

/** Stops a system's process and everything under it: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopTree(child: ChildProcess, graceMs = 10_000): Promise<void> {
  const pids = child.pid === undefined ? [] : treeOf([child.pid]);
  for (const pid of pids) trackedPids.add(pid);
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
  // Children a gateway leaves behind (it should stop them itself) are killed, not waited for.
  const deadline = Date.now() + 5_000;
  for (const pid of pids) {
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (alive(pid)) process.kill(pid, 'SIGKILL');
    trackedPids.delete(pid);
  }
}

/** Collects a child's output; resolves with the first stdout line that `pick` accepts. */
export function waitForLine(child: ChildProcess, what: string, pick: (line: string) => string | undefined, ms = 20_000): Promise<string> {
  let err = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (c: string) => void (err = (err + c).slice(-4_000)));
  return new Promise((resolve, reject) => {
    let out = '';
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`${what}: not ready within ${ms} ms; output: ${out}${err}`)), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      const message = `${what} exited at start (code ${code}): ${(out + err).trim().split('\n').slice(-3).join(' | ').slice(0, 400)}`;
      // Exit code 2 is Switchboard refusing its config: a feature this build does not have yet.
      reject(what === 'switchboard' && code === 2 ? new Unavailable(message) : new Error(message));
    });
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      out = (out + chunk).slice(-4_000);
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) !== -1) {
        const found = pick(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
        if (found !== undefined) {
          clearTimeout(timer);
          child.stdout?.removeAllListeners('data');
          child.stdout?.resume();
          resolve(found);
          return;
        }
      }
    });
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

export async function waitForPort(port: number, child: ChildProcess, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited at start (code ${child.exitCode})`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: port ${port} not open within ${ms} ms`);
}
