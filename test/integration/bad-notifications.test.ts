/**
 * Notifications get no answer (JSON-RPC 2.0 §4.1), so one with unusable params can only be
 * dropped and logged: never an HTTP 500, never a dead session. Both directions, both session
 * kinds (one target's pass-through, the aggregate), over Streamable HTTP and WebSocket.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { recorderServer, rpc, textOf, type RawSession } from '../support/recorder.ts';
import { openWs, wsUrl } from '../support/ws-client.ts';

let single: TestGateway;
let aggregate: TestGateway;
const singleLog: string[] = [];

beforeAll(async () => {
  single = await startTestGateway({ targets: { rec: recorderServer() }, logLines: singleLog });
  aggregate = await startTestGateway({ targets: { rec: recorderServer(), other: recorderServer() } });
});
afterAll(async () => {
  await Promise.all([single?.close(), aggregate?.close()]);
});

const BAD_CANCELS: Array<Record<string, unknown>> = [
  { jsonrpc: '2.0', method: 'notifications/cancelled' },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: {} },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: null } },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: { nested: 1 } } },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: [1] } },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: true } },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'never-sent' } },
  { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: { bad: true }, progress: 1 } },
];

/** The root path: one target's pass-through, or the aggregate of several. */
const rootUrl = (gw: TestGateway) => new URL('/mcp', gw.url);
const echoName = (gw: TestGateway) => (gw === aggregate ? 'rec__echo' : 'echo');
const notifyName = (gw: TestGateway) => (gw === aggregate ? 'rec__notify' : 'notify');

async function expectWorks(gw: TestGateway, session: RawSession, id: string) {
  const answer = await session.request({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: echoName(gw), arguments: { text: id } } });
  expect(answer.status).toBe(200);
  expect(textOf(answer.json.result)).toBe(id);
}

describe.each([
  ['one target', () => single],
  ['an aggregate', () => aggregate],
])('bad notifications on %s', (_kind, gwOf) => {
  it('from the client over HTTP: each gets 202 and the session keeps working', async () => {
    const gw = gwOf();
    const session = await rpc.initialize(rootUrl(gw));
    if (gw === aggregate) await session.request({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
    for (const [i, note] of BAD_CANCELS.entries()) {
      const answer = await session.request(note);
      expect(answer.status, JSON.stringify(note)).toBe(202);
      await expectWorks(gw, session, `after-${i}`);
    }
    if (gw === single) expect(singleLog.some((line) => line.includes('without a usable requestId; dropped'))).toBe(true);
  });

  it('from the client over WebSocket: dropped, the socket stays open and answers', async () => {
    const gw = gwOf();
    const ws = await openWs(wsUrl(gw.url, '/ws'));
    ws.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    await ws.until(0);
    for (const note of BAD_CANCELS) ws.send(note);
    ws.send({ jsonrpc: '2.0', id: 'after', method: 'tools/call', params: { name: echoName(gw), arguments: { text: 'after' } } });
    const frames = await ws.until('after');
    expect(frames.at(-1)).toMatchObject({ id: 'after', result: { content: [{ text: 'after' }] } });
    ws.socket.close();
  });

  it('from the upstream: a cancel without a usable requestId is dropped, the call still answers', async () => {
    const gw = gwOf();
    const session = await rpc.initialize(rootUrl(gw));
    if (gw === aggregate) await session.request({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
    for (const params of [undefined, {}, { requestId: null }, { requestId: { x: 1 } }]) {
      const args = { method: 'notifications/cancelled', ...(params === undefined ? {} : { params }) };
      const answer = await session.request({ jsonrpc: '2.0', id: 'n', method: 'tools/call', params: { name: notifyName(gw), arguments: args } });
      expect(answer.status).toBe(200);
      expect(textOf(answer.json.result)).toBe('notified');
    }
    await expectWorks(gw, session, 'still');
  });
});
