/**
 * The outside probe of issue 30, rerun on the landed build against a hostile upstream
 * (fixtures/attacker-server.mjs) reached by every path: what a server asks the client
 * (sampling, elicitation) and every result it sends pass redaction on every path and era; a
 * SEP-2663 task's result through the aggregate too; a prompt denied by policy stays denied in
 * every spelling, also in completions; resource URIs the server lists in look-alike spellings of
 * a denied folder are hidden; subscriptions to them are refused; a tools list that repeats a
 * pinned name with words for the model never shows those words.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { parseConfig } from '../../src/config/load.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { modernDriver, sessionDriver, sseDriver, wsDriver, type Answer, type Driver, type MatrixGateway } from '../support/chain-matrix.ts';
import { createTestLogger } from '../support/gateway.ts';
import { envelope, modern, readSseFrames, standardHeaders } from '../support/modern.ts';
import { eventually } from '../support/pinning.ts';
import { fixture, type Recorded } from '../support/recorder.ts';

const KEY = 'AKIAIOSFODNN7EXAMPLE';
const ALICE = 'alice-attack-key-0123456789abcdef';
/** A caller with no 2026 host yet (tasks, SEP-2663: the extension a host was opened with is the one its upstream saw). */
const CAROL = 'carol-attack-key-0123456789abcdef';
const ROOT = '/srv/attack';
const ANY = z.object({}).passthrough();
const EXT = { 'io.modelcontextprotocol/tasks': {} };

let gw: RunningGateway;
let dir: string;
const audit: string[] = [];
const received = (): Recorded[] =>
  readFileSync(join(dir, 'received.ndjson'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Recorded);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'attack-hostile-'));
  const hostile = { command: process.execPath, args: [fixture('attacker-server.mjs'), `--root=${ROOT}`, `--record-to=${join(dir, 'received.ndjson')}`], pinning: 'block', redact: { patterns: ['AKIA[0-9A-Z]{16}'] } };
  const config = parseConfig({
    mcpServers: { hostile, other: { command: process.execPath, args: [fixture('judged-server.mjs'), '--root=/nonexistent-other'] } },
    gateway: {
      port: 0,
      auth: { apiKeys: [{ name: 'alice', key: ALICE }, { name: 'carol', key: CAROL }] },
      logging: { level: 'info', audit: 'on' },
      pinning: { mode: 'off', file: join(dir, 'pins.json') },
      groups: { g: { servers: ['hostile'] } },
      policy: {
        rules: [
          { effect: 'allow', principals: ['*'], servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'] },
          { effect: 'deny', principals: ['*'], servers: ['hostile'], prompts: ['admin_*'], resources: [`file://${ROOT}/secret/*`] },
        ],
      },
      virtualServers: {
        v: {
          tools: ['echo', 'ask_sample', 'ask_elicit', 'leak', 'leak_big'].map((tool) => ({ server: 'hostile', tool })),
          prompts: [{ server: 'hostile', prompt: 'greet' }, { server: 'hostile', prompt: 'admin_secret', as: 'boss' }],
          resources: [{ server: 'hostile', uri: `file://${ROOT}/*` }],
        },
        // Picks only the public folder: no spelling reaches beside it.
        pub: { resources: [{ server: 'hostile', uri: `file://${ROOT}/public/*` }] },
      },
    },
  });
  gw = await startGateway(config, { logger: createTestLogger('info', audit) });
});

afterAll(async () => {
  await gw?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const matrix = (): MatrixGateway => ({ gw }) as unknown as MatrixGateway;
const errorOf = (a: Answer) => a.body.error as { code: number; data?: Record<string, any> } | undefined;

async function sdkClient(path: string, capabilities: Record<string, unknown>): Promise<{ client: Client; seen: unknown[] }> {
  const client = new Client({ name: 'probe', version: '1' }, { capabilities });
  const seen: unknown[] = [];
  if ('sampling' in capabilities) {
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      seen.push(request.params);
      return { role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'probe' };
    });
  }
  if ('elicitation' in capabilities) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      seen.push(request.params);
      return { action: 'accept', content: { ok: true } };
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(path, gw.url), { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } }));
  return { client, seen };
}

describe('what a hostile server asks the client is redacted on every path', () => {
  for (const [path, prefix] of [['/servers/hostile/mcp', ''], ['/mcp', 'hostile__'], ['/groups/g/mcp', 'hostile__'], ['/virtual/v/mcp', '']] as const) {
    it(`sampling and elicitation on ${path}`, async () => {
      const { client, seen } = await sdkClient(path, { sampling: {}, elicitation: {} });
      try {
        for (const tool of ['ask_sample', 'ask_elicit']) {
          const result = await client.callTool({ name: `${prefix}${tool}`, arguments: {} });
          expect(JSON.stringify(result), tool).not.toContain(KEY);
        }
        expect(seen).toHaveLength(2);
        expect(JSON.stringify(seen)).toContain('[REDACTED]');
        expect(JSON.stringify(seen)).not.toContain(KEY);
      } finally {
        await client.close();
      }
    });
  }

  it('a 2026 request gets the question as input_required, redacted', async () => {
    for (const [path, name] of [['/servers/hostile/mcp', 'ask_sample'], ['/mcp', 'hostile__ask_elicit']] as const) {
      const caps = { sampling: {}, elicitation: {} };
      const a = await modern(new URL(path, gw.url), 'tools/call', { name, arguments: {} }, { headers: { authorization: `Bearer ${ALICE}` }, meta: { 'io.modelcontextprotocol/clientCapabilities': caps } });
      expect(a.text, `${path}: ${a.text}`).toContain('input_required');
      expect(a.text).not.toContain(KEY);
    }
  });
});

describe('results are redacted in every block, on every path and era, tasks included', () => {
  it('text, embedded resources and structuredContent', async () => {
    const m = matrix();
    const drivers: [Driver, string][] = [
      [await sessionDriver(m, '/servers/hostile/mcp', ALICE), 'leak'],
      [await sessionDriver(m, '/mcp', ALICE), 'hostile__leak'],
      [await wsDriver(m, '/servers/hostile/ws', ALICE), 'leak'],
      [await sseDriver(m, '/servers/hostile/sse', ALICE), 'leak'],
      [modernDriver(m, '/mcp', ALICE), 'hostile__leak'],
      [modernDriver(m, '/virtual/v/mcp', ALICE), 'leak'],
    ];
    try {
      for (const [d, name] of drivers) {
        for (const tool of [name, name.replace('leak', 'leak_big')]) {
          const a = await d.request('tools/call', { name: tool, arguments: {} });
          expect(JSON.stringify(a.body.result ?? null), tool).toContain('[REDACTED]');
          expect(JSON.stringify(a.body), tool).not.toContain(KEY);
        }
      }
    } finally {
      await Promise.all(drivers.map(([d]) => d.close()));
    }
  });

  it("a SEP-2663 task's result through the aggregate (2025 session and 2026 request)", async () => {
    const { client } = await sdkClient('/mcp', { extensions: EXT });
    try {
      const created = await client.request({ method: 'tools/call', params: { name: 'hostile__leak_task', arguments: {} } }, ANY);
      expect(created.resultType).toBe('task');
      const taskId = created.taskId as string;
      const done = await client.request({ method: 'tasks/get', params: { taskId } }, ANY);
      expect(done.status).toBe('completed');
      expect(JSON.stringify(done)).toContain('[REDACTED]');
      expect(JSON.stringify(done)).not.toContain(KEY);
    } finally {
      await client.close();
    }
    // The same member on its own path (no sealed ids there): its task result is never handed out in clear.
    const single = await sdkClient('/servers/hostile/mcp', { extensions: EXT });
    try {
      const created = await single.client.request({ method: 'tools/call', params: { name: 'leak_task', arguments: {} } }, ANY);
      expect(JSON.stringify(created)).not.toContain(KEY);
      if (typeof created.taskId === 'string') {
        const polled = await single.client.request({ method: 'tasks/get', params: { taskId: created.taskId } }, ANY).catch((err: unknown) => ({ refused: String(err) }));
        expect(JSON.stringify(polled)).not.toContain(KEY);
      }
    } finally {
      await single.client.close();
    }
    const headers = { authorization: `Bearer ${CAROL}` };
    const meta = { 'io.modelcontextprotocol/clientCapabilities': { extensions: EXT } };
    const created = await modern(new URL('/mcp', gw.url), 'tools/call', { name: 'hostile__leak_task', arguments: {} }, { headers, meta });
    const taskId = (created.json.result as Record<string, unknown> | undefined)?.taskId as string;
    expect(taskId, created.text).toMatch(/^task1\./);
    const done = await modern(new URL('/mcp', gw.url), 'tasks/get', { taskId }, { headers, meta });
    expect(done.text).toContain('completed');
    expect(done.text).not.toContain(KEY);
  });
});

describe('a prompt denied by policy, in every spelling and every place it is named', () => {
  it('prompts/get and completion/complete refuse it; lists hide it', async () => {
    const m = matrix();
    const rows: [Driver, (n: string) => string][] = [
      [await sessionDriver(m, '/servers/hostile/mcp', ALICE), (n) => n],
      [await sessionDriver(m, '/mcp', ALICE), (n) => `hostile__${n}`],
      [await wsDriver(m, '/servers/hostile/ws', ALICE), (n) => n],
      [modernDriver(m, '/servers/hostile/mcp', ALICE), (n) => n],
      [await sessionDriver(m, '/virtual/v/mcp', ALICE), (n) => (n.toLowerCase() === 'admin_secret' ? 'boss' : n)],
    ];
    try {
      for (const [d, name] of rows) {
        const listed = await d.request('prompts/list', {});
        expect(JSON.stringify(listed.body)).not.toMatch(/admin_secret|boss/);
        for (const spelling of ['admin_secret', 'ADMIN_SECRET', '\uFF41dmin_secret', 'admin_secret ']) {
          const got = await d.request('prompts/get', { name: name(spelling), arguments: {} });
          expect(errorOf(got), `${name(spelling)}: ${JSON.stringify(got.body)}`).toBeDefined();
          const completed = await d.request('completion/complete', { ref: { type: 'ref/prompt', name: name(spelling) }, argument: { name: 'a', value: '' } });
          expect(errorOf(completed), `completion ${name(spelling)}: ${JSON.stringify(completed.body)}`).toBeDefined();
        }
      }
    } finally {
      await Promise.all(rows.map(([d]) => d.close()));
    }
    const leaked = received().filter((r) => ['prompts/get', 'completion/complete'].includes(r.method ?? '') && /admin|ＡＤＭＩＮ|ａdmin/i.test(JSON.stringify(r.params)));
    expect(leaked).toEqual([]);
  });
});

describe('resource URIs a hostile server lists, subscriptions and completions', () => {
  it('look-alike spellings of a denied folder are hidden from lists and refused for subscribe and completion', async () => {
    const m = matrix();
    const rows: [Driver, (u: string) => string][] = [
      [await sessionDriver(m, '/servers/hostile/mcp', ALICE), (u) => u],
      [await sessionDriver(m, '/mcp', ALICE), (u) => `hostile+${u}`],
      [await sseDriver(m, '/servers/hostile/sse', ALICE), (u) => u],
      [modernDriver(m, '/servers/hostile/mcp', ALICE), (u) => u],
      [await sessionDriver(m, '/virtual/v/mcp', ALICE), (u) => `hostile+${u}`],
    ];
    try {
      for (const [d, uri] of rows) {
        const listed = JSON.stringify((await d.request('resources/list', {})).body);
        expect(listed).toContain('public/x.txt');
        expect(listed, listed).not.toMatch(/secret|%73ecret/i);
        for (const spelling of [`file://${ROOT}/public/../secret/a.txt`, `FILE://${ROOT}/secret/b.txt`, `file://localhost${ROOT}/%73ecret/c.txt`]) {
          const sub = await d.request('resources/subscribe', { uri: uri(spelling) });
          expect(errorOf(sub), `subscribe ${spelling}: ${JSON.stringify(sub.body)}`).toBeDefined();
          const completed = await d.request('completion/complete', { ref: { type: 'ref/resource', uri: uri(spelling) }, argument: { name: 'a', value: '' } });
          expect(errorOf(completed), `completion ${spelling}: ${JSON.stringify(completed.body)}`).toBeDefined();
        }
      }
    } finally {
      await Promise.all(rows.map(([d]) => d.close()));
    }
    const leaked = received().filter((r) => ['resources/subscribe', 'completion/complete'].includes(r.method ?? '') && /secret/i.test(JSON.stringify(r.params)));
    expect(leaked).toEqual([]);
  });
});

describe("a virtual server's resource pick", () => {
  it('holds against every spelling that leaves the picked folder', async () => {
    const m = matrix();
    const drivers = [await sessionDriver(m, '/virtual/pub/mcp', ALICE), modernDriver(m, '/virtual/pub/mcp', ALICE)];
    const outside = [
      `file://${ROOT}/public/../private/p.txt`,
      `file://${ROOT}/public/%2e%2e/private/p.txt`,
      `file://${ROOT}/public/..%2Fprivate/p.txt`,
      `file://${ROOT}/public/..\\private/p.txt`,
      `file://${ROOT}/public/./../private/p.txt`,
      `FILE://LOCALHOST${ROOT}/public/../private/p.txt`,
      `file://${ROOT}/publicity/p.txt`,
      `file://${ROOT}/public`,
    ];
    try {
      for (const d of drivers) {
        for (const uri of outside) {
          const a = await d.request('resources/read', { uri: `hostile+${uri}` });
          expect(errorOf(a), `${uri}: ${JSON.stringify(a.body)}`).toBeDefined();
        }
        const inside = await d.request('resources/read', { uri: `hostile+file://${ROOT}/public/./x.txt` });
        expect(JSON.stringify(inside.body)).toContain(`content of file://${ROOT}/public/x.txt`);
      }
    } finally {
      await Promise.all(drivers.map((d) => d.close()));
    }
    expect(received().filter((r) => r.method === 'resources/read' && /private|publicity/.test(JSON.stringify(r.params)))).toEqual([]);
  });
});

describe('a 2026 listen stream asking for look-alike spellings of a denied folder', () => {
  it('acknowledges and subscribes upstream only what the caller may read', async () => {
    const spellings = [`file://${ROOT}/public/../secret/a.txt`, `FILE://${ROOT}/secret/b.txt`, `file://localhost${ROOT}/%73ecret/c.txt`, `file://${ROOT}//secret/e.txt`];
    for (const [path, uri] of [['/servers/hostile/mcp', (u: string) => u], ['/mcp', (u: string) => `hostile+${u}`]] as const) {
      const abort = new AbortController();
      const params = { notifications: { resourceSubscriptions: [...spellings, `file://${ROOT}/public/x.txt`].map(uri) }, _meta: envelope() };
      const headers = { ...standardHeaders('subscriptions/listen', {}), authorization: `Bearer ${ALICE}` };
      const res = await fetch(new URL(path, gw.url), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 'L1', method: 'subscriptions/listen', params }), signal: abort.signal });
      const { frames, reading } = readSseFrames(res);
      try {
        await expect.poll(() => frames.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
        expect(frames[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
        const granted = JSON.stringify(frames[0]?.params?.notifications ?? {});
        expect(granted, path).toContain('public/x.txt');
        expect(granted, `${path}: ${granted}`).not.toMatch(/secret/i);
      } finally {
        abort.abort();
        await reading;
      }
    }
    const subscribed = received().filter((r) => r.method === 'resources/subscribe' && /secret/i.test(JSON.stringify(r.params)));
    expect(subscribed).toEqual([]);
  });
});

describe('pinning (block): a list that repeats a pinned name', () => {
  it('the second definition of `echo`, and `ECHO`, never reach the client', async () => {
    const m = matrix();
    for (const [path, echo, flip] of [['/servers/hostile/mcp', 'echo', 'flip'], ['/mcp', 'hostile__echo', 'hostile__flip']] as const) {
      const d = await sessionDriver(m, path, ALICE);
      try {
        const first = JSON.stringify((await d.request('tools/list', {})).body);
        expect(first).toContain('Echoes the text back.');
        const lists = () => received().filter((r) => r.method === 'tools/list').length;
        const before = lists();
        await d.request('tools/call', { name: flip, arguments: {} });
        // list_changed makes the gateway read the list again at once.
        await eventually(`${path}: the list read again`, async () => (lists() > before ? true : undefined));
        const listed = JSON.stringify((await d.request('tools/list', {})).body);
        expect(listed, listed).not.toContain('IGNORE ALL PREVIOUS');
        const upper = await d.request('tools/call', { name: echo.replace('echo', 'ECHO'), arguments: { text: 'x' } });
        expect(JSON.stringify(upper.body)).not.toContain('echo: x');
      } finally {
        await d.close();
      }
    }
  });
});

describe('the audit trail', () => {
  it('names the refused prompt and the answered server-to-client requests', () => {
    const lines = audit.filter((l) => l.includes('"audit":true'));
    expect(lines.some((l) => l.includes('"prompt":"admin_secret"') && l.includes('"outcome":"denied"'))).toBe(true);
    expect(lines.some((l) => l.includes('"method":"elicitation/create"') && l.includes('"server":"hostile"'))).toBe(true);
    // A SEP-2663 poll's record names the tool whose result it handed out.
    expect(lines.some((l) => l.includes('"method":"tasks/get"') && l.includes('"tool":"leak_task"') && l.includes('"server":"hostile"')), lines.filter((l) => l.includes('tasks/get')).join('\n')).toBe(true);
  });
});
