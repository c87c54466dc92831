/**
 * An outside attack on the hot POST path (issue 34's fifth round, branch hot3): the MCP POST
 * handler now throws instead of rejecting, serves a lone live-session call without a promise, and
 * forwards notifications and answers (`requestsOf`) only on a POST that carries them. Each error
 * path and each judgment must give the same status and GW_* envelope whether the POST takes the
 * fast path (only requests), the mixed path (notifications and answers first) or a batch, and the
 * gateway must keep serving everyone else. Real sockets, a real stdio child, API-key principals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { createTestLogger } from '../support/gateway.ts';
import { bearer, call, codeOf, KEY_A, KEY_B, note, startHotGateway, type HotGateway } from '../support/hot-gateway.ts';
import { modern } from '../support/modern.ts';
import { fixture, MCP_HEADERS, parseBody, post, rpc, textOf, type RawSession, type Recorded } from '../support/recorder.ts';

const KEY_C = 'hot-post-key-c-0123456789abcdef';
const KEY_D = 'hot-post-key-d-0123456789abcdef';
const BURST = 5;

let hot: HotGateway;
let gw: RunningGateway;
let url: URL;
let a: RawSession;
let b: RawSession;
const expectHealthy = () => hot.expectHealthy();

beforeAll(async () => {
  hot = await startHotGateway();
  ({ gw, url, a, b } = hot);
});

afterAll(async () => {
  await hot?.gw.close();
});

describe('every error of a live-session POST, thrown now instead of rejected', () => {
  it('unknown, empty and ended session ids: 404/400 with the GW code, on the fast and the mixed path', async () => {
    const lone = JSON.stringify(call(1, 'echo', { text: 'x' }));
    const mixed = JSON.stringify([note('ghost'), call(2, 'echo', { text: 'x' })]);
    for (const body of [lone, mixed]) {
      const unknown = await post(url, body, { ...bearer(KEY_A), 'mcp-session-id': 'no-such-session' });
      expect(unknown.status).toBe(404);
      expect(JSON.parse(unknown.text)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'GW_SESSION_NOT_FOUND' } } });
      const none = await post(url, body, bearer(KEY_A));
      expect(none.status).toBe(400);
      expect(codeOf(none)).toBe('GW_SESSION_REQUIRED');
    }
    // The same handler serves the aggregate: a session of /servers/rec/mcp is unknown there.
    for (const body of [lone, mixed]) {
      const elsewhere = await post(new URL('/mcp', gw.url), body, { ...bearer(KEY_A), 'mcp-session-id': a.id });
      expect(elsewhere.status).toBe(404);
      expect(codeOf(elsewhere)).toBe('GW_SESSION_NOT_FOUND');
    }
    const doomed = await rpc.initialize(url, '2025-03-26', bearer(KEY_A));
    expect(await doomed.delete()).toBe(200);
    for (const body of [lone, mixed]) {
      const ended = await doomed.postRaw(body);
      expect(ended.status).toBe(404);
      expect(codeOf(ended)).toBe('GW_SESSION_NOT_FOUND');
    }
    await expectHealthy();
  });

  it("another principal's session id is unknown to it, and its notifications never reach that session's upstream", async () => {
    const lone = await post(url, JSON.stringify(call(3, 'history')), { ...bearer(KEY_B), 'mcp-session-id': a.id, 'mcp-protocol-version': '2025-03-26' });
    expect(lone.status).toBe(404);
    expect(codeOf(lone)).toBe('GW_SESSION_NOT_FOUND');
    const mixed = await post(url, JSON.stringify([note('from-b'), { jsonrpc: '2.0', id: 'forged', result: {} }, call(4, 'echo', { text: 'b' })]), {
      ...bearer(KEY_B),
      'mcp-session-id': a.id,
      'mcp-protocol-version': '2025-03-26',
    });
    expect(mixed.status).toBe(404);
    expect(codeOf(mixed)).toBe('GW_SESSION_NOT_FOUND');
    const onlyNote = await post(url, JSON.stringify(note('from-b-alone')), { ...bearer(KEY_B), 'mcp-session-id': a.id });
    expect(onlyNote.status).toBe(404);
    const history = JSON.stringify(await a.history());
    expect(history).not.toContain('from-b');
    await expectHealthy();
  });

  it('no credential: 401 with WWW-Authenticate, never a session', async () => {
    const answer = await post(url, JSON.stringify(call(5, 'echo', { text: 'anon' })), { 'mcp-session-id': a.id });
    expect(answer.status).toBe(401);
    expect(codeOf(answer)).toBe('GW_UNAUTHORIZED');
    expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer /);
    await expectHealthy();
  });

  it('a batch on a 2025-11-25 session, initialize among requests or after a notification: 400 and nothing runs', async () => {
    const batch = await b.postRaw(JSON.stringify([call(6, 'echo', { text: 'batched' })]));
    expect(batch.status).toBe(400);
    expect(codeOf(batch)).toBe('GW_BATCH_NOT_ALLOWED');
    const init = { jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const second = await a.postRaw(JSON.stringify([call(8, 'echo', { text: 'before-init' }), init]));
    expect(second.status).toBe(400);
    expect(codeOf(second)).toBe('GW_ALREADY_INITIALIZED');
    const afterNote = await a.postRaw(JSON.stringify([note('before-init-note'), init]));
    expect(afterNote.status).toBe(400);
    expect(codeOf(afterNote)).toBe('GW_ALREADY_INITIALIZED');
    const history = JSON.stringify(await a.history());
    expect(history).not.toContain('before-init"');
    await expectHealthy();
  });

  it('over maxInflightPerSession: 503 GW_OVERLOADED with Retry-After, none of the POST runs, the calls in flight finish', async () => {
    const s = await rpc.initialize(url, '2025-03-26', bearer(KEY_A));
    try {
      // One batch of three slow calls with progress: its SSE stream starts (fetch resolves) once
      // all three are admitted and the first progress is relayed.
      const slow = (i: number) => ({ ...call(`slow-${i}`, 'slow', { ms: 1500, steps: 10 }), params: { name: 'slow', arguments: { ms: 1500, steps: 10 }, _meta: { progressToken: `p-${i}` } } });
      const running = await fetch(url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, ...bearer(KEY_A), 'mcp-session-id': s.id },
        body: JSON.stringify([slow(1), slow(2), slow(3)]),
      });
      expect(running.headers.get('content-type')).toContain('text/event-stream');
      const refused = await s.request(call('over', 'echo', { text: 'over' }));
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.json).toMatchObject({ error: { data: { code: 'GW_OVERLOADED', kind: 'session', limit: 3 } } });
      const mixed = await s.postRaw(JSON.stringify([note('over-note'), call('over-2', 'echo', { text: 'over' })]));
      expect(mixed.status).toBe(503);
      const events = parseBody(await running.text(), 'text/event-stream');
      expect(events.filter((m) => m.id !== undefined).map((m) => m.id).sort()).toEqual(['slow-1', 'slow-2', 'slow-3']);
      expect(events.filter((m) => m.id !== undefined).every((m) => textOf(m.result) === 'done')).toBe(true);
    } finally {
      await s.delete();
    }
    await expectHealthy();
  });
});

describe('judgments are the same on the fast path, the mixed path and in a batch', () => {
  it('rate limits: per tool an error answer for that call alone, per principal a 429 for the whole POST, lone, mixed or batched', async () => {
    // Its own gateway: a refused POST takes its token before its session is looked up, so the
    // other tests' 404s would spend a shared bucket.
    const limited = await startGateway(parseConfig({
      mcpServers: { rec: { command: process.execPath, args: [fixture('recorder-server.mjs')] } },
      gateway: {
        port: 0,
        auth: { apiKeys: [{ name: 'c', key: KEY_C }, { name: 'd', key: KEY_D }] },
        rateLimits: { perTool: { perSecond: 0.001, burst: BURST }, perPrincipal: { perSecond: 0.001, burst: 40 } },
      },
    }), { logger: createTestLogger('warn', undefined) });
    const limitedUrl = new URL('/servers/rec/mcp', limited.url);
    const c = await rpc.initialize(limitedUrl, '2025-03-26', bearer(KEY_C));
    try {
      for (let i = 0; i < BURST; i++) expect(textOf((await c.request(call(`c-${i}`, 'echo', { text: `c-${i}` }))).json.result)).toBe(`c-${i}`);
      // docs/configuration.md: a call over the per-tool limit gets GW_RATE_LIMITED as its own error answer.
      const lone = await c.request(call('c-lone', 'echo', { text: 'c-refused-lone' }));
      const mixed = await c.postRaw(JSON.stringify([note('c-note'), call('c-mixed', 'echo', { text: 'c-refused-mixed' })]));
      const batch = await c.postRaw(JSON.stringify([call('c-b1', 'echo', { text: 'c-refused-b1' }), { jsonrpc: '2.0', id: 'c-b2', method: 'ping' }]));
      for (const [answer, id] of [[lone, 'c-lone'], [mixed, 'c-mixed'], [batch, 'c-b1']] as const) {
        expect(answer.status).toBe(200);
        const refused = answer.events.find((e) => e.id === id) as Recorded;
        expect(refused.error).toMatchObject({ data: { code: 'GW_RATE_LIMITED' } });
        expect((refused.error as { data: { retryAfterSec: number } }).data.retryAfterSec).toBeGreaterThan(0);
      }
      expect(batch.events.find((e) => e.id === 'c-b2')?.result).toEqual({});
      // A POST with only a notification takes no token: still 202.
      expect((await c.postRaw(JSON.stringify(note('c-free')))).status).toBe(202);
      const history = JSON.stringify(await c.history());
      expect(history).not.toContain('c-refused');
      // history is a tool too, with its own bucket.
      expect(history).toContain('c-4');
      // Now spend the principal's bucket: the whole POST is 429, whichever path it takes.
      let spent = 0;
      while ((await c.request({ jsonrpc: '2.0', id: `spend-${spent}`, method: 'ping' })).status !== 429) expect(++spent).toBeLessThan(40);
      const refusals = [
        await c.request({ jsonrpc: '2.0', id: 'p-lone', method: 'ping' }),
        await c.postRaw(JSON.stringify([note('p-note'), { jsonrpc: '2.0', id: 'p-mixed', method: 'ping' }])),
        await c.postRaw(JSON.stringify([{ jsonrpc: '2.0', id: 'p-b1', method: 'ping' }, { jsonrpc: '2.0', id: 'p-b2', method: 'ping' }])),
      ];
      for (const refused of refusals) {
        expect(refused.status).toBe(429);
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(codeOf(refused)).toBe('GW_RATE_LIMITED');
      }
      // Another principal is served meanwhile.
      const d = await rpc.initialize(limitedUrl, '2025-11-25', bearer(KEY_D));
      expect(textOf((await d.request(call('d-1', 'echo', { text: 'd is fine' }))).json.result)).toBe('d is fine');
      await d.delete();
    } finally {
      await c.delete();
      await limited.close();
    }
    await expectHealthy();
  });

  it('a policy denial answers the same lone, after a notification, and on the 2026 path; the tool never runs', async () => {
    const lone = await b.request(call('deny-1', 'getenv', { name: 'PATH' }));
    const modernAnswer = await modern(url, 'tools/call', { name: 'getenv', arguments: { name: 'PATH' } }, { id: 'deny-3', headers: bearer(KEY_B) });
    const strip = (x: Recorded) => ({ ...(x.error as Record<string, unknown>), data: { ...((x.error as { data?: Record<string, unknown> }).data ?? {}), correlationId: undefined } });
    expect(lone.json.error).toBeDefined();
    expect(modernAnswer.json.error).toBeDefined();
    expect(strip(modernAnswer.json)).toEqual(strip(lone.json));
    const c25 = await rpc.initialize(url, '2025-03-26', bearer(KEY_B));
    try {
      const batch = await c25.postRaw(JSON.stringify([note('b-batch-note'), call('deny-4', 'getenv', { name: 'PATH' }), call('ok-4', 'echo', { text: 'allowed' })]));
      expect(batch.status).toBe(200);
      const byId = new Map(batch.events.map((e) => [e.id, e]));
      expect(strip(byId.get('deny-4') as Recorded)).toEqual(strip(lone.json));
      expect(textOf((byId.get('ok-4') as Recorded).result)).toBe('allowed');
      const history = await c25.history();
      expect(history.some((m) => m.method === 'notifications/x-marker')).toBe(true);
      expect(history.some((m) => (m.params as { name?: string } | undefined)?.name === 'getenv')).toBe(false);
    } finally {
      await c25.delete();
    }
    expect((await b.history()).some((m) => (m.params as { name?: string } | undefined)?.name === 'getenv')).toBe(false);
  });
});
