/**
 * A WebSocket client at the byte level (RFC 6455 sections 4.1 and 5.2): the upgrade written by
 * hand over a plain TCP socket, masked text frames out, and nothing done automatically. For tests
 * of clients that misbehave in ways a real client library would not allow: never answering pings,
 * never reading.
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

export interface RawWs {
  socket: Socket;
  /** The status line and headers of the upgrade answer. */
  head: string;
  /** Sends one masked text frame. */
  sendText(text: string): void;
  /** Resolves when the TCP connection is gone. */
  closed: Promise<void>;
}

/** One client frame: FIN set, the given opcode, masked as every client frame must be. */
export function clientFrame(payload: Buffer, opcode = 0x1): Buffer {
  const mask = randomBytes(4);
  let header: Buffer;
  if (payload.length < 126) {
    header = Buffer.from([0x80 | opcode, 0x80 | payload.length]);
  } else if (payload.length < 65_536) {
    header = Buffer.alloc(4);
    header[0] = 0x80 | opcode;
    header[1] = 0x80 | 126;
    header.writeUInt16BE(payload.length, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = 0x80 | opcode;
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(BigInt(payload.length), 2);
  }
  const masked = Buffer.alloc(payload.length);
  for (let i = 0; i < payload.length; i++) masked[i] = (payload[i] as number) ^ (mask[i % 4] as number);
  return Buffer.concat([header, mask, masked]);
}

export function rawWebSocket(url: URL, headers: Record<string, string> = {}): Promise<RawWs> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let markClosed!: () => void;
    const closed = new Promise<void>((r) => (markClosed = r));
    socket.on('close', () => markClosed());
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      const lines = [
        `GET ${url.pathname} HTTP/1.1`,
        `Host: ${url.host}`,
        'Upgrade: websocket',
        'Connection: Upgrade',
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
        'Sec-WebSocket-Version: 13',
        'Sec-WebSocket-Protocol: mcp',
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ];
      socket.write(lines.join('\r\n') + '\r\n\r\n');
    });
    let buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      // Read nothing more unless the test asks: a paused socket leaves data in the kernel, which
      // is how a client that stopped reading looks from the other end.
      socket.pause();
      const head = buffer.subarray(0, end).toString('latin1');
      if (!head.startsWith('HTTP/1.1 101')) {
        socket.destroy();
        reject(new Error(`upgrade refused: ${head.split('\r\n', 1)[0]}`));
        return;
      }
      resolve({ socket, head, sendText: (text) => socket.write(clientFrame(Buffer.from(text, 'utf8'))), closed });
    };
    socket.on('data', onData);
  });
}
