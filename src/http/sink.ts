/**
 * ResponseSink over a raw Node ServerResponse: one JSON body, or an SSE stream of events with
 * ids, keep-alive comments while idle, and a cap on what a slow reader may leave buffered.
 */
import type { ServerResponse } from 'node:http';
import type { ResponseSink } from '../session/streams.ts';
import type { JsonObject } from '../jsonrpc/types.ts';
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
  // One flat [name, value, ...] list (node:http takes it as it is): no object spread per answer,
  // and no for-in over it in _storeHeader (issue 34). Our own two fields win over a caller's.
  const fields: Array<string | number> = ['content-type', 'application/json', 'content-length', length];
  if (headers !== undefined) {
    for (const name of Object.keys(headers)) {
      if (name !== 'content-type' && name !== 'content-length') fields.push(name, headers[name] as string);
    }
  }
  raw.writeHead(status, fields);
  raw.end(payload);
}

/** Computes the `WWW-Authenticate` of a 403 for `missing` scopes (one function per route). */
type Challenger = (request: StepUpRequest, missing: readonly string[]) => string;

/**
 * `sessionId`: the 2025 session the stream belongs to (sent as Mcp-Session-Id); undefined for a
 * 2026 stream. `challenge`: with step-up answered over HTTP (gateway.auth.stepUp "http"), the
 * `WWW-Authenticate` of a 403 for the missing scopes, from the response's own request (one
 * function per route, nothing made per POST); undefined, the sink has no `challenge`.
 */
export function createHttpSink(raw: ServerResponse, sessionId: string | undefined, keepAlive: KeepAlive, challenge?: Challenger): HttpSink {
  return new RawSink(raw, sessionId, keepAlive, challenge);
}

/**
 * A class, not an object literal of closures: one is made per POST, and its methods are shared
 * on the prototype instead of seven closures allocated per request (issue 34). What stays per
 * request is the object and the one 'close' listener on the response.
 */
class RawSink implements HttpSink {
  onclose: (() => void) | undefined = undefined;
  /** Own property only with step-up over HTTP: its presence says the sink can refuse with 403. */
  challenge?: (message: JsonObject, scopes: readonly string[]) => void;
  private done = false;
  /** Set when the SSE stream starts: only SSE streams are pinged. */
  private lastWrite = 0;
  private readonly raw: ServerResponse;
  private readonly sessionId: string | undefined;
  private readonly keepAlive: KeepAlive;

  constructor(raw: ServerResponse, sessionId: string | undefined, keepAlive: KeepAlive, challenger: Challenger | undefined) {
    this.raw = raw;
    this.sessionId = sessionId;
    this.keepAlive = keepAlive;
    if (challenger !== undefined) this.challenge = (message, scopes) => this.refuse(challenger, message, scopes);
    raw.on('close', () => this.peerClosed());
  }

  get closed(): boolean {
    return this.done || this.raw.destroyed;
  }

  json(body: string): void {
    if (this.done) return;
    this.finish();
    if (this.sessionId === undefined) return writeJson(this.raw, 200, body);
    // The session's header as the flat list writeJson builds: no headers object per answer.
    const length = body.length >= BUFFER_BODY_CHARS ? undefined : Buffer.byteLength(body);
    if (length === undefined) return writeJson(this.raw, 200, body, { 'mcp-session-id': this.sessionId });
    this.raw.writeHead(200, ['content-type', 'application/json', 'content-length', length, 'mcp-session-id', this.sessionId]);
    this.raw.end(body);
  }

  sse(): void {
    if (this.done || this.raw.headersSent) return;
    this.raw.writeHead(200, {
      ...(this.sessionId === undefined ? {} : { 'mcp-session-id': this.sessionId }),
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // Tell buffering reverse proxies (nginx) to pass events through as they come.
      'x-accel-buffering': 'no',
    });
    this.raw.flushHeaders();
    this.lastWrite = Date.now();
    this.keepAlive.add(this);
  }

  event(id: string, data: string): void {
    if (this.done) return;
    // A priming event (empty data) also tells the client how soon to reconnect (SEP-1699).
    if (data === '') this.write(`id: ${id}\nretry: ${RECONNECT_MS}\ndata: \n\n`);
    // A stream without replay (StreamOptions) gives no id: there is nothing to resume from.
    else this.write(id === '' ? `event: message\ndata: ${data}\n\n` : `event: message\nid: ${id}\ndata: ${data}\n\n`);
  }

  end(): void {
    if (this.done) return;
    this.finish();
    this.raw.end();
  }

  ping(now: number, idleMs: number): void {
    if (!this.done && now - this.lastWrite >= idleMs) this.write(': keep-alive\n\n');
  }

  private refuse(challenger: Challenger, message: JsonObject, scopes: readonly string[]): void {
    if (this.done) return;
    this.finish();
    const headers: Record<string, string> = { 'www-authenticate': challenger(this.raw.req, scopes) };
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
    writeJson(this.raw, 403, JSON.stringify(message), headers);
  }

  private write(chunk: string): void {
    this.lastWrite = Date.now();
    this.raw.write(chunk);
    if (this.raw.writableLength > MAX_BUFFERED_BYTES) {
      this.finish();
      this.raw.destroy();
      this.onclose?.();
    }
  }

  private finish(): void {
    this.done = true;
    this.keepAlive.delete(this);
  }

  private peerClosed(): void {
    if (this.done) return;
    this.finish();
    this.onclose?.();
  }
}
