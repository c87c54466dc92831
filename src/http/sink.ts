/**
 * ResponseSink over a raw Node ServerResponse: one JSON body, or an SSE stream of events with
 * ids, keep-alive comments while idle, and a cap on what a slow reader may leave buffered.
 */
import type { ServerResponse } from 'node:http';
import type { ResponseSink } from '../session/streams.ts';
import type { StepUpRequest } from './auth-hook.ts';

/** Past this many unsent bytes the client is too slow: drop the connection (it can resume). */
export const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/** JSON bodies at least this long are written as one Buffer; small ones as strings (cheaper). */
const BUFFER_BODY_CHARS = 16 * 1024;

/** `retry:` sent with priming events: the SDK client's own default first delay, said explicitly. */
const RECONNECT_MS = 1_000;

export interface KeepAlive {
  add(stream: Pingable): void;
  delete(stream: Pingable): void;
  stop(): void;
}

/** An SSE stream the keep-alive timer visits. */
export interface Pingable {
  /** Writes an SSE comment if nothing was written for `idleMs`. */
  ping(now: number, idleMs: number): void;
}

export interface HttpSink extends ResponseSink, Pingable {}

/** One interval for every open SSE stream, instead of a timer per stream. */
export function createKeepAlive(intervalMs: number): KeepAlive {
  const sinks = new Set<Pingable>();
  const timer = setInterval(() => {
    const now = Date.now();
    for (const sink of sinks) sink.ping(now, intervalMs);
  }, intervalMs);
  timer.unref();
  return {
    add: (sink) => void sinks.add(sink),
    delete: (sink) => void sinks.delete(sink),
    stop: () => clearInterval(timer),
  };
}

/**
 * Writes one JSON body with its length (the answer goes out in one piece, not chunked). A large
 * body is encoded once, here: given a string, Buffer.byteLength walks it, node:http joins it to the
 * header text and then encodes that, each a full pass over the answer.
 */
export function writeJson(raw: ServerResponse, status: number, body: string, headers?: Record<string, string>): void {
  const payload = body.length >= BUFFER_BODY_CHARS ? Buffer.from(body) : body;
  const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  raw.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': length });
  raw.end(payload);
}

/**
 * `sessionId`: the 2025 session the stream belongs to (sent as Mcp-Session-Id); undefined for a
 * 2026 stream. `challenge`: with step-up answered over HTTP (gateway.auth.stepUp "http"), the
 * `WWW-Authenticate` of a 403 for the missing scopes, from the response's own request (one
 * function per route, nothing made per POST); undefined, the sink has no `challenge`.
 */
export function createHttpSink(raw: ServerResponse, sessionId: string | undefined, keepAlive: KeepAlive, challenge?: (request: StepUpRequest, missing: readonly string[]) => string): HttpSink {
  let closed = false;
  let lastWrite = Date.now();

  const finish = () => {
    closed = true;
    keepAlive.delete(sink);
  };

  const write = (chunk: string) => {
    lastWrite = Date.now();
    raw.write(chunk);
    if (raw.writableLength > MAX_BUFFERED_BYTES) {
      finish();
      raw.destroy();
      sink.onclose?.();
    }
  };

  const sink: HttpSink = {
    onclose: undefined,
    get closed() {
      return closed || raw.destroyed;
    },
    json(body) {
      if (closed) return;
      finish();
      writeJson(raw, 200, body, sessionId === undefined ? undefined : { 'mcp-session-id': sessionId });
    },
    sse() {
      if (closed || raw.headersSent) return;
      raw.writeHead(200, {
        ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        // Tell buffering reverse proxies (nginx) to pass events through as they come.
        'x-accel-buffering': 'no',
      });
      raw.flushHeaders();
      keepAlive.add(sink);
    },
    event(id, data) {
      if (closed) return;
      // A priming event (empty data) also tells the client how soon to reconnect (SEP-1699).
      if (data === '') write(`id: ${id}\nretry: ${RECONNECT_MS}\ndata: \n\n`);
      // A stream without replay (StreamOptions) gives no id: there is nothing to resume from.
      else write(id === '' ? `event: message\ndata: ${data}\n\n` : `event: message\nid: ${id}\ndata: ${data}\n\n`);
    },
    end() {
      if (closed) return;
      finish();
      raw.end();
    },
    ping(now, idleMs) {
      if (!closed && now - lastWrite >= idleMs) write(': keep-alive\n\n');
    },
  };

  if (challenge !== undefined) {
    sink.challenge = (message, scopes) => {
      if (closed) return;
      finish();
      const headers: Record<string, string> = { 'www-authenticate': challenge(raw.req, scopes) };
      if (sessionId !== undefined) headers['mcp-session-id'] = sessionId;
      writeJson(raw, 403, JSON.stringify(message), headers);
    };
  }

  raw.on('close', () => {
    if (closed) return;
    finish();
    sink.onclose?.();
  });
  return sink;
}
