/**
 * A client's id comes back as the exact text it sent, in every form JSON allows for a number:
 * `-0`, `1.0`, `1E2` and `1e-0` are valid ids whose JavaScript value would serialise differently.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { recorderServer, rpc, type RawSession } from '../support/recorder.ts';
import { openWs, wsUrl } from '../support/ws-client.ts';

let gw: TestGateway;
let single: RawSession;
let aggregate: RawSession;

beforeAll(async () => {
  gw = await startTestGateway({ targets: { rec: recorderServer(), other: recorderServer() } });
  single = await rpc.initialize(new URL('/servers/rec/mcp', gw.url));
  aggregate = await rpc.initialize(new URL('/mcp', gw.url));
});
afterAll(async () => {
  await gw?.close();
});

const IDS = ['-0', '1.0', '1E2', '1e-0', '2.50', '12345678901234567890'];
const call = (id: string, tool: string) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${tool}","arguments":{"text":"x"}}}`;

describe('numeric ids keep their text', () => {
  it.each(IDS)('%s over Streamable HTTP, single target and aggregate', async (id) => {
    for (const [session, tool] of [[single, 'echo'], [aggregate, 'rec__echo']] as const) {
      const answer = await session.postRaw(call(id, tool));
      expect(answer.status).toBe(200);
      expect(answer.text).toContain(`"id":${id},`);
    }
  });

  it.each(IDS)('%s is kept in an error answer too (the request is not left hanging)', async (id) => {
    const answer = await single.postRaw(`{"jsonrpc":"2.0","id":${id},"method":"resources/list"}`);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain(`"id":${id},`);
    expect(answer.json.error).toMatchObject({ code: -32601 });
  });

  it('over WebSocket, every form at once', async () => {
    const ws = await openWs(wsUrl(gw.url, '/servers/rec/ws'));
    const texts: string[] = [];
    ws.socket.addEventListener('message', (event) => texts.push(String(event.data)));
    ws.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    await ws.until(0);
    for (const id of IDS) ws.socket.send(call(id, 'echo'));
    await expect.poll(() => texts.length).toBeGreaterThanOrEqual(IDS.length + 1);
    for (const id of IDS) expect(texts.some((t) => t.includes(`"id":${id},`)), id).toBe(true);
    ws.socket.close();
  });

  it('a cancel naming 1.0 reaches the request sent as 1.0, not one sent as 1', async () => {
    const slow = (id: string) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"slow","arguments":{"ms":2000}}}`;
    const one = single.postRaw(slow('1'));
    const onePointO = single.postRaw(slow('1.0'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await single.postRaw('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.0}}');
    const [a, b] = await Promise.all([one, onePointO]);
    expect(b.text).toContain('"id":1.0,');
    expect(b.json).toMatchObject({ error: { data: { code: 'GW_REQUEST_CANCELLED' } } });
    expect(a.text).toContain('"id":1,');
    expect(a.json).toMatchObject({ result: {} });
  });
});
