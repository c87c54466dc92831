/**
 * Containment of stdio servers (docs/security.md "Containment"): Debian's bubblewrap and cgroups,
 * driven through a real gateway by the MCP SDK client. The escape fixture's attempts succeed
 * unsandboxed (so these tests can fail) and each fails, reported as an error, inside the sandbox;
 * a child over its memory limit dies with the limit named in the log while other sessions carry on.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readdirSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LimitsConfig, SandboxConfig } from '../../src/config/types.ts';
import { createChildCgroup } from '../../src/transport/cgroups.ts';
import { connectClient, errorOf, startAggregateGateway, textOf } from '../support/aggregate.ts';
import { startGateway } from '../../src/main.ts';
import { keyAuth } from '../support/auth-server.ts';
import { buildConfig, createTestLogger, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { modern, resultOf } from '../support/modern.ts';
import { readStat } from '../support/processes.ts';
import { fixture } from '../support/recorder.ts';

const ESCAPE = fixture('escape-server.mjs');
let dir: string;
let writable: string;
let secret: string;
let listener: Server;
let port: number;
const open: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  // Not under /tmp: the sandbox's /tmp is private, so a write there would not be an escape anyway.
  dir = mkdtempSync('/var/tmp/sb-sandbox-');
  writable = join(dir, 'writable');
  mkdirSync(writable);
  secret = join(dir, 'secret.txt');
  writeFileSync(secret, 'the secret');
  listener = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => listener.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close().catch(() => undefined);
});

/** Whether this machine lets the gateway create memory and pids cgroups (else limits are refused). */
async function cgroupsUsable(): Promise<boolean> {
  try {
    const probe = createChildCgroup('probe', { memoryMiB: 64, processes: 8 });
    await probe?.remove();
    return true;
  } catch {
    return false;
  }
}

/** Live (not zombie) processes running `sleep <seconds>`. */
function sleepers(seconds: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8') === `sleep\0${seconds}\0` && readStat(Number(entry))?.state !== 'Z') pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

const escape = (sandbox?: SandboxConfig, limits?: LimitsConfig) => ({
  command: process.execPath,
  args: [ESCAPE],
  ...(sandbox === undefined ? {} : { sandbox }),
  ...(limits === undefined ? {} : { limits }),
});
const boxed = (extra: Partial<SandboxConfig> = {}): SandboxConfig => ({ writable: [writable], readable: [dirname(ESCAPE)], network: false, ...extra });

async function gateway(targets: Record<string, ReturnType<typeof escape>>, logLines?: string[]): Promise<TestGateway> {
  const g = await startTestGateway({ targets, ...(logLines === undefined ? {} : { logLines }) });
  open.push(g);
  return g;
}

async function client(g: TestGateway, target: string): Promise<Client> {
  const c = await connectClient(g, `/servers/${target}/mcp`);
  open.push(c);
  return c;
}

async function tool(c: Client, name: string, args: Record<string, unknown> = {}): Promise<{ text: string; isError: boolean }> {
  const result = await c.callTool({ name, arguments: args });
  return { text: textOf(result), isError: result.isError === true };
}

describe('sandbox (bubblewrap)', () => {
  it('unsandboxed, every escape attempt of the fixture succeeds', async () => {
    const g = await gateway({ open: escape() });
    const c = await client(g, 'open');
    const outside = join(dir, 'outside-open.txt');
    expect(await tool(c, 'write', { path: outside, text: 'out' })).toEqual({ text: 'written', isError: false });
    expect(readFileSync(outside, 'utf8')).toBe('out');
    expect(await tool(c, 'read', { path: secret })).toEqual({ text: 'the secret', isError: false });
    expect(await tool(c, 'connect', { port })).toEqual({ text: 'connected', isError: false });
    expect(await tool(c, 'fork', { count: 40 })).toEqual({ text: '40 of 40 started', isError: false });
  });

  it('sandboxed, each attempt fails and reaches the caller as an error; the writable path works', async () => {
    const usable = await cgroupsUsable();
    const lines: string[] = [];
    const g = await gateway({ boxed: escape(boxed(), usable ? { processes: 32 } : undefined) }, lines);
    const c = await client(g, 'boxed');
    const outside = join(dir, 'outside-boxed.txt');
    const write = await tool(c, 'write', { path: outside, text: 'out' });
    expect(write.isError).toBe(true);
    expect(existsSync(outside)).toBe(false);
    expect(await tool(c, 'write', { path: '/etc/switchboard-escape', text: 'out' })).toMatchObject({ isError: true });
    expect(existsSync('/etc/switchboard-escape')).toBe(false);
    expect(await tool(c, 'read', { path: secret })).toEqual({ text: 'failed: ENOENT', isError: true });
    expect(await tool(c, 'connect', { port })).toMatchObject({ text: expect.stringMatching(/^failed: (ECONNREFUSED|ENETUNREACH)/), isError: true });
    expect(await tool(c, 'write', { path: join(writable, 'inside.txt'), text: 'in' })).toEqual({ text: 'written', isError: false });
    expect(readFileSync(join(writable, 'inside.txt'), 'utf8')).toBe('in');
    if (usable) {
      expect(await tool(c, 'fork', { count: 40 })).toMatchObject({ text: expect.stringMatching(/^failed: \d+ of 40 started, then EAGAIN/), isError: true });
      // The server lives on after refused forks, and still answers.
      expect(JSON.parse((await tool(c, 'whoami')).text)).toMatchObject({ pid: expect.any(Number) });
      // Refused forks do not kill it: the count is logged, by the limit's name, when it ends.
      await g.close();
      await expect.poll(() => lines.find((line) => line.includes('limits.processes')), { timeout: 10_000 }).toBeDefined();
      expect(JSON.parse(lines.find((line) => line.includes('limits.processes')) as string)).toMatchObject({ limit: 'processes', value: 32, events: expect.any(Number) });
    }
  });

  it('network: true lets the sandboxed server reach the loopback listener', async () => {
    const g = await gateway({ netted: escape(boxed({ network: true })) });
    const c = await client(g, 'netted');
    expect(await tool(c, 'connect', { port })).toEqual({ text: 'connected', isError: false });
  });

  it('a shared sandboxed child serves two sessions and keeps its private /tmp to itself', async () => {
    const g = await gateway({ shared: { ...escape({ writable: [], readable: undefined, network: false }), upstream: { mode: 'shared', children: 1 } } as ReturnType<typeof escape> });
    const [a, b] = [await client(g, 'shared'), await client(g, 'shared')];
    expect((await tool(a, 'whoami')).text).toBe((await tool(b, 'whoami')).text);
    const marker = join(tmpdir(), `sb-private-${process.pid}.txt`);
    expect(await tool(a, 'write', { path: marker, text: 'private' })).toEqual({ text: 'written', isError: false });
    expect(existsSync(marker)).toBe(false);
    expect(await tool(b, 'read', { path: marker })).toEqual({ text: 'private', isError: false });
    // Without a `readable` list the whole system is visible, read-only.
    expect(await tool(b, 'read', { path: secret })).toEqual({ text: 'the secret', isError: false });
    expect(await tool(b, 'write', { path: secret, text: 'changed' })).toEqual({ text: 'failed: EROFS', isError: true });
    expect(readFileSync(secret, 'utf8')).toBe('the secret');
    // Root in the sandbox keeps no capability: it cannot remount the read-only view writable.
    const remounted = join(dir, 'remounted.txt');
    expect(await tool(a, 'remount-write', { path: remounted })).toEqual({ text: 'failed: EROFS', isError: true });
    expect(existsSync(remounted)).toBe(false);
  });

  it('without bwrap on the PATH the target is refused with GW_UPSTREAM_SPAWN_FAILED, never started unsandboxed', async () => {
    const lines: string[] = [];
    const g = await gateway({ boxed: escape(boxed()) }, lines);
    const path = process.env.PATH;
    process.env.PATH = join(dir, 'no-bwrap-here');
    try {
      const error = await errorOf(connectClient(g, '/servers/boxed/mcp').then((c) => (open.push(c), tool(c, 'whoami'))));
      expect(error.message).toContain('bwrap not found');
      expect(error.data).toMatchObject({ code: 'GW_UPSTREAM_SPAWN_FAILED' });
    } finally {
      process.env.PATH = path;
    }
    expect(lines.some((line) => line.includes('bubblewrap (bwrap) is not installed'))).toBe(true);
  });
});

describe('sandbox with the gateway\'s other machinery', () => {
  it('a descendant that left the group and emptied its environment dies with the sandboxed child (unsandboxed, it outlives it)', async () => {
    const seconds = 3000 + Math.floor(Math.random() * 900);
    const g = await gateway({ boxed: escape({ writable: [], readable: undefined, network: false }), open: escape() });
    const [inside, outside] = [await client(g, 'boxed'), await client(g, 'open')];
    try {
      expect(await tool(inside, 'linger', { seconds })).toEqual({ text: 'lingering', isError: false });
      expect(await tool(outside, 'linger', { seconds: seconds + 1 })).toEqual({ text: 'lingering', isError: false });
      await expect.poll(() => [sleepers(seconds).length, sleepers(seconds + 1).length], { timeout: 10_000 }).toEqual([1, 1]);
      await g.close();
      await expect.poll(() => sleepers(seconds).length, { timeout: 10_000 }).toBe(0);
      // What the sandbox adds: without it, such a process is out of reach (docs/upstreams.md).
      expect(sleepers(seconds + 1).length).toBe(1);
    } finally {
      for (const pid of [...sleepers(seconds), ...sleepers(seconds + 1)]) process.kill(pid, 'SIGKILL');
    }
  });

  it('the aggregate endpoint reaches the same sandboxed child: the attempts fail there too', async () => {
    const g = await startAggregateGateway({ targets: { boxed: escape(boxed()), open: escape() } });
    open.push(g);
    const c = await connectClient(g, '/mcp');
    open.push(c);
    expect(await tool(c, 'open__read', { path: secret })).toEqual({ text: 'the secret', isError: false });
    expect(await tool(c, 'boxed__read', { path: secret })).toEqual({ text: 'failed: ENOENT', isError: true });
    expect(await tool(c, 'boxed__connect', { port })).toMatchObject({ isError: true });
  });

  it('a stateless 2026-07-28 request reaches the sandboxed child as well', async () => {
    const g = await gateway({ boxed: escape(boxed()) });
    const read = resultOf(await modern(g.mcpUrl('boxed'), 'tools/call', { name: 'read', arguments: { path: secret } }));
    expect({ text: textOf(read), isError: read.isError }).toEqual({ text: 'failed: ENOENT', isError: true });
    const write = resultOf(await modern(g.mcpUrl('boxed'), 'tools/call', { name: 'write', arguments: { path: join(writable, 'stateless.txt'), text: 's' } }));
    expect(textOf(write)).toBe('written');
    expect(readFileSync(join(writable, 'stateless.txt'), 'utf8')).toBe('s');
  });

  it('principalEnv reaches a sandboxed shared child, one pool per principal', async () => {
    const keys = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef0' };
    const config = buildConfig({
      targets: { pooled: { ...escape({ writable: [], readable: undefined, network: false }), principalEnv: { MCP_USER: '{sub}' }, upstream: { mode: 'shared', children: 1 } } },
    });
    const g = await startGateway({ ...config, auth: keyAuth(keys) }, { logger: createTestLogger('silent', undefined), env: {} });
    open.push(g);
    const seen: Array<{ id: string; user: string }> = [];
    for (const who of ['alice', 'bob'] as const) {
      const c = new Client({ name: 'sandbox-test', version: '1.0.0' });
      const url = new URL('/servers/pooled/mcp', g.url);
      await c.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${keys[who]}` } } }));
      open.push(c);
      seen.push(JSON.parse((await tool(c, 'whoami')).text) as { id: string; user: string });
    }
    expect(seen.map((s) => s.user)).toEqual(['alice', 'bob']);
    expect(seen[0]?.id).not.toBe(seen[1]?.id);
  });
});

describe('limits', () => {
  it('a child over its memory limit dies with the limit named in the log; another session carries on', async () => {
    const lines: string[] = [];
    const usable = await cgroupsUsable();
    const g = await gateway({ hog: escape({ writable: [], readable: undefined, network: false }, { memoryMiB: 96 }) }, lines);
    if (!usable) {
      const error = await errorOf(connectClient(g, '/servers/hog/mcp').then((c) => (open.push(c), tool(c, 'whoami'))));
      expect(error.data).toMatchObject({ code: 'GW_UPSTREAM_SPAWN_FAILED' });
      expect(error.message).toContain('limits.memoryMiB needs');
      return;
    }
    const [victim, bystander] = [await client(g, 'hog'), await client(g, 'hog')];
    expect((await tool(victim, 'whoami')).text).not.toBe((await tool(bystander, 'whoami')).text);
    const error = await errorOf(victim.callTool({ name: 'allocate', arguments: { mib: 512 } }));
    expect(error.data).toMatchObject({ code: 'GW_UPSTREAM_EXITED' });
    await expect.poll(() => lines.find((line) => line.includes('limits.memoryMiB')), { timeout: 10_000 }).toBeDefined();
    expect(JSON.parse(lines.find((line) => line.includes('limits.memoryMiB')) as string)).toMatchObject({ limit: 'memoryMiB', value: 96 });
    expect(await tool(bystander, 'allocate', { mib: 16 })).toEqual({ text: 'allocated 16 MiB', isError: false });
  });

  it('open files and CPU seconds hold as rlimits, with or without a sandbox; the CPU limit is named in the log', async () => {
    const lines: string[] = [];
    const g = await gateway({
      files: escape(undefined, { openFiles: 64 }),
      spinner: escape({ writable: [], readable: undefined, network: false }, { cpuSeconds: 1 }),
      free: escape(),
    }, lines);
    const files = await client(g, 'files');
    expect(await tool(files, 'open-files', { count: 100 })).toMatchObject({ text: expect.stringMatching(/^failed: \d+ of 100 opened, then EMFILE/), isError: true });
    const free = await client(g, 'free');
    expect(await tool(free, 'open-files', { count: 100 })).toEqual({ text: '100 of 100 opened', isError: false });
    const spinner = await client(g, 'spinner');
    const error = await errorOf(spinner.callTool({ name: 'spin', arguments: {} }));
    expect(error.data).toMatchObject({ code: 'GW_UPSTREAM_EXITED' });
    expect(JSON.parse(lines.find((line) => line.includes('limits.cpuSeconds')) as string)).toMatchObject({ limit: 'cpuSeconds', value: 1 });
    expect(await tool(files, 'open-files', { count: 10 })).toEqual({ text: '10 of 10 opened', isError: false });
  });
});
