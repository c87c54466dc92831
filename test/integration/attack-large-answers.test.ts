/**
 * The outside probe of issue 30: answers past 16 KiB are forwarded as the line they were read from
 * (jsonrpc/wire-text.ts), so every judgment that changes an answer must also drop that line. A
 * hostile server pads its lists (fixtures/attacker-server.mjs --big) and the probe checks, on the
 * server's own path over each transport and era, that overrides, policy hiding, pinning and
 * redaction still shape what the client sees.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { modernDriver, sessionDriver, sseDriver, wsDriver, type Driver, type MatrixGateway } from '../support/chain-matrix.ts';
import { createTestLogger } from '../support/gateway.ts';
import { eventually } from '../support/pinning.ts';
import { fixture, type Recorded } from '../support/recorder.ts';

const KEY = 'AKIAIOSFODNN7EXAMPLE';
const ALICE = 'alice-large-key-0123456789abcdef';
const ROOT = '/srv/large';

let gw: RunningGateway;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'attack-large-'));
  const args = [fixture('attacker-server.mjs'), '--big', `--root=${ROOT}`, `--record-to=${join(dir, 'received.ndjson')}`];
  const config = parseConfig({
    mcpServers: {
      big: {
        command: process.execPath,
        args,
        pinning: 'block',
        redact: { patterns: ['AKIA[0-9A-Z]{16}'] },
        overrides: { tools: { leak: { name: 'fetch_report', description: 'Operator wording' } }, prompts: { greet: { name: 'hello' } } },
      },
    },
    gateway: {
      port: 0,
      auth: { apiKeys: [{ name: 'alice', key: ALICE }] },
      pinning: { mode: 'off', file: join(dir, 'pins.json') },
      policy: {
        rules: [
          { effect: 'allow', principals: ['*'], servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'] },
          { effect: 'deny', principals: ['*'], servers: ['big'], tools: ['ask_*'], prompts: ['admin_*'], resources: [`file://${ROOT}/secret/*`] },
        ],
      },
    },
  });
  gw = await startGateway(config, { logger: createTestLogger('warn', undefined) });
});

afterAll(async () => {
  await gw?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const matrix = (): MatrixGateway => ({ gw }) as unknown as MatrixGateway;
const received = (): Recorded[] => readFileSync(join(dir, 'received.ndjson'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Recorded);

const PATHS: [string, (m: MatrixGateway) => Promise<Driver> | Driver][] = [
  ['session', (m) => sessionDriver(m, '/servers/big/mcp', ALICE)],
  ['WebSocket', (m) => wsDriver(m, '/servers/big/ws', ALICE)],
  ['legacy SSE', (m) => sseDriver(m, '/servers/big/sse', ALICE)],
  ['2026', (m) => modernDriver(m, '/servers/big/mcp', ALICE)],
];

describe.each(PATHS)('large lists on %s', (_name, open) => {
  let d: Driver;
  beforeAll(async () => {
    d = await open(matrix());
  });
  afterAll(async () => {
    await d?.close();
  });

  it('overrides rename, policy hides, in lists past 16 KiB', async () => {
    const tools = JSON.stringify((await d.request('tools/list', {})).body);
    expect(tools.length).toBeGreaterThan(16 * 1024);
    expect(tools).toContain('"fetch_report"');
    expect(tools).toContain('Operator wording');
    expect(tools).not.toMatch(/"leak"|"ask_sample"|"ask_elicit"/);
    const prompts = JSON.stringify((await d.request('prompts/list', {})).body);
    expect(prompts).toContain('"hello"');
    expect(prompts).not.toMatch(/admin_secret|"greet"/);
    const resources = JSON.stringify((await d.request('resources/list', {})).body);
    expect(resources).toContain('public/x.txt');
    expect(resources).not.toMatch(/secret|%73ecret/i);
  });

  it('a renamed tool answers under its new name, redacted', async () => {
    const a = await d.request('tools/call', { name: 'fetch_report', arguments: {} });
    expect(JSON.stringify(a.body)).toContain('[REDACTED]');
    expect(JSON.stringify(a.body)).not.toContain(KEY);
  });
});

describe('pinning on a large list', () => {
  it('the injected duplicate of a pinned tool is withheld from a list past 16 KiB', async () => {
    const d = await sessionDriver(matrix(), '/servers/big/mcp', ALICE);
    try {
      expect(JSON.stringify((await d.request('tools/list', {})).body)).toContain('Echoes the text back.');
      const lists = () => received().filter((r) => r.method === 'tools/list').length;
      const before = lists();
      await d.request('tools/call', { name: 'flip', arguments: {} });
      await eventually('the list read again', async () => (lists() > before ? true : undefined));
      const listed = JSON.stringify((await d.request('tools/list', {})).body);
      expect(listed.length).toBeGreaterThan(16 * 1024);
      expect(listed).not.toContain('IGNORE ALL PREVIOUS');
    } finally {
      await d.close();
    }
  });
});
