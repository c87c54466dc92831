/**
 * An outside attack on the correlator's lazy AbortController (issue 34, branch hot3): a request's
 * signal is made only when a transport reads it, and a remote Streamable HTTP upstream's transport
 * does. A cancel must still close the upstream POST on the paths remote-send-options.test.ts does
 * not take: a WebSocket client's notifications/cancelled, a 2026 client that closes its response
 * (eras.md: closing the stream is the cancel), and a DELETE of the session mid-call (within the
 * session's grace for its cancel notes, not the target's timeoutMs). The upstream
 * holds its 202 for the cancel notification until the hung POST is closed, so only the abort of the
 * request's own signal ends it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { modern } from '../support/modern.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { rpc, textOf } from '../support/recorder.ts';
import { initializeWs, openWs, wsUrl } from '../support/ws-client.ts';

let gw: TestGateway;
let holding: HttpFixture;

beforeAll(async () => {
  holding = await startHttpFixture({ getStream: false, holdCancelAck: true });
  gw = await startTestGateway({
    targets: { holding: { type: 'http', url: holding.url } },
  });
});
afterAll(async () => {
  await gw?.close();
  await holding?.close();
});

const hang = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'hang', arguments: {} } });

/** Waits for the upstream to receive the next `hang` call; its upstream session and id. */
async function hungCall(from: number): Promise<string> {
  const hung = await holding.waitAfter(from, (m) => m.method === 'tools/call');
  return `${hung.headers['mcp-session-id']}/${(hung.body as { id: number }).id}`;
}

describe('a cancel closes the upstream POST on every path', () => {
  it("a WebSocket client's notifications/cancelled", async () => {
    const peer = await openWs(wsUrl(gw.url, '/servers/holding/ws'));
    try {
      await initializeWs(peer);
      const from = holding.seen.length;
      peer.send(hang('ws-hang'));
      const key = await hungCall(from);
      peer.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'ws-hang', reason: 'attack' } });
      await expect.poll(() => holding.hangsClosed, { timeout: 15_000 }).toContain(key);
      peer.send({ jsonrpc: '2.0', id: 'ws-after', method: 'tools/call', params: { name: 'echo', arguments: { text: 'still here' } } });
      const [answer] = (await peer.until('ws-after')).slice(-1);
      expect(textOf((answer as { result?: unknown }).result)).toBe('still here');
    } finally {
      peer.socket.close();
      await peer.closed;
    }
  });

  it('a 2026 client that closes its response', async () => {
    const url = new URL('/servers/holding/mcp', gw.url);
    const from = holding.seen.length;
    const controller = new AbortController();
    const answer = modern(url, 'tools/call', { name: 'hang', arguments: {} }, { id: 'modern-hang', signal: controller.signal });
    const key = await hungCall(from);
    controller.abort();
    await expect(answer).rejects.toThrow();
    await expect.poll(() => holding.hangsClosed, { timeout: 15_000 }).toContain(key);
    const after = await modern(url, 'tools/call', { name: 'echo', arguments: { text: 'still here' } }, { id: 'modern-after' });
    expect(textOf(after.json.result)).toBe('still here');
  });

  it('a DELETE of the session mid-call answers within the grace for cancel notes, while another session goes on', async () => {
    const doomed = await rpc.initialize(gw.mcpUrl('holding'));
    const other = await rpc.initialize(gw.mcpUrl('holding'));
    try {
      const from = holding.seen.length;
      const pending = doomed.request(hang('doomed-hang'));
      const key = await hungCall(from);
      // This upstream acknowledges the session's notifications/cancelled only once the hung POST
      // is closed. The session's end waits for its notes at most CANCEL_NOTES_GRACE_MS (1 s), then
      // closes its members, which closes the hung POST: the DELETE answers in about a second, not
      // after the target's timeoutMs (5 min by default; it used to wait that long).
      const started = Date.now();
      const deleting = doomed.delete();
      await expect.poll(() => holding.hangsClosed, { timeout: 15_000 }).toContain(key);
      expect(await deleting).toBe(200);
      expect(Date.now() - started).toBeLessThan(20_000);
      // The POST that carried the call is answered (or ended), never left hanging.
      await pending.catch(() => undefined);
      const after = await other.request({ jsonrpc: '2.0', id: 'other', method: 'tools/call', params: { name: 'echo', arguments: { text: 'other fine' } } });
      expect(textOf(after.json.result)).toBe('other fine');
    } finally {
      await other.delete();
    }
  });
});
