/**
 * Long-lived upstream streams that go wrong: the legacy SSE stream (headers, a stream cut
 * mid-request, a cross-origin endpoint, restart per `onExit`) and the Streamable HTTP GET stream
 * (405 = none, and lost for good when the server goes away).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { startSseFixture, type SseFixture } from '../fixtures/sse-upstream.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { post, rpc, textOf } from '../support/recorder.ts';

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });

let gw: TestGateway;
let legacy: SseFixture;
let restarting: SseFixture;
let foreign: SseFixture;
let noGet: HttpFixture;
let vanishing: HttpFixture;

beforeAll(async () => {
  [legacy, restarting, foreign, noGet, vanishing] = await Promise.all([
    startSseFixture(),
    startSseFixture(),
    startSseFixture({ endpoint: (id) => `http://evil.example:9/messages?sessionId=${id}` }),
    startHttpFixture({ getStream: false }),
    startHttpFixture({ getRetryMs: 10 }),
  ]);
  gw = await startTestGateway({
    targets: {
      legacy: { type: 'sse', url: legacy.url, headers: { 'x-api-key': 'legacy-key' } },
      restarting: { type: 'sse', url: restarting.url, restart: { onExit: 'restart', maxRestarts: 2, initialBackoffMs: 10, maxBackoffMs: 50 } },
      foreign: { type: 'sse', url: foreign.url },
      noget: { type: 'http', url: noGet.url },
      vanishing: { type: 'http', url: vanishing.url },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([legacy, restarting, foreign, noGet, vanishing].map((f) => f?.close()));
});

describe('legacy SSE upstream', () => {
  it('sends configured headers on the stream and on every POST, never the downstream Authorization', async () => {
    const session = await rpc.initialize(gw.mcpUrl('legacy'), '2025-06-18', { authorization: 'Bearer downstream' });
    const seen = JSON.parse(textOf((await session.request(call(1, 'headers'))).json.result)) as Record<string, string | undefined>;
    expect(seen).toEqual({ 'x-api-key': 'legacy-key' });
    expect(legacy.seen.filter((s) => s.method === 'GET').every((s) => s.headers['x-api-key'] === 'legacy-key' && s.headers.authorization === undefined)).toBe(true);
    await session.delete();
  });

  it('a stream cut mid-request fails the request and ends the session (onExit: end)', async () => {
    const session = await rpc.initialize(gw.mcpUrl('legacy'));
    const failed = await session.request(call(1, 'cut'));
    expect(failed.json).toMatchObject({ id: 1, error: { data: { code: 'GW_UPSTREAM_CLOSED', target: 'legacy', reason: 'SSE stream ended' } } });
    await expect.poll(async () => (await session.request(call(2, 'echo'))).status).toBe(404);
  });

  it('with onExit: restart, a cut stream is replaced by a new upstream session', async () => {
    const session = await rpc.initialize(gw.mcpUrl('restarting'));
    await session.request(call(1, 'cut'));
    const after = await session.request(call(2, 'echo'));
    expect(after.status).toBe(200);
    expect(after.json).toMatchObject({ id: 2, result: {} });
    expect(restarting.seen.filter((s) => s.method === 'GET')).toHaveLength(2);
    await session.delete();
  });

  it('refuses an endpoint on another origin', async () => {
    const answer = await post(gw.mcpUrl('foreign'), INIT);
    expect(answer.json).toMatchObject({ id: 0, error: { data: { code: 'GW_UPSTREAM_HTTP_ERROR', target: 'foreign' } } });
    expect(String((answer.json.error as { data: { reason: string } }).data.reason)).toContain('another origin');
    expect(foreign.seen.filter((s) => s.method === 'POST')).toEqual([]);
  });
});

describe('Streamable HTTP GET stream', () => {
  it('405: the upstream offers no GET stream; the session works and the gateway does not retry', async () => {
    const session = await rpc.initialize(gw.mcpUrl('noget'));
    expect((await session.request(call(1, 'echo'))).status).toBe(200);
    await expect.poll(() => noGet.seen.filter((s) => s.method === 'GET').length).toBe(1);
    expect((await session.request(call(2, 'echo'))).status).toBe(200);
    expect(noGet.seen.filter((s) => s.method === 'GET')).toHaveLength(1);
    await session.delete();
  });

  it('405 is remembered per target: a later session of the same target does not ask again', async () => {
    const first = await rpc.initialize(gw.mcpUrl('noget'));
    expect((await first.request(call(1, 'echo'))).status).toBe(200);
    await expect.poll(() => noGet.seen.filter((s) => s.method === 'GET').length).toBeGreaterThanOrEqual(1);
    const gets = noGet.seen.filter((s) => s.method === 'GET').length;
    const second = await rpc.initialize(gw.mcpUrl('noget'));
    expect((await second.request(call(2, 'echo'))).status).toBe(200);
    expect((await second.request(call(3, 'echo'))).status).toBe(200);
    expect(noGet.seen.filter((s) => s.method === 'GET')).toHaveLength(gets);
    await first.delete();
    await second.delete();
  });

  it('a GET stream that cannot be re-established ends the session', async () => {
    const session = await rpc.initialize(gw.mcpUrl('vanishing'));
    await expect.poll(() => vanishing.seen.filter((s) => s.method === 'GET').length).toBe(1);
    await vanishing.close();
    await expect.poll(async () => (await session.request(call(1, 'echo'))).status, { timeout: 10_000 }).toBe(404);
  });
});
