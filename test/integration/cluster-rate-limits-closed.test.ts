/**
 * Shared rate limits over every path to a tool, and `redis.failMode: closed`, against a real
 * redis-server with two gateways sharing it: a per-tool bucket spent on one gateway over
 * Streamable HTTP is empty on the other over a WebSocket, for a 2026 request and over legacy SSE
 * (each path awaits the shared take its own way). Redis killed: every rate-limited request is
 * refused at once with GW_RATE_LIMIT_UNAVAILABLE (503 + Retry-After; the WebSocket request's own
 * answer, the socket stays); Redis back: the same socket and sessions are served again. Redis
 * stalled (SIGSTOP): one request waits commandTimeoutMs, the next are refused at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import type { ClusterConfig, GatewayConfig } from '../../src/config/types.ts';
import { buildAggregateConfig, colliderServer } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { createTestLogger } from '../support/gateway.ts';
import { openLegacyStream, type LegacyStream } from '../support/legacy-sse.ts';
import { errorOf, modern } from '../support/modern.ts';
import { startRedis, type TestRedis } from '../support/redis.ts';
import { initializeWs, openWs, wsUrl, type WsPeer } from '../support/ws-client.ts';

const KEY = 'alice-key-0123456789abcdef';
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', authorization: `Bearer ${KEY}` };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'closed-test', version: '1' } } };
const echo = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } });

let redis: TestRedis;
const gateways: RunningGateway[] = [];
const logs: string[] = [];
let peer: WsPeer | undefined;
let legacy: LegacyStream | undefined;

function cluster(replicaId: string): ClusterConfig {
  return {
    replicaId,
    advertiseUrl: `http://127.0.0.1:1/${replicaId}`,
    redis: { url: redis.url, failMode: 'closed', keyPrefix: 'closed-test:', commandTimeoutMs: 500 },
    keys: ['cluster-test-key-0123456789abcdefghijklmnop'],
    heartbeatMs: 1_000,
    replicaTtlMs: 3_000,
    forwardConnectTimeoutMs: 1_000,
  };
}

async function post(gw: RunningGateway, body: unknown, session?: string): Promise<Response> {
  return fetch(new URL('/servers/col/mcp', gw.url), { method: 'POST', headers: { ...HEADERS, ...(session ? { 'mcp-session-id': session } : {}) }, body: JSON.stringify(body) });
}

beforeAll(async () => {
  redis = await startRedis();
  const base = buildAggregateConfig({ targets: { col: colliderServer() } });
  // The principal's limit is far away; the tool's is what these tests spend (2, then one per 20 s).
  const rateLimits = { perPrincipal: { perSecond: 1_000, burst: 1_000 }, perTool: { perSecond: 0.05, burst: 2 }, maxKeys: 100 };
  for (const id of ['c1', 'c2']) {
    const config: GatewayConfig = { ...base, auth: keyAuth({ alice: KEY }), rateLimits, cluster: cluster(id) };
    gateways.push(await startGateway(config, { logger: createTestLogger('info', logs) }));
  }
}, 60_000);

afterAll(async () => {
  peer?.socket.close();
  legacy?.close();
  await Promise.all(gateways.map((gw) => gw.close()));
  await redis?.stop();
});

describe('shared rate limits, failMode closed', () => {
  it('a per-tool bucket spent on one gateway is empty on the other, over a WebSocket and for a 2026 request', async () => {
    const [one, two] = gateways as [RunningGateway, RunningGateway];
    const init = await post(one, INIT);
    expect(init.status).toBe(200);
    await init.text();
    const session = init.headers.get('mcp-session-id') as string;
    for (const id of [1, 2]) {
      const ok = await post(one, echo(id), session);
      expect(await ok.text()).toContain('collider echo: x');
    }
    peer = await openWs(wsUrl(two.url, '/servers/col/ws'), ['mcp', `bearer.${KEY}`]);
    await initializeWs(peer);
    peer.send(echo(3));
    const [answer] = (await peer.until(3)).filter((m) => m.id === 3);
    expect(answer).toMatchObject({ id: 3, error: { data: { code: 'GW_RATE_LIMITED' } } });
    const stateless = await modern(new URL('/servers/col/mcp', two.url), 'tools/call', { name: 'echo', arguments: { message: 'x' } }, { headers: { authorization: `Bearer ${KEY}` } });
    expect(errorOf(stateless).data).toMatchObject({ code: 'GW_RATE_LIMITED' });
    // Legacy SSE on the first gateway: the same bucket, the call's own error answer on the stream.
    legacy = await openLegacyStream(new URL('/servers/col/sse', one.url), { authorization: `Bearer ${KEY}` });
    expect(await legacy.post({ ...INIT, id: 'l0' })).toBe(202);
    expect(await legacy.nextMessage()).toMatchObject({ id: 'l0', result: {} });
    expect(await legacy.post({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBe(202);
    expect(await legacy.post(echo(30))).toBe(202);
    expect(await legacy.nextMessage()).toMatchObject({ id: 30, error: { data: { code: 'GW_RATE_LIMITED' } } });
    // Other requests of the same principal are not held back by the tool's bucket.
    peer.send({ jsonrpc: '2.0', id: 4, method: 'tools/list' });
    expect((await peer.until(4)).at(-1)).toHaveProperty('result');
  }, 60_000);

  it('Redis killed: refused at once with GW_RATE_LIMIT_UNAVAILABLE on every path, nothing crashes; back: served again', async () => {
    const [one, two] = gateways as [RunningGateway, RunningGateway];
    const lost = logs.filter((line) => line.includes('shared rate limits unreachable')).length;
    await redis.stop(true);
    const started = Date.now();
    const refused = await post(one, { jsonrpc: '2.0', id: 5, method: 'tools/list' });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ error: { code: -32603, data: { code: 'GW_RATE_LIMIT_UNAVAILABLE', retryAfterSec: 1 } } });
    const ws = peer as WsPeer;
    ws.send({ jsonrpc: '2.0', id: 6, method: 'tools/list' });
    expect((await ws.until(6)).at(-1)).toMatchObject({ id: 6, error: { data: { code: 'GW_RATE_LIMIT_UNAVAILABLE' } } });
    const stateless = await modern(new URL('/servers/col/mcp', two.url), 'tools/list', {}, { headers: { authorization: `Bearer ${KEY}` }, id: 'm7' });
    expect(stateless.status).toBe(503);
    expect(stateless.json).toMatchObject({ id: 'm7', error: { data: { code: 'GW_RATE_LIMIT_UNAVAILABLE' } } });
    // Legacy SSE: the POST itself is refused (before anything reaches the session).
    expect(await (legacy as LegacyStream).post({ jsonrpc: '2.0', id: 31, method: 'tools/list' })).toBe(503);
    // Said once per gateway, not per request.
    expect(logs.filter((line) => line.includes('shared rate limits unreachable'))).toHaveLength(lost + 2);
    // The gateways still answer what no rate limit applies to.
    expect((await fetch(new URL('/healthz', one.url))).status).toBe(200);

    await redis.restart();
    let id = 100;
    await expect
      .poll(
        async () => {
          ws.send({ jsonrpc: '2.0', id: ++id, method: 'tools/list' });
          return (await ws.until(id)).at(-1);
        },
        { timeout: 30_000, interval: 250 },
      )
      .toHaveProperty('result');
    expect(logs.some((line) => line.includes('shared rate limits reachable in Redis again'))).toBe(true);
  }, 60_000);

  it('Redis stalled (connected, not answering): one request waits commandTimeoutMs, the next ones are refused at once; answering again: served', async () => {
    const ws = peer as WsPeer;
    const ask = async (id: number) => {
      ws.send({ jsonrpc: '2.0', id, method: 'tools/list' });
      return (await ws.until(id)).at(-1) as Record<string, unknown>;
    };
    const pid = redis.pid() as number;
    process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      expect(await ask(200)).toMatchObject({ error: { data: { code: 'GW_RATE_LIMIT_UNAVAILABLE' } } });
      // Bounded by commandTimeoutMs (500 ms), never by Redis; generous for a loaded machine.
      expect(Date.now() - started).toBeLessThan(3_000);
      const next = Date.now();
      for (let id = 201; id <= 205; id++) expect(await ask(id)).toMatchObject({ error: { data: { code: 'GW_RATE_LIMIT_UNAVAILABLE' } } });
      // Five requests asking the stalled Redis would take 2.5 s; within the hold-off none asks it.
      expect(Date.now() - next).toBeLessThan(2_000);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    let id = 300;
    await expect.poll(async () => ask(++id), { timeout: 30_000, interval: 250 }).toHaveProperty('result');
  }, 60_000);
});
