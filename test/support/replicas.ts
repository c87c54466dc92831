/**
 * Gateway replicas as their own OS processes (`node src/cli.ts --config`), for the cluster tests:
 * each on a free loopback port with its own config file, its JSON log kept as it comes, killed
 * (with its children) by pid, pass or fail.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, root } from './cli.ts';
import { freePort } from './ports.ts';
import { killTree } from './processes.ts';

export interface Replica {
  readonly url: string;
  readonly pid: number;
  /** Everything it logged so far (one JSON object per line). */
  log(): string;
  /** Log lines whose `msg` contains `text`. */
  lines(text: string): Array<Record<string, unknown>>;
  alive(): boolean;
  stop(): Promise<void>;
}

const STARTED = '"switchboard listening"';

/** Starts one replica with `gateway` (host and port are filled in) and `mcpServers`. */
export async function startReplica(gateway: Record<string, unknown>, mcpServers: Record<string, unknown>, timeoutMs = 60_000): Promise<Replica> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-replica-'));
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ gateway: { host: '127.0.0.1', port, ...gateway }, mcpServers }));
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [cli, '--config', file], { cwd: root });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (alive()) {
      const exited = new Promise((resolve) => child.once('close', resolve));
      killTree(child.pid);
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  while (!out.includes(STARTED)) {
    if (!alive() || Date.now() > deadline) {
      await stop();
      throw new Error(`replica did not start (exit ${child.exitCode}):\n${out}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid as number,
    log: () => out,
    lines: (text) =>
      out
        .split('\n')
        .filter((line) => line.startsWith('{') && line.includes(text))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((entry) => typeof entry.msg === 'string' && entry.msg.includes(text)),
    alive,
    stop,
  };
}
