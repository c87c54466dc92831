/**
 * The outside probe of issue 30 on step-up beyond tools and resources: a prompt and a tool that need
 * a scope the caller's API key lacks, asked for on every path (the server's, `/mcp`, a group, a
 * virtual server's `as` pick, WebSocket, legacy SSE, 2026) in every spelling (case, full-width,
 * padding), one at a time and inside a 2025-03-26 JSON-RPC batch; and a 2025-11-25 task-augmented
 * call of the stepped-up tool. Nothing refused reaches the (hostile) server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { modernDriver, sessionDriver, sseDriver, wsDriver, type Answer, type Driver, type MatrixGateway } from '../support/chain-matrix.ts';
import { createTestLogger } from '../support/gateway.ts';
import { fixture, rpc, type Recorded } from '../support/recorder.ts';

const NARROW = 'narrow-step-key-0123456789abcdef';
const WIDE = 'wide-step-key-0123456789abcdef00';

let gw: RunningGateway;
let dir: string;
const received = (): Recorded[] => readFileSync(join(dir, 'received.ndjson'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Recorded);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'attack-step-up-'));
  const config = parseConfig({
    mcpServers: {
      s: {
        command: process.execPath,
        args: [fixture('attacker-server.mjs'), `--record-to=${join(dir, 'received.ndjson')}`],
        requiredScopes: { prompts: { 'admin_*': ['admin'] }, tools: { 'ask_*': ['admin'] } },
      },
      other: { command: process.execPath, args: [fixture('judged-server.mjs'), '--root=/nonexistent-other'] },
    },
    gateway: {
      port: 0,
      auth: { apiKeys: [{ name: 'narrow', key: NARROW, scopes: ['mcp'] }, { name: 'wide', key: WIDE, scopes: ['mcp', 'admin'] }], scopes: ['mcp'], stepUp: 'http' },
      groups: { g: { servers: ['s'] } },
      virtualServers: { v: { tools: [{ server: 's', tool: 'ask_sample', as: 'consult' }], prompts: [{ server: 's', prompt: 'admin_secret', as: 'boss' }] } },
    },
  });
  gw = await startGateway(config, { logger: createTestLogger('warn', undefined) });
});

afterAll(async () => {
  await gw?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const matrix = (): MatrixGateway => ({ gw }) as unknown as MatrixGateway;
const codeOf = (a: Answer) => (a.body.error as { data?: { code?: string } } | undefined)?.data?.code;
const SPELLINGS = ['admin_secret', 'ADMIN_SECRET', '\uFF41dmin_secret', ' admin_secret'];

type Row = [string, (m: MatrixGateway, key: string) => Promise<Driver> | Driver, (n: string) => string];
const prefixed = (n: string) => `s__${n}`;
const ROWS: Row[] = [
  ['server path', (m, k) => sessionDriver(m, '/servers/s/mcp', k), (n) => n],
  ['aggregate', (m, k) => sessionDriver(m, '/mcp', k), prefixed],
  ['group', (m, k) => sessionDriver(m, '/groups/g/mcp', k), prefixed],
  ['virtual', (m, k) => sessionDriver(m, '/virtual/v/mcp', k), (n) => n.replace(/admin_secret/i, 'boss').replace(/ask_sample/i, 'consult')],
  ['WebSocket', (m, k) => wsDriver(m, '/servers/s/ws', k), (n) => n],
  ['legacy SSE', (m, k) => sseDriver(m, '/servers/s/sse', k), (n) => n],
  ['2026', (m, k) => modernDriver(m, '/servers/s/mcp', k), (n) => n],
  ['2026 aggregate', (m, k) => modernDriver(m, '/mcp', k), prefixed],
];

describe.each(ROWS)('step-up on prompts and tools: %s', (_name, open, name) => {
  it('a key without the scope is refused in every spelling; one with it is served', async () => {
    const narrow = await open(matrix(), NARROW);
    const wide = await open(matrix(), WIDE);
    try {
      for (const spelling of SPELLINGS) {
        const got = await narrow.request('prompts/get', { name: name(spelling), arguments: {} });
        expect(['GW_STEP_UP_REQUIRED', 'GW_UNKNOWN_PROMPT', 'GW_INVALID_PARAMS', undefined], `${name(spelling)}: ${JSON.stringify(got.body)}`).toContain(codeOf(got));
        expect(got.body.error, JSON.stringify(got.body)).toBeDefined();
      }
      for (const spelling of ['ask_sample', 'ASK_SAMPLE', '\uFF41sk_sample']) {
        const called = await narrow.request('tools/call', { name: name(spelling), arguments: {} });
        expect(called.body.error, `${name(spelling)}: ${JSON.stringify(called.body)}`).toBeDefined();
      }
      const exact = await narrow.request('prompts/get', { name: name('admin_secret'), arguments: {} });
      expect(codeOf(exact)).toBe('GW_STEP_UP_REQUIRED');
      const served = await wide.request('prompts/get', { name: name('admin_secret'), arguments: {} });
      expect(JSON.stringify(served.body.result ?? null)).toContain('prompt admin_secret');
    } finally {
      await narrow.close();
      await wide.close();
    }
  });
});

describe('batches and tasks', () => {
  it('a 2025-03-26 batch judges each of its requests', async () => {
    const s = await rpc.initialize(new URL('/servers/s/mcp', gw.url), '2025-03-26', { authorization: `Bearer ${NARROW}` });
    try {
      const batch = [
        { jsonrpc: '2.0', id: 901, method: 'prompts/get', params: { name: 'ADMIN_secret', arguments: { tag: 'batch-probe' } } },
        { jsonrpc: '2.0', id: 902, method: 'tools/call', params: { name: 'ask_sample', arguments: { tag: 'batch-probe' } } },
        { jsonrpc: '2.0', id: 903, method: 'tools/call', params: { name: 'echo', arguments: { text: 'batch-ok' } } },
      ];
      const a = await s.postRaw(JSON.stringify(batch));
      const answers = a.events.flatMap((e) => (Array.isArray(e) ? e : [e])) as { id: number; error?: { data?: { code?: string } }; result?: unknown }[];
      expect(answers.find((x) => x.id === 901)?.error?.data?.code, a.text).toBe('GW_STEP_UP_REQUIRED');
      expect(answers.find((x) => x.id === 902)?.error?.data?.code, a.text).toBe('GW_STEP_UP_REQUIRED');
      expect(JSON.stringify(answers.find((x) => x.id === 903)?.result)).toContain('batch-ok');
    } finally {
      await s.delete();
    }
  });

  it('a task-augmented call of a stepped-up tool is refused like the call', async () => {
    const d = await sessionDriver(matrix(), '/servers/s/mcp', NARROW);
    try {
      const a = await d.request('tools/call', { name: 'ask_sample', arguments: { tag: 'task-probe' }, task: { ttl: 1000 } });
      expect(codeOf(a), JSON.stringify(a.body)).toBe('GW_STEP_UP_REQUIRED');
    } finally {
      await d.close();
    }
  });

  it('nothing refused reached the server', () => {
    const leaked = received().filter((r) => /batch-probe|task-probe/.test(JSON.stringify(r.params ?? {})) || (r.method === 'prompts/get' && !/admin_secret/.test(JSON.stringify(r.params))));
    expect(leaked).toEqual([]);
    // The narrow key's spellings never arrived: only the wide key's exact name did, once per row.
    const prompts = received().filter((r) => r.method === 'prompts/get');
    expect(prompts.length).toBe(ROWS.length);
  });
});
