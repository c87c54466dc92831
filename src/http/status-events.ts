/**
 * GET /status/events: the status page's fragments (status-page.ts) as Server-Sent Events, one
 * `snapshot` event on connect and one per tick while something changed, keep-alive comments in
 * between. Bounded twice: at most `maxStreams` readers (one more gets 503), and a reader whose
 * socket holds more than MAX_UNSENT_BYTES unsent is dropped rather than buffered for.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { GatewayError } from '../errors/gateway-error.ts';
import type { StatusBoard } from '../observe/status.ts';
import { statusFragments } from './status-page.ts';

/** A few snapshots' worth: a reader this far behind is not reading. */
export const MAX_UNSENT_BYTES = 256 * 1024;
const KEEP_ALIVE_MS = 15_000;

export interface StatusEvents {
  /** Takes over `reply` as an event stream; throws GW_TOO_MANY_STREAMS when full. */
  open(reply: FastifyReply): void;
  readonly readers: number;
  /** Ends every stream (the gateway is stopping). */
  close(): void;
}

export function createStatusEvents(board: StatusBoard, maxStreams: number, tickMs = 1_000): StatusEvents {
  const readers = new Set<ServerResponse>();
  let timer: NodeJS.Timeout | undefined;
  let sentVersion = -1;
  let lastWrite = 0;

  const drop = (raw: ServerResponse) => {
    readers.delete(raw);
    if (readers.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  const write = (raw: ServerResponse, text: string) => {
    if (raw.writableLength > MAX_UNSENT_BYTES) {
      // A slow reader: dropped, never buffered for (its browser reconnects when it can read again).
      drop(raw);
      raw.destroy();
      return;
    }
    raw.write(text);
  };
  const event = () => `event: snapshot\ndata: ${JSON.stringify(statusFragments(board.snapshot()))}\n\n`;
  const tick = () => {
    const now = Date.now();
    if (board.version !== sentVersion) {
      sentVersion = board.version;
      lastWrite = now;
      const text = event();
      for (const raw of [...readers]) write(raw, text);
    } else if (now - lastWrite >= KEEP_ALIVE_MS) {
      lastWrite = now;
      for (const raw of [...readers]) write(raw, ': keep-alive\n\n');
    }
  };

  return {
    open(reply) {
      if (readers.size >= maxStreams) throw new GatewayError('GW_TOO_MANY_STREAMS', undefined, { limit: maxStreams });
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
      raw.write('retry: 2000\n\n');
      readers.add(raw);
      raw.once('close', () => drop(raw));
      write(raw, event());
      if (timer === undefined) {
        timer = setInterval(tick, tickMs);
        timer.unref();
      }
    },
    get readers() {
      return readers.size;
    },
    close() {
      for (const raw of [...readers]) {
        drop(raw);
        raw.end();
      }
    },
  };
}
