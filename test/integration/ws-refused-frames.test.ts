/**
 * A frame the WebSocket library refuses (over maxBodyBytes: 1009; not UTF-8: 1007) is answered
 * with that close code, and the socket is then ended, not reset: a client still sending the rest
 * of a large frame must be able to read the close frame. Found by the fuzzer (test/support/fuzz):
 * the plugin's default error handler destroyed the socket at once, with the rest of the frame
 * unread, so the kernel sent a reset and the client often lost the close frame.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { clientFrame, rawWebSocket } from '../support/raw-ws.ts';
import { recorderServer } from '../support/recorder.ts';
import { initializeWs, openWs, wsUrl } from '../support/ws-client.ts';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ targets: { rec: recorderServer() }, limits: { maxBodyBytes: 64 * 1024 } });
});
afterAll(async () => {
  await gw?.close();
});

/** Sends `payload` as one text frame; resolves with the close code read and how the TCP connection ended. */
async function sendRefused(payload: Buffer): Promise<{ closeCode: number | undefined; ending: string }> {
  const ws = await rawWebSocket(wsUrl(gw.url, '/servers/rec/ws'));
  let received = Buffer.alloc(0);
  let ending = 'none';
  ws.socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
  ws.socket.on('end', () => (ending = ending === 'none' ? 'end' : ending));
  ws.socket.on('error', (err: NodeJS.ErrnoException) => (ending = err.code ?? err.message));
  ws.socket.resume();
  ws.socket.write(clientFrame(payload));
  await ws.closed;
  // A server close frame: 0x88, length, then the code.
  const closeCode = received[0] === 0x88 && received.length >= 4 ? received.readUInt16BE(2) : undefined;
  return { closeCode, ending };
}

describe('frames the WebSocket library refuses', () => {
  it('a frame over maxBodyBytes, still arriving: close 1009, then the socket ends (no reset)', async () => {
    const result = await sendRefused(Buffer.alloc(4 * 1024 * 1024, 0x20));
    expect(result).toEqual({ closeCode: 1009, ending: 'end' });
  });

  it('a text frame that is not UTF-8: close 1007', async () => {
    const result = await sendRefused(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    expect(result.closeCode).toBe(1007);
    expect(result.ending).toBe('end');
  });

  it('the gateway goes on serving WebSocket clients', async () => {
    const peer = await openWs(wsUrl(gw.url, '/servers/rec/ws'));
    await initializeWs(peer);
    peer.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    expect((await peer.until('after')).at(-1)).toMatchObject({ id: 'after', result: {} });
    peer.socket.close();
  });
});
