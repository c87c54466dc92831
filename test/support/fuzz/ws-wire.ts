/**
 * A WebSocket client at the frame level for the fuzzer: sends any bytes as a text (or binary)
 * frame, invalid UTF-8 included, which no client library allows; collects the gateway's text
 * frames and its close code; answers pings so the gateway keeps the socket.
 */
import { clientFrame, rawWebSocket } from '../raw-ws.ts';

export interface FrameSocket {
  /** Sends one frame (opcode 1 text by default). */
  send(payload: Buffer, opcode?: number): void;
  /** Text frames received so far (taken: the list is emptied). */
  take(): string[];
  /** Resolves when a text frame arrives or the socket closes, or after `ms`. */
  wait(ms: number): Promise<void>;
  /** The close code the gateway sent, once it did. */
  readonly closeCode: number | undefined;
  readonly closed: boolean;
  close(): void;
}

export async function openFrameSocket(url: URL): Promise<FrameSocket> {
  const ws = await rawWebSocket(url);
  const texts: string[] = [];
  let closeCode: number | undefined;
  let closed = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  let buffer = Buffer.alloc(0);
  let fragments: Buffer[] = [];
  const onFrame = (opcode: number, fin: boolean, payload: Buffer) => {
    if (opcode === 0x9) return ws.socket.write(clientFrame(payload, 0xa)); // ping -> pong
    if (opcode === 0x8) {
      closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
      ws.socket.end();
      return notify();
    }
    if (opcode === 0x1 || opcode === 0x0) {
      fragments.push(payload);
      if (!fin) return;
      texts.push(Buffer.concat(fragments).toString('utf8'));
      fragments = [];
      notify();
    }
  };
  ws.socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      if (buffer.length < 2) return;
      const b0 = buffer[0] as number;
      let length = (buffer[1] as number) & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffer.length < 4) return;
        length = buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buffer.length < 10) return;
        length = Number(buffer.readBigUInt64BE(2));
        offset = 10;
      }
      if (buffer.length < offset + length) return;
      const payload = buffer.subarray(offset, offset + length);
      buffer = buffer.subarray(offset + length);
      onFrame(b0 & 0x0f, (b0 & 0x80) !== 0, payload);
    }
  });
  ws.socket.resume();
  void ws.closed.then(() => {
    closed = true;
    notify();
  });
  return {
    send(payload, opcode = 0x1) {
      if (!closed && !ws.socket.destroyed) ws.socket.write(clientFrame(payload, opcode));
    },
    take: () => texts.splice(0),
    wait(ms) {
      if (texts.length > 0 || closed) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
    get closeCode() {
      return closeCode;
    },
    get closed() {
      return closed;
    },
    close() {
      ws.socket.destroy();
    },
  };
}
