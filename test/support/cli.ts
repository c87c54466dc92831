/**
 * Drives the `switchboard` command as a real child process (`node src/cli.ts ...`, Node's type
 * stripping): start it, read its start-up line, speak MCP to it, and leave no process behind.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { killTree } from './processes.ts';

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const cli = join(root, 'src', 'cli.ts');
export const fixture = join(root, 'test', 'fixtures', 'misbehaving-server.mjs');
export const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Running {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<Exit>;
}

const children: ChildProcessWithoutNullStreams[] = [];
let dir: string;

/** Registers the hooks of a test file that starts the command: a temp folder, no child left behind. */
export function useCliProcesses(): void {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-cli-'));
  });
  afterEach(() => {
    // The gateway and its upstreams (killing the gateway alone would orphan a child that ignores EOF).
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) killTree(child.pid);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
}

export function start(args: string[], env: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, [cli, ...args], { cwd: root, env: { ...process.env, ...env } });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<Exit>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Runs the command to its end. */
export async function run(args: string[], env: Record<string, string> = {}): Promise<Exit & { stdout: string; stderr: string }> {
  const running = start(args, env);
  const exit = await running.exited;
  return { ...exit, stdout: running.stdout(), stderr: running.stderr() };
}

/** A path in this file's temp folder. */
export function tempPath(name: string): string {
  return join(dir, name);
}

export async function writeConfig(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

/** Waits for the start-up log line and returns the endpoint URLs it lists (a loaded 2-core machine may take many seconds). */
export async function endpointsOf(running: Running, timeoutMs = 60_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const line of running.stdout().split('\n')) {
      if (!line.includes('"endpoints"')) continue;
      const entry = JSON.parse(line) as { endpoints?: string[] };
      if (entry.endpoints) return entry.endpoints;
    }
    if (running.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no endpoints logged; exit=${running.child.exitCode}\nstdout:\n${running.stdout()}\nstderr:\n${running.stderr()}`);
}

export const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cli-test', version: '1.0.0' } },
};

export function post(url: string, body: unknown, sessionId?: string, signal?: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (sessionId !== undefined) {
    headers['mcp-session-id'] = sessionId;
    headers['mcp-protocol-version'] = '2025-06-18';
  }
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
}

/** Initializes a session at `url` and returns its id after checking the answer. */
export async function initializeAt(url: string): Promise<string> {
  const response = await post(url, initialize);
  expect(response.status).toBe(200);
  expect(await response.text()).toContain('"protocolVersion"');
  const sessionId = response.headers.get('mcp-session-id');
  expect(sessionId).toBeTruthy();
  return sessionId ?? '';
}

