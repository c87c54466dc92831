/**
 * Attacks on the reworked 2026-07-28 path over the wire, on every path that serves one target's
 * tools (its own, the aggregate `/mcp`, a group, a virtual server): the depth check that now counts
 * `{`/`[` before it scans (nesting one level past the limit in every spelling refused, decoys in
 * strings that only look deep served unchanged), and a client that goes away before its one JSON
 * answer (the call cancelled upstream). Raw requests, real stdio children (the recorder fixture).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TargetExposureConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { MAX_JSON_DEPTH } from '../../src/jsonrpc/depth.ts';
import { buildAggregateConfig } from '../support/aggregate.ts';
import { createTestLogger } from '../support/gateway.ts';
import { envelope, modern, resultOf, standardHeaders } from '../support/modern.ts';
import { recorderServer, textOf, type Recorded } from '../support/recorder.ts';

let gw: RunningGateway;

const picks: TargetExposureConfig = {
  prefix: '',
  eager: false,
  tools: { allow: [], deny: [] },
  prompts: { allow: [], deny: [] },
  resources: { allow: [], deny: [] },
  picks: { tools: ['echo', 'slow', 'history'], prompts: [], resources: [] },
};

beforeAll(async () => {
  const base = buildAggregateConfig({ targets: { rec: recorderServer(), other: recorderServer() }, groups: { g: ['rec'] } });
  gw = await startGateway({ ...base, aggregate: { ...base.aggregate!, virtuals: new Map([['v', new Map([['rec', picks]])]]) } }, { logger: createTestLogger('silent', undefined) });
});

afterAll(async () => {
  await gw?.close();
});

/** A caller that declared nothing to ask: its calls on one path share one held session. */
const PLAIN = { 'io.modelcontextprotocol/clientCapabilities': {} };
const PATHS = ['/servers/rec/mcp', '/mcp', '/groups/g/mcp', '/virtual/v/mcp'] as const;

/** The name `path` lists the recorder's `tool` under (prefixed on the aggregates). */
async function toolOn(path: string, tool: string): Promise<string> {
  const tools = resultOf(await modern(new URL(path, gw.url), 'tools/list', {}, { meta: PLAIN })).tools as Array<{ name: string }>;
  const found = tools.map((t) => t.name).find((name) => name === tool || name.endsWith(`__${tool}`));
  if (found === undefined) throw new Error(`${path} lists no ${tool}: ${tools.map((t) => t.name).join(', ')}`);
  return found;
}

/** POSTs a tools/call of `name` whose `arguments` text is `args` (raw JSON, not re-serialised). */
async function rawCall(path: string, name: string, args: string): Promise<{ status: number; body: Record<string, any> }> {
  const params = { name, _meta: envelope(PLAIN) };
  const body = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":${JSON.stringify(name)},"_meta":${JSON.stringify(params._meta)},"arguments":${args}}}`;
  const res = await fetch(new URL(path, gw.url), { method: 'POST', headers: standardHeaders('tools/call', params), body });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

// The body's own levels above `arguments`: the message, params, arguments itself.
const ABOVE = 3;
const spellings: Record<string, (levels: number) => string> = {
  arrays: (n) => `${'['.repeat(n)}${']'.repeat(n)}`,
  objects: (n) => `${'{"k":'.repeat(n - 1)}{}${'}'.repeat(n - 1)}`,
  mixed: (n) => {
    let [open, close] = ['', ''];
    for (let i = 0; i < n; i++) [open, close] = [open + (i % 2 === 0 ? '[' : '{"k":'), (i % 2 === 0 ? ']' : '}') + close];
    return `${open}0${close}`;
  },
  'spaced with newlines': (n) => `${'[ \n\t'.repeat(n)}${' ]\r\n'.repeat(n)}`,
  'after a string ending in escaped backslashes and quotes': (n) => `[${JSON.stringify('a\\"}]\\')},${'['.repeat(n - 1)}${']'.repeat(n - 1)}]`,
};

describe('JSON nested past the limit, in every spelling', () => {
  for (const path of PATHS) {
    it(`on ${path}: one level past ${MAX_JSON_DEPTH} is refused with GW_INVALID_REQUEST; at the limit it is served`, async () => {
      const echo = await toolOn(path, 'echo');
      for (const [spelling, nest] of Object.entries(spellings)) {
        // `arguments` (counted in ABOVE) holds the nesting under `deep`.
        const at = (total: number) => `{"text":"ok","deep":${nest(total - ABOVE)}}`;
        const refused = await rawCall(path, echo, at(MAX_JSON_DEPTH + 1));
        expect(refused.status, spelling).toBe(400);
        expect(refused.body.error?.data, spelling).toMatchObject({ code: 'GW_INVALID_REQUEST', limit: MAX_JSON_DEPTH });
        const served = await rawCall(path, echo, at(MAX_JSON_DEPTH));
        expect(served.status, `${spelling}: ${JSON.stringify(served.body).slice(0, 200)}`).toBe(200);
        expect(textOf(served.body.result), spelling).toBe('ok');
      }
    });

    it(`on ${path}: strings full of braces, brackets, escaped quotes and backslashes only look deep, and arrive unchanged`, async () => {
      const echo = await toolOn(path, 'echo');
      const decoys = ['{'.repeat(2_000), '['.repeat(2_000), '\\"{['.repeat(500), '\\'.repeat(301) + '"' + '{'.repeat(300), '"\\"[{'.repeat(400) + '\\'];
      for (const text of decoys) {
        const served = await rawCall(path, echo, JSON.stringify({ text }));
        expect(served.status).toBe(200);
        expect(textOf(served.body.result)).toBe(text);
      }
    });
  }
});

describe('a client gone before its one JSON answer', () => {
  for (const path of PATHS) {
    it(`on ${path}: the call is cancelled upstream`, async () => {
      const url = new URL(path, gw.url);
      const [slow, historyTool] = [await toolOn(path, 'slow'), await toolOn(path, 'history')];
      const history = async () => JSON.parse(textOf(resultOf(await modern(url, 'tools/call', { name: historyTool }, { meta: PLAIN })))) as Recorded[];
      const marker = `ms-${path}`.length * 1_000 + 7_000;
      const abort = new AbortController();
      const params = { name: slow, arguments: { ms: marker }, _meta: envelope(PLAIN) };
      const answered = fetch(url, { method: 'POST', headers: standardHeaders('tools/call', params), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }), signal: abort.signal }).then(
        () => 'answered',
        () => 'aborted',
      );
      let slowId: unknown;
      await expect
        .poll(async () => {
          slowId = (await history()).find((m) => m.method === 'tools/call' && m.params?.name === 'slow' && (m.params?.arguments as { ms?: number })?.ms === marker)?.id;
          return slowId !== undefined;
        }, { timeout: 15_000 })
        .toBe(true);
      abort.abort();
      expect(await answered).toBe('aborted');
      await expect.poll(async () => (await history()).some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === slowId), { timeout: 15_000 }).toBe(true);
    });
  }
});
