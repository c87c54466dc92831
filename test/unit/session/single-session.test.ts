/**
 * The single-target flavour of the session core on the in-memory transport: transparent
 * initialize, a member opened without any client initialize, ids and progress tokens rewritten
 * both ways, cancel translation (a notification, or a cancelOnClose stream losing its client),
 * filters, and server->client requests. The integration suite drives the same paths over real
 * sockets and children; these pin the exact ids on the wire.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LATEST_PROTOCOL_VERSION } from '../../../src/jsonrpc/versions.ts';
import { GATEWAY_CLIENT_INFO } from '../../../src/session/gateway-info.ts';
import { POST_2025, type Session, type StreamOptions } from '../../../src/session/session.ts';
import type { SessionStore } from '../../../src/session/store.ts';
import { byId, call, harness, memoryTarget, recordingSink, request } from '../../support/session-harness.ts';

const STATELESS: StreamOptions = { batch: false, replay: false, cancelOnClose: true };
const CLIENT_INIT = { protocolVersion: '2025-06-18', capabilities: { roots: { listChanged: true } }, clientInfo: { name: 'unit-client', version: '3.1.4' } };
const tick = () => new Promise((r) => setTimeout(r, 10));

let stores: SessionStore[] = [];
afterEach(async () => {
  await Promise.all(stores.map((s) => s.close(0)));
  stores = [];
});

function single(exposure?: Parameters<typeof memoryTarget>[0]) {
  const h = harness({ alpha: memoryTarget(exposure), other: memoryTarget() });
  stores.push(h.store);
  const session: Session = h.store.create(h.table.server('alpha')!.factory);
  const server = () => h.upstreams.servers('alpha')[0]!;
  return { ...h, session, server };
}

async function initialized(s: ReturnType<typeof single>) {
  await s.session.initialize(request(0, 'initialize', CLIENT_INIT));
  await s.session.handleNotification({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

describe('single-target session on the in-memory transport', () => {
  it('passes the client initialize through and the upstream answer back, unchanged', async () => {
    const s = single();
    const answer = await s.session.initialize(request(7, 'initialize', CLIENT_INIT));
    expect(answer).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: {
        protocolVersion: '2025-06-18',
        capabilities: { tools: { listChanged: true }, prompts: {}, resources: {} },
        serverInfo: { name: 'mini-alpha', version: '9.9.9' },
        instructions: 'instructions of alpha',
      },
    });
    expect(s.session.protocolVersion).toBe('2025-06-18');
    await s.session.handleNotification({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await tick();
    const got = s.server().received;
    expect(got[0]).toMatchObject({ method: 'initialize', params: CLIENT_INIT });
    expect(got.filter((m) => m.method === 'notifications/initialized')).toHaveLength(1);
  });

  it('opens the member without any client initialize, with a handshake the gateway composes', async () => {
    const s = single();
    const sink = recordingSink();
    s.session.serve([call('a', 'echo', { text: 'hi' })], sink, POST_2025);
    expect(await sink.next(byId('a'))).toEqual({ jsonrpc: '2.0', id: 'a', result: { content: [{ type: 'text', text: 'alpha: hi' }] } });
    const got = s.server().received;
    expect(got.map((m) => m.method)).toEqual(['initialize', 'notifications/initialized', 'tools/call']);
    expect(got[0]!.params).toEqual({ protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: GATEWAY_CLIENT_INFO });
    expect(typeof got[2]!.id).toBe('number');
  });

  it('keeps string and number ids apart, and rewrites progress tokens both ways', async () => {
    const s = single();
    await initialized(s);
    const sink = recordingSink();
    s.session.serve([call('1', 'echo', { text: 'string' }, { progressToken: 'tok' }), call(1, 'echo', { text: 'number' })], sink, { ...POST_2025, batch: true });
    const [asString, asNumber] = await Promise.all([sink.next(byId('1')), sink.next(byId(1))]);
    expect(asString!.result).toEqual({ content: [{ type: 'text', text: 'alpha: string' }] });
    expect(asNumber!.result).toEqual({ content: [{ type: 'text', text: 'alpha: number' }] });
    const calls = s.server().received.filter((m) => m.method === 'tools/call');
    expect(new Set(calls.map((m) => m.id)).size).toBe(2);
    const upstreamToken = (calls[0]!.params!._meta as { progressToken: unknown }).progressToken;
    expect(upstreamToken).not.toBe('tok');
    expect(sink.received.find((m) => m.method === 'notifications/progress')?.params).toEqual({ progressToken: 'tok', progress: 1, total: 2 });
  });

  it("translates the client's cancel to the upstream's id, and the POST still gets an answer", async () => {
    const s = single();
    await initialized(s);
    const sink = recordingSink();
    s.session.serve([call(5, 'slow')], sink, POST_2025);
    const upstream = await s.server().waitFor((m) => m.method === 'tools/call');
    await s.session.handleNotification({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'enough' } });
    const cancel = await s.server().waitFor((m) => m.method === 'notifications/cancelled');
    expect(cancel.params).toEqual({ requestId: upstream.id, reason: 'enough' });
    expect((await sink.next(byId(5))).error).toMatchObject({ data: { code: 'GW_REQUEST_CANCELLED' } });
  });

  it('a cancelOnClose stream losing its client cancels its request upstream; a 2025 stream does not', async () => {
    const s = single();
    await initialized(s);
    const kept = recordingSink();
    s.session.serve([call('kept', 'slow')], kept, POST_2025);
    const stateless = recordingSink();
    s.session.serve([call('gone', 'slow')], stateless, STATELESS);
    const callsOf = () => s.server().received.filter((m) => m.method === 'tools/call');
    await s.server().waitFor(() => callsOf().length === 2);
    const calls = callsOf();
    expect(calls.map((m) => (m.params as { name: string }).name)).toEqual(['slow', 'slow']);
    kept.drop();
    stateless.drop();
    const cancel = await s.server().waitFor((m) => m.method === 'notifications/cancelled');
    expect(cancel.params).toEqual({ requestId: calls[1]!.id, reason: 'The client closed the response stream' });
    await tick();
    expect(s.server().received.filter((m) => m.method === 'notifications/cancelled')).toHaveLength(1);
  });

  it('a filtered tool is absent from the list and refused exactly like an unknown one, without reaching the upstream', async () => {
    const s = single({ tools: { allow: [], deny: ['secret'] } });
    await initialized(s);
    const sink = recordingSink();
    s.session.serve([request('list', 'tools/list'), call('hidden', 'secret'), call('unknown', 'nope')], sink, { ...POST_2025, batch: true });
    const [list, hidden, unknown] = await Promise.all(['list', 'hidden', 'unknown'].map((id) => sink.next(byId(id))));
    expect((list!.result!.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(['echo', 'slow', 'ask']);
    expect(hidden!.error).toEqual({ code: unknown!.error!.code, message: 'Unknown tool: secret' });
    expect(unknown!.error!.message).toBe('Unknown tool: nope');
    expect(s.server().received.some((m) => m.method === 'tools/call' && m.params?.name === 'secret')).toBe(false);
  });

  it("carries a server->client request to the client under a gateway id, and the answer back under the upstream's", async () => {
    const s = single();
    await initialized(s);
    const sink = recordingSink();
    s.session.serve([call('q', 'ask')], sink, POST_2025);
    const asked = await sink.next((m) => m.method === 'roots/list');
    expect(asked.id).not.toBe('srv-1');
    await s.session.handleResponse({ jsonrpc: '2.0', id: asked.id as number, result: { roots: [{ uri: 'file:///work' }] } });
    const back = await s.server().waitFor((m) => m.method === undefined && m.id === 'srv-1');
    expect(back.result).toEqual({ roots: [{ uri: 'file:///work' }] });
    expect((await sink.next(byId('q'))).result).toEqual({ content: [{ type: 'text', text: JSON.stringify({ roots: [{ uri: 'file:///work' }] }) }] });
  });
});
