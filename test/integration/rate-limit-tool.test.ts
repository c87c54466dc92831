/**
 * gateway.rateLimits.perTool is one bucket per principal, target and the target's own tool name,
 * whatever the spelling and the path: `echo` on `/servers/col/mcp`, `col__echo` on the aggregate
 * `/mcp`, over Streamable HTTP, WebSocket and a 2026-07-28 stateless request, all take from it.
 * Real gateway, real collider children, API-key principals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig, colliderServer } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { createTestLogger } from '../support/gateway.ts';
import { modern } from '../support/modern.ts';
import { initializeWs, openWs, wsUrl } from '../support/ws-client.ts';

const KEYS = { erin: 'erin-key-0123456789abcdef0', frank: 'frank-key-0123456789abcdef' };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'tool-limit-test', version: '1' } } };
const LIMITED = { code: -32600, data: { code: 'GW_RATE_LIMITED' } };

let gw: RunningGateway;

/** A 2025 session on `path` as `who`. */
async function session(who: keyof typeof KEYS, path: string) {
  const auth = { authorization: `Bearer ${KEYS[who]}` };
  const opened = await fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...auth }, body: JSON.stringify(INIT) });
  expect(opened.status).toBe(200);
  await opened.text();
  const id = { 'mcp-session-id': opened.headers.get('mcp-session-id')! };
  const post = (body: unknown) => fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...auth, ...id }, body: JSON.stringify(body) });
  await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text();
  return {
    async call(rpcId: number, name: string): Promise<Record<string, unknown>> {
      const res = await post({ jsonrpc: '2.0', id: rpcId, method: 'tools/call', params: { name, arguments: { message: 'x' } } });
      return (await res.json()) as Record<string, unknown>;
    },
    close: () => fetch(new URL(path, gw.url), { method: 'DELETE', headers: { ...auth, ...id } }),
  };
}

beforeAll(async () => {
  const base = buildAggregateConfig({ targets: { col: colliderServer(), other: colliderServer() } });
  const rateLimits = { perPrincipal: undefined, perTool: { perSecond: 0.01, burst: 2 }, maxKeys: 100 };
  gw = await startGateway({ ...base, auth: keyAuth(KEYS), rateLimits }, { logger: createTestLogger('silent', undefined) });
});

afterAll(async () => {
  await gw?.close();
});

describe('per-tool rate limit across spellings and paths', () => {
  it('a server path and an aggregate share one bucket per target and tool', async () => {
    const direct = await session('erin', '/servers/col/mcp');
    const aggregate = await session('erin', '/mcp');
    try {
      expect((await direct.call(1, 'echo')).result).toBeDefined();
      expect((await aggregate.call(1, 'col__echo')).result).toBeDefined();
      // The bucket (erin, col, echo) is spent, whichever spelling asks next.
      expect(await direct.call(2, 'echo')).toMatchObject({ id: 2, error: LIMITED });
      const refused = await aggregate.call(2, 'col__echo');
      expect(refused).toMatchObject({ id: 2, error: LIMITED });
      expect(((refused.error as { data: { retryAfterSec: number } }).data.retryAfterSec)).toBeGreaterThan(0);
      // Another target's echo and another tool of the same target are other buckets.
      expect((await aggregate.call(3, 'other__echo')).result).toBeDefined();
      expect((await direct.call(3, 'whoami')).result).toBeDefined();
    } finally {
      await Promise.all([direct.close(), aggregate.close()]);
    }
  });

  it('WebSocket and 2026 stateless requests land in the same bucket', async () => {
    const peer = await openWs(wsUrl(gw.url, '/ws'), ['mcp', `bearer.${KEYS.frank}`]);
    try {
      await initializeWs(peer);
      peer.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'col__echo', arguments: { message: 'x' } } });
      expect((await peer.until(1)).find((m) => m.id === 1)).toHaveProperty('result');
      const stateless = await modern(new URL('/servers/col/mcp', gw.url), 'tools/call', { name: 'echo', arguments: { message: 'x' } }, { headers: { authorization: `Bearer ${KEYS.frank}` } });
      expect(stateless.json.result).toBeDefined();
      // Spent by one call on each: the third, on either, is refused.
      const again = await modern(new URL('/mcp', gw.url), 'tools/call', { name: 'col__echo', arguments: { message: 'x' } }, { headers: { authorization: `Bearer ${KEYS.frank}` }, id: 7 });
      expect(again.json).toMatchObject({ id: 7, error: LIMITED });
      peer.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'col__echo', arguments: { message: 'x' } } });
      expect((await peer.until(2)).find((m) => m.id === 2)).toMatchObject({ error: LIMITED });
      const http = await session('frank', '/servers/col/mcp');
      expect(await http.call(1, 'echo')).toMatchObject({ error: LIMITED });
      await http.close();
    } finally {
      peer.socket.close();
    }
  });
});
