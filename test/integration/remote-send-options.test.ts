/**
 * What travels with one message to a remote Streamable HTTP upstream besides its text (the
 * transport's SendOptions), over real sockets: a cancel is the abort of the send's signal, so the
 * request's POST ends at once, whether or not the upstream has acknowledged the cancel
 * notification yet; a message's own headers and trace context go on its POST and never replace
 * the target's configured headers or the session's. The same for the bridge to a 2026 upstream,
 * where the abort is the cancel itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import type { JsonRpcMessage } from '../../src/jsonrpc/types.ts';
import { createAgentPool } from '../../src/transport/http-pool.ts';
import { upstreamHeaders } from '../../src/transport/http-body.ts';
import { createStatelessHttpWire } from '../../src/transport/stateless-http.ts';
import { createStreamableHttpTransport } from '../../src/transport/streamable-http.ts';
import { createEraMemory } from '../../src/upstream/era-probe.ts';
import { createEraTransport } from '../../src/upstream/era-transport.ts';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { startModernFixture } from '../fixtures/modern-upstream.ts';
import { remoteTarget, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { rpc, textOf } from '../support/recorder.ts';

const call = (id: number | string, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0' as const,
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

let gw: TestGateway;
let holding: HttpFixture;

beforeAll(async () => {
  holding = await startHttpFixture({ getStream: false, holdCancelAck: true });
  gw = await startTestGateway({
    targets: {
      // A long request timeout: only the cancel may end the hung POST here.
      holding: { type: 'http', url: holding.url },
      quick: { type: 'http', url: holding.url, timeouts: { requestMs: 1_000, resetOnProgress: true, maxTotalMs: 0 } },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await holding?.close();
});

describe('a cancel to a remote upstream is the abort of its POST', () => {
  it("the client's cancel closes the hung POST before the upstream acknowledges the notification", async () => {
    const session = await rpc.initialize(gw.mcpUrl('holding'));
    const from = holding.seen.length;
    const pending = session.request(call('to-cancel', 'hang'));
    const hung = await holding.waitAfter(from, (m) => m.method === 'tools/call');
    const { id } = hung.body as { id: number };
    const upstreamSession = hung.headers['mcp-session-id'];
    // The downstream's notification POST waits for the upstream's 202, which the fixture holds
    // until the hung exchange is closed: only an abort that does not wait for it ends the call.
    const cancelled = session.request({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'to-cancel', reason: 'changed my mind' } });
    const note = await holding.waitAfter(from, (m) => m.method === 'notifications/cancelled' && (m.params as { requestId?: unknown }).requestId === id);
    expect(note.headers['mcp-session-id']).toBe(upstreamSession);
    expect(note.body).toMatchObject({ params: { reason: 'changed my mind' } });
    await expect.poll(() => holding.hangsClosed, { timeout: 15_000 }).toContain(`${upstreamSession}/${id}`);
    expect((await cancelled).status).toBe(202);
    expect((await pending).json).toMatchObject({ id: 'to-cancel', error: { data: { code: 'GW_REQUEST_CANCELLED' } } });
    const after = await session.request(call(2, 'echo', { text: 'still here' }));
    expect(textOf(after.json.result)).toBe('still here');
    await session.delete();
  });

  it('a timeout closes the hung POST too, though the upstream holds the cancel', async () => {
    const session = await rpc.initialize(gw.mcpUrl('quick'));
    const from = holding.seen.length;
    const answer = await session.request(call('slow', 'hang'));
    expect(answer.json).toMatchObject({ id: 'slow', error: { data: { code: 'GW_UPSTREAM_TIMEOUT', target: 'quick' } } });
    const hung = await holding.waitAfter(from, (m) => m.method === 'tools/call');
    const { id } = hung.body as { id: number };
    await holding.waitAfter(from, (m) => m.method === 'notifications/cancelled' && (m.params as { requestId?: unknown }).requestId === id);
    await expect.poll(() => holding.hangsClosed, { timeout: 15_000 }).toContain(`${hung.headers['mcp-session-id']}/${id}`);
    await session.delete();
  });
});

describe('Streamable HTTP transport send options, against a real server', () => {
  it("a message's headers and trace go on its POST, never over the target's or the session's; its signal ends it", async () => {
    const fixture = await startHttpFixture({ getStream: false });
    const agents = createAgentPool();
    const target = remoteTarget('direct', { type: 'http', url: fixture.url, headers: { 'x-api-key': 'configured' } });
    const transport = createStreamableHttpTransport({ target, logger: createLogger({ level: 'silent' }), agent: agents.acquire(target), agents });
    const received: JsonRpcMessage[] = [];
    transport.onmessage = (message) => received.push(message);
    try {
      await transport.start();
      const init = { jsonrpc: '2.0' as const, id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
      await transport.send(init);
      await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const from = fixture.seen.length;
      const forged = { 'x-user': 'ada', 'x-api-key': 'forged', 'mcp-session-id': 'forged', accept: 'text/html' };
      await transport.send(call(2, 'echo', { text: 'hi' }), { headers: forged, trace: { traceparent: TRACEPARENT, tracestate: 'gw=1' } });
      const seen = await fixture.waitAfter(from, (m) => m.id === 2);
      expect(seen.headers).toMatchObject({ 'x-user': 'ada', 'x-api-key': 'configured', traceparent: TRACEPARENT, tracestate: 'gw=1' });
      expect(seen.headers['mcp-session-id']).not.toBe('forged');
      expect(seen.headers.accept).toBe('application/json, text/event-stream');
      expect(received.find((m) => 'id' in m && m.id === 2)).toMatchObject({ result: { content: [{ text: 'hi' }] } });

      // The transport itself sends nothing to cancel: the signal only ends the request's exchange.
      const controller = new AbortController();
      const hanging = transport.send(call(3, 'hang'), { signal: controller.signal });
      const hung = await fixture.waitAfter(from, (m) => m.id === 3);
      controller.abort();
      await expect(hanging).rejects.toMatchObject({ code: 'GW_UPSTREAM_CLOSED' });
      await expect.poll(() => fixture.hangsClosed, { timeout: 15_000 }).toContain(`${hung.headers['mcp-session-id']}/3`);
      expect(fixture.messages().some((m) => m.method === 'notifications/cancelled')).toBe(false);
      // An already aborted signal: the POST is not even answered.
      const before = received.length;
      await expect(transport.send(call(4, 'echo', { text: 'late' }), { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'GW_UPSTREAM_CLOSED' });
      expect(received.slice(before).some((m) => 'id' in m && m.id === 4)).toBe(false);
    } finally {
      await transport.close();
      agents.release(target);
      await fixture.close();
    }
  });
});

describe('2026 bridge send options, against a real 2026 server', () => {
  it("a message's headers and trace go on its POST under the configured ones; its signal closes the POST, which is the cancel", async () => {
    const fixture = await startModernFixture();
    const agents = createAgentPool();
    const target = { ...remoteTarget('modern', { type: 'http', url: fixture.url, headers: { 'x-user': 'configured' } }), protocol: '2026' as const };
    const logger = createLogger({ level: 'silent' });
    const agent = agents.acquire(target);
    const wire = createStatelessHttpWire({ target, logger, agent, headers: upstreamHeaders(target, undefined) });
    const legacy = () => {
      throw new Error('a 2026 target gets no 2025 transport');
    };
    const transport = createEraTransport({ target, logger, memory: createEraMemory(), principal: undefined, wire, legacy, discoverTimeoutMs: 10_000 });
    const received: JsonRpcMessage[] = [];
    transport.onmessage = (message) => received.push(message);
    try {
      await transport.start();
      await transport.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
      await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const own = { 'x-user': 'forged', 'mcp-method': 'tools/list', 'mcp-param-region': 'eu' };
      await transport.send(call(2, 'echo', { text: 'hi' }), { headers: own, trace: { traceparent: TRACEPARENT, tracestate: 'gw=1' } });
      const post = fixture.calls('tools/call', 'echo').at(-1)!;
      expect(post.headers).toMatchObject({ 'x-user': 'configured', 'mcp-method': 'tools/call', 'mcp-param-region': 'eu', traceparent: TRACEPARENT, tracestate: 'gw=1' });
      expect(received.find((m) => 'id' in m && m.id === 2)).toMatchObject({ result: { content: [{ text: 'hi' }] } });

      const controller = new AbortController();
      const slow = transport.send(call(3, 'slow'), { signal: controller.signal });
      await expect.poll(() => fixture.calls('tools/call', 'slow').length, { timeout: 15_000 }).toBe(1);
      controller.abort();
      await expect(slow).rejects.toMatchObject({ code: 'GW_UPSTREAM_CLOSED' });
      await expect.poll(() => fixture.cancelled, { timeout: 15_000 }).toContain('3');
      expect(received.some((m) => 'id' in m && m.id === 3)).toBe(false);
    } finally {
      await transport.close();
      agents.release(target);
      await fixture.close();
    }
  });
});
