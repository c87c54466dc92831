/**
 * gateway.rateLimits over real sockets: 429 with Retry-After and a JSON-RPC body at the configured
 * rate, keyed on the principal (a new session does not reset it, another principal is not
 * affected), per tool (the call's own error answer; rate-limit-tool.test.ts for its key), and on a
 * WebSocket as the request's own error answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig, colliderServer } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { createTestLogger } from '../support/gateway.ts';
import { initializeWs, openWs, wsUrl } from '../support/ws-client.ts';

const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef0', carol: 'carol-key-0123456789abcdef', dave: 'dave-key-0123456789abcdef0' };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'rate-test', version: '1' } } };

let gw: RunningGateway;

function client(who: keyof typeof KEYS) {
  const auth = { authorization: `Bearer ${KEYS[who]}` };
  let session: Record<string, string> = {};
  const post = (body: unknown) => fetch(new URL('/servers/col/mcp', gw.url), { method: 'POST', headers: { ...HEADERS, ...auth, ...session }, body: JSON.stringify(body) });
  return {
    async open() {
      const res = await post(INIT);
      if (res.status === 200) session = { 'mcp-session-id': res.headers.get('mcp-session-id')! };
      await res.text();
      return res.status;
    },
    post,
    call: (id: number, name: string) => post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { message: 'x' } } }),
  };
}

beforeAll(async () => {
  const base = buildAggregateConfig({ targets: { col: colliderServer() } });
  const auth = keyAuth(KEYS);
  const rateLimits = { perPrincipal: { perSecond: 0.05, burst: 5 }, perTool: { perSecond: 0.05, burst: 2 }, maxKeys: 100 };
  gw = await startGateway({ ...base, auth, rateLimits }, { logger: createTestLogger('silent', undefined) });
});

afterAll(async () => {
  await gw?.close();
});

describe('rate limits', () => {
  it('429 with Retry-After once a principal spends its burst; a new session does not reset it; others go on', async () => {
    const alice = client('alice');
    expect(await alice.open()).toBe(200);
    for (let i = 1; i <= 4; i++) expect((await alice.post({ jsonrpc: '2.0', id: i, method: 'tools/list' })).status).toBe(200);
    const limited = await alice.post({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('20');
    expect(await limited.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Too Many Requests: slow down and retry after the time given', data: { code: 'GW_RATE_LIMITED', retryAfterSec: 20 } },
    });
    expect(await client('alice').open()).toBe(429);
    expect(await client('bob').open()).toBe(200);
  });

  it('per tool: a tool spent leaves the principal its other tools', async () => {
    const dave = client('dave');
    expect(await dave.open()).toBe(200);
    expect((await dave.call(1, 'echo')).status).toBe(200);
    expect((await dave.call(2, 'echo')).status).toBe(200);
    // Judged after routing (one bucket per target and tool whatever the path): the call's own error answer.
    const limited = await dave.call(3, 'echo');
    expect(await limited.json()).toMatchObject({ id: 3, error: { code: -32600, data: { code: 'GW_RATE_LIMITED', retryAfterSec: 20 } } });
    const other = await dave.call(4, 'whoami');
    expect(other.status).toBe(200);
    expect(((await other.json()) as { result?: unknown }).result).toBeDefined();
  });

  it('on a WebSocket, a request over the limit gets GW_RATE_LIMITED as its answer and the socket stays', async () => {
    const peer = await openWs(wsUrl(gw.url, '/servers/col/ws'), ['mcp', `bearer.${KEYS.carol}`]);
    await initializeWs(peer);
    const answers: Array<Record<string, unknown>> = [];
    for (let id = 1; id <= 5; id++) {
      peer.send({ jsonrpc: '2.0', id, method: 'tools/list' });
      answers.push(...(await peer.until(id)).filter((m) => m.id === id));
    }
    expect(answers.slice(0, 4).every((a) => 'result' in a)).toBe(true);
    expect(answers[4]).toMatchObject({ id: 5, error: { code: -32600, data: { code: 'GW_RATE_LIMITED', retryAfterSec: 20 } } });
    expect(peer.socket.readyState).toBe(WebSocket.OPEN);
    peer.socket.close();
  });
});
