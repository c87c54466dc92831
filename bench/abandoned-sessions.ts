/**
 * What abandoned sessions cost: clients that open one session per command and never DELETE it
 * (the Inspector CLI, SDK `close()`), against `/mcp` over six stdio servers (two
 * server-everything, four test fixtures). Each command: connect, tools/list, one tools/call,
 * close without DELETE. After the loop: the gateway's child processes and their total RSS.
 *
 * Usage: node bench/abandoned-sessions.ts [--commands N] [--cli PATH] [--ws-idle N | --startup M]
 *   --cli PATH    the gateway's cli.ts to run (default: this checkout's), e.g. an older checkout's
 *                 for a before/after comparison
 *   --ws-idle N   instead: open N idle WebSocket upgrades, then report the status of a new
 *                 client's initialize
 *   --startup M   instead: time a client's initialize against a server that never answers
 *                 (M = hang-on-init) or prints only non-JSON (M = not-mcp), with default timeouts
 * Only prints; nothing is written.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const { values: argv } = parseArgs({
  options: {
    commands: { type: 'string', default: '15' },
    cli: { type: 'string', default: fileURLToPath(new URL('../src/cli.ts', import.meta.url)) },
    'ws-idle': { type: 'string' },
    startup: { type: 'string' },
  },
});
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const FIXTURE = (name: string) => join(ROOT, 'test/fixtures', name);

const node = (args: string[]) => ({ command: process.execPath, args });
const servers = argv.startup !== undefined ? { bad: node([FIXTURE('misbehaving-server.mjs'), argv.startup]) } : {
  everything: node([EVERYTHING, 'stdio']),
  everything2: node([EVERYTHING, 'stdio']),
  fixture1: node([FIXTURE('misbehaving-server.mjs'), 'normal']),
  fixture2: node([FIXTURE('misbehaving-server.mjs'), 'normal']),
  recorder: node([FIXTURE('recorder-server.mjs')]),
  conformance: node([FIXTURE('conformance-server.mjs')]),
};

function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  let frontier = [pid];
  while (frontier.length > 0) {
    frontier = frontier.flatMap((p) => parents.get(p) ?? []);
    found.push(...frontier);
  }
  return found;
}

function rssKiB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

async function startGateway(): Promise<{ url: URL; pid: number; stop: () => void }> {
  const dir = mkdtempSync(join(os.tmpdir(), 'abandoned-'));
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ gateway: { port: 0, logging: { level: 'warn' } }, mcpServers: servers }));
  const child = spawn(process.execPath, [argv.cli, '--config', file, '--log-level', 'info'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const endpoint = await new Promise<string>((resolve, reject) => {
    let buffer = '';
    child.once('exit', (code) => reject(new Error(`gateway exited (${code})`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffer += chunk;
      const match = /"endpoints":\["([^"]+)"/.exec(buffer);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
  });
  const stop = () => {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  };
  return { url: new URL('/mcp', endpoint), pid: child.pid as number, stop };
}

async function oneCommand(url: URL): Promise<void> {
  const client = new Client({ name: 'per-command', version: '1' });
  // bench/node_modules may hold a newer SDK (bench/ensure-deps.mjs) whose transport type is stricter.
  await client.connect(new StreamableHTTPClientTransport(url) as Parameters<Client['connect']>[0]);
  await client.listTools();
  await client.callTool({ name: 'fixture1__echo', arguments: { text: 'hi' } });
  await client.close(); // no DELETE, as the SDK's close() and the Inspector CLI do
}

async function idleWebSockets(url: URL, count: number): Promise<void> {
  const ws = new URL('/ws', url.href.replace(/^http/, 'ws'));
  const sockets: WebSocket[] = [];
  for (let i = 0; i < count; i++) {
    const socket = new WebSocket(ws, 'mcp');
    await new Promise((resolve) => {
      socket.onopen = resolve;
      socket.onclose = resolve;
    });
    sockets.push(socket);
  }
  const answer = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'new', version: '1' } } }),
  });
  await answer.arrayBuffer();
  const open = sockets.filter((s) => s.readyState === WebSocket.OPEN).length;
  console.log(`after ${count} idle WebSocket upgrades (${open} still open): a new client's initialize answers ${answer.status}`);
  for (const socket of sockets) socket.close();
}

const gateway = await startGateway();
try {
  if (argv.startup !== undefined) {
    const started = Date.now();
    const answer = await fetch(new URL('/servers/bad/mcp', gateway.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'new', version: '1' } } }),
      signal: AbortSignal.timeout(400_000),
    });
    const text = await answer.text();
    console.log(`${argv.startup}: the client waited ${((Date.now() - started) / 1000).toFixed(1)} s for: ${text.slice(0, 300)}`);
  } else if (argv['ws-idle'] !== undefined) {
    await idleWebSockets(gateway.url, Number(argv['ws-idle']));
  } else {
    const commands = Number(argv.commands);
    for (let i = 0; i < commands; i++) await oneCommand(gateway.url);
    // Children stopped for room go in the background: give them a moment.
    await new Promise((r) => setTimeout(r, 2_000));
    const children = descendants(gateway.pid);
    const rss = children.reduce((sum, pid) => sum + rssKiB(pid), 0);
    console.log(`after ${commands} session-per-command clients: ${children.length} child processes, ${(rss / 1024).toFixed(0)} MiB RSS (gateway itself ${(rssKiB(gateway.pid) / 1024).toFixed(0)} MiB)`);
  }
} finally {
  gateway.stop();
}
