/**
 * A contained child sees itself, says why it died, and cannot be handed a host folder by another
 * child (issue 31 items 2 and 3, issue 30 item 8): real gateway, real bubblewrap, the SDK client.
 * - Its script lives under /tmp in a folder with a space (hidden by the private /tmp before): it
 *   starts in both sandbox modes, and sees that file, not its neighbours.
 * - A child that exits before answering: its last stderr lines (secrets scrubbed) in the error's
 *   `data` and message, on the server path (2025) and a stateless 2026 request, sandboxed or not,
 *   and in the warn line of the log.
 * - Nested writable paths: t1's child swaps t2's writable folder for a symlink to a host folder;
 *   t2 is refused at spawn and the host folder stays empty.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxConfig } from '../../src/config/types.ts';
import { connectClient, errorOf, startAggregateGateway, textOf } from '../support/aggregate.ts';
import { startTestGateway, type TestGateway, type TestTarget } from '../support/gateway.ts';
import { errorOf as modernError, modern } from '../support/modern.ts';
import { fixture } from '../support/recorder.ts';

let hidden: string;
let script: string;
let state: string;
const open: Array<{ close(): Promise<void> }> = [];

beforeAll(() => {
  // Under the private /tmp, with a space: where a fresh clone of the suite may well live.
  hidden = mkdtempSync(join(tmpdir(), 'sb self '));
  script = join(hidden, 'my server.mjs');
  copyFileSync(fixture('escape-server.mjs'), script);
  writeFileSync(join(hidden, 'neighbour.txt'), 'not yours');
  state = mkdtempSync('/var/tmp/sb-nest-');
});
afterAll(() => {
  rmSync(hidden, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
});
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close().catch(() => undefined);
});

async function gateway(targets: Record<string, TestTarget>, logLines?: string[]): Promise<TestGateway> {
  const g = await startTestGateway({ targets, ...(logLines === undefined ? {} : { logLines }) });
  open.push(g);
  return g;
}

async function call(g: TestGateway, target: string, name: string, args: Record<string, unknown> = {}): Promise<{ text: string; isError: boolean }> {
  const c: Client = await connectClient(g, `/servers/${target}/mcp`);
  open.push(c);
  const result = await c.callTool({ name, arguments: args });
  return { text: textOf(result), isError: result.isError === true };
}

const closed: SandboxConfig = { writable: [], readable: undefined, network: false };

describe('a contained child can always see itself', () => {
  it('a script under /tmp in a folder with a space starts in every sandbox mode; its neighbours stay hidden', async () => {
    const g = await gateway({
      whole: { command: process.execPath, args: [script], sandbox: closed },
      narrow: { command: process.execPath, args: [script], sandbox: { ...closed, readable: [] } },
      relative: { command: process.execPath, args: ['./my server.mjs'], cwd: hidden, sandbox: closed },
    });
    for (const target of ['whole', 'narrow', 'relative']) {
      expect(JSON.parse((await call(g, target, 'whoami')).text), target).toMatchObject({ pid: expect.any(Number) });
    }
    // The script's own file is bound, not its folder; the working folder (`cwd`) is, read-only.
    expect(await call(g, 'whole', 'read', { path: join(hidden, 'neighbour.txt') })).toEqual({ text: 'failed: ENOENT', isError: true });
    expect(await call(g, 'relative', 'read', { path: './neighbour.txt' })).toEqual({ text: 'not yours', isError: false });
    expect(await call(g, 'relative', 'write', { path: './neighbour.txt', text: 'mine' })).toEqual({ text: 'failed: EROFS', isError: true });
  });
});

describe('a child that dies before answering says why', () => {
  const secret = 'sk-live-0123456789abcdef';
  const crash = (sandbox?: SandboxConfig): TestTarget => ({
    command: process.execPath,
    args: ['-e', "process.stderr.write('starting\\n'); process.stderr.write('fatal: API_TOKEN ' + process.env.API_TOKEN + ' rejected\\n'); process.exit(3)"],
    env: { API_TOKEN: secret },
    ...(sandbox === undefined ? {} : { sandbox }),
  });

  it('its last stderr lines, scrubbed, reach the client on the server path and a 2026 request, sandboxed or not, and the warn log line', async () => {
    const lines: string[] = [];
    const g = await gateway({ boxed: crash(closed), open: crash() }, lines);
    for (const target of ['boxed', 'open']) {
      const error = await errorOf(call(g, target, 'whoami'));
      expect(error.data, target).toMatchObject({ code: 'GW_UPSTREAM_EXITED', exitCode: 3, stderr: ['starting', 'fatal: API_TOKEN [redacted] rejected'] });
      expect(error.message).toContain('fatal: API_TOKEN [redacted] rejected');
      const modernAnswer = modernError(await modern(g.mcpUrl(target), 'tools/call', { name: 'whoami', arguments: {} }));
      // A stateless request starts a child of its own: exited, or (the start failed) unavailable, saying why either way.
      expect(modernAnswer.data, target).toMatchObject({ code: expect.stringMatching(/^GW_(UPSTREAM_EXITED|TARGET_UNAVAILABLE)$/), stderr: expect.arrayContaining(['fatal: API_TOKEN [redacted] rejected']) });
      expect(JSON.stringify(error.data) + JSON.stringify(modernAnswer)).not.toContain(secret);
    }
    const warn = lines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((line) => line.level === 40 && line.msg.startsWith('upstream closed unexpectedly'));
    expect(warn.length).toBeGreaterThan(0);
    expect(warn[0]?.msg).toContain('fatal: API_TOKEN [redacted] rejected');
    expect(lines.join('\n')).not.toContain(secret);
  });

  it('on the aggregate endpoint, the list names the sandboxed server unavailable with its stderr line', async () => {
    const g = await startAggregateGateway({ targets: { boxed: crash(closed), fine: { command: process.execPath, args: [fixture('escape-server.mjs')] } } });
    open.push(g);
    const c = await connectClient(g, '/mcp');
    open.push(c);
    const list = await c.listTools();
    expect(list.tools.map((tool) => tool.name)).toContain('fine__whoami');
    const unavailable = JSON.stringify(list._meta?.['switchboard/unavailable']);
    expect(unavailable).toContain('fatal: API_TOKEN [redacted] rejected');
    expect(unavailable).not.toContain(secret);
  });
});

describe('nested writable paths', () => {
  it('a writable path another child turned into a symlink to a host folder is refused at spawn; the host folder stays untouched', async () => {
    const shared = join(state, 'shared');
    const inner = join(shared, 'inner');
    const host = join(state, 'host');
    mkdirSync(inner, { recursive: true });
    mkdirSync(host);
    const escape = fixture('escape-server.mjs');
    const g = await gateway({
      t1: { command: process.execPath, args: [escape], sandbox: { ...closed, writable: [shared] } },
      t2: { command: process.execPath, args: [escape], sandbox: { ...closed, writable: [inner] } },
    });
    expect(await call(g, 't2', 'write', { path: join(inner, 'before.txt'), text: 'ok' })).toEqual({ text: 'written', isError: false });
    expect(await call(g, 't1', 'symlink', { path: inner, target: host })).toEqual({ text: 'linked', isError: false });
    const error = await errorOf(call(g, 't2', 'write', { path: join(inner, 'escaped.txt'), text: 'out' }));
    expect(error.data).toMatchObject({ code: 'GW_UPSTREAM_SPAWN_FAILED' });
    expect(error.message).toContain('passes through a symlink');
    expect(readdirSync(host)).toEqual([]);
    expect(existsSync(join(host, 'escaped.txt'))).toBe(false);
  });
});
