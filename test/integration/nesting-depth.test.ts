/**
 * Messages nested deeper than the gateway reads (jsonrpc/depth.ts, 128 levels) are refused where
 * they come in, with a clear JSON-RPC error, on every downstream and from upstreams; a message
 * just under the limit goes through untouched. Before, 5,000 levels overflowed the stack on the
 * way out and came back as GW_UPSTREAM_CLOSED with "RangeError" in its reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/jsonrpc/depth.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { openLegacyStream } from '../support/legacy-sse.ts';
import { fixture, recorderServer, rpc, textOf, type RawSession } from '../support/recorder.ts';
import { openWs, wsUrl } from '../support/ws-client.ts';

let gw: TestGateway;
let session: RawSession;

beforeAll(async () => {
  gw = await startTestGateway({
    targets: { rec: recorderServer(), bad: { command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'normal'] } },
  });
  session = await rpc.initialize(new URL('/servers/rec/mcp', gw.url));
});
afterAll(async () => {
  await gw?.close();
});

/** `{"a":{"a":...1...}}` with `levels` objects. */
const nested = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
/** A tools/call whose arguments hold an object nested `levels` deep (plus the call's own 3). */
const deepCall = (id: string, levels: number) =>
  `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"echo","arguments":{"text":"${id}","deep":${nested(levels)}}}}`;

async function expectHealthy(id: string) {
  const answer = await session.request({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: id } } });
  expect(textOf(answer.json.result)).toBe(id);
}

describe('nesting depth', () => {
  it('POST: 5,000 levels -> 400, -32600, GW_INVALID_REQUEST naming the limit; the session goes on', async () => {
    const answer = await session.postRaw(deepCall('deep', 5_000));
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({
      id: null,
      error: { code: -32600, message: `Invalid Request: nested deeper than ${MAX_JSON_DEPTH} levels`, data: { code: 'GW_INVALID_REQUEST', limit: MAX_JSON_DEPTH } },
    });
    await expectHealthy('after-deep');
  });

  it('POST: just under the limit goes through to the upstream and back', async () => {
    const answer = await session.postRaw(deepCall('under', MAX_JSON_DEPTH - 5));
    expect(answer.status).toBe(200);
    expect(textOf(answer.json.result)).toBe('under');
    const history = await session.history();
    expect(JSON.stringify(history)).toContain(nested(MAX_JSON_DEPTH - 5));
  });

  it('WebSocket: a too-deep frame gets a -32600 frame and the socket stays open', async () => {
    const ws = await openWs(wsUrl(gw.url, '/servers/rec/ws'));
    ws.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    await ws.until(0);
    ws.socket.send(deepCall('deep', 5_000));
    expect(await ws.next()).toMatchObject({ id: null, error: { code: -32600, data: { code: 'GW_INVALID_REQUEST', limit: MAX_JSON_DEPTH } } });
    ws.send({ jsonrpc: '2.0', id: 'then', method: 'tools/call', params: { name: 'echo', arguments: { text: 'then' } } });
    expect((await ws.until('then')).at(-1)).toMatchObject({ result: { content: [{ text: 'then' }] } });
    ws.socket.close();
  });

  it('legacy POST /messages: a too-deep body gets 400 -32600', async () => {
    const stream = await openLegacyStream(new URL('/servers/rec/sse', gw.url));
    const res = await fetch(stream.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: deepCall('deep', 5_000) });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: -32600, data: { code: 'GW_INVALID_REQUEST' } } });
    stream.close();
  });

  it('from a stdio upstream: a too-deep answer fails only its request (GW_UPSTREAM_MESSAGE_TOO_DEEP); the child keeps serving', async () => {
    const bad = await rpc.initialize(new URL('/servers/bad/mcp', gw.url));
    const answer = await bad.request({ jsonrpc: '2.0', id: 'deep', method: 'tools/call', params: { name: 'deep', arguments: { levels: 5_000 } } });
    expect(answer.json).toMatchObject({ id: 'deep', error: { code: -32603, data: { code: 'GW_UPSTREAM_MESSAGE_TOO_DEEP', target: 'bad', limit: MAX_JSON_DEPTH } } });
    expect(answer.text).not.toContain('RangeError');
    const under = await bad.request({ jsonrpc: '2.0', id: 'under', method: 'tools/call', params: { name: 'deep', arguments: { levels: MAX_JSON_DEPTH - 10 } } });
    expect(textOf(under.json.result)).toBe('deep');
    const after = await bad.request({ jsonrpc: '2.0', id: 'after', method: 'tools/call', params: { name: 'echo', arguments: { text: 'still here' } } });
    expect(textOf(after.json.result)).toBe('still here');
  });
});
