/**
 * A session's outbound streams: one per downstream request (a POST that carried requests, or one
 * message on a channel), plus the standalone stream that a 2025 GET opens for server-initiated
 * messages.
 *
 * A request's stream starts undecided. If the answer comes first and alone, it goes out as one
 * `application/json` body (cheapest for the common case); the first message that is not a final
 * answer (progress, a log line, a server->client request) switches it to `text/event-stream`.
 *
 * What the era decides is an option of each stream (`StreamOptions`), not of the set: in 2025 a
 * stream's SSE events are recorded in the session's EventLog so a client that lost it can resume
 * with `Last-Event-ID`, and a dropped connection is not a cancel (the request runs on); in 2026
 * nothing is replayed and closing the response cancels what it was waiting for.
 */
import type { JsonObject, JsonRpcMessage } from '../jsonrpc/types.ts';
import { toWireText } from '../jsonrpc/wire-text.ts';
import { watchSlow } from './slow-streams.ts';
import { attach, attachStandalone, createStreamSetState, endAll, finish, live, pick, resume, startSse, type StreamSetOptions, type StreamSetState, write } from './stream-set-state.ts';
import { JSON_MODE, PENDING, SSE_MODE, type OutStream, type ResponseSink, type StreamOptions } from './stream-shapes.ts';

export { BATCH_2025, CHANNEL_REQUEST, MODERN_REQUEST, POST_2025, type OutStream, type ResponseSink, type StreamOptions } from './stream-shapes.ts';
export { SLOW_ANSWER_SSE_MS } from './slow-streams.ts';
export type { StreamSetOptions } from './stream-set-state.ts';

export interface StreamSet {
  readonly standalone: OutStream;
  /** A stream for `count` requests answered on `sink`. */
  open(sink: ResponseSink, count: number, options: StreamOptions): OutStream;
  /** A message for `stream`; `final` when it answers one of the stream's requests. */
  deliver(stream: OutStream, data: string, final: boolean): void;
  /**
   * The stream's one request is refused for want of `scopes`: as a 403 challenge when nothing was
   * sent yet and the sink can (StreamSet.challenge), else `message` as its final answer.
   */
  challenge(stream: OutStream, message: JsonObject, scopes: readonly string[]): void;
  /**
   * The same for a message object: handed as it is to a sink that takes objects, else serialized
   * once (a large upstream answer as its own line, wire-text.ts).
   */
  send(stream: OutStream, message: JsonObject, final: boolean): void;
  /** One of the stream's requests ends with no answer to send (cancelled by the client). */
  drop(stream: OutStream, fallbackAnswer: JsonObject): void;
  /** Where a server-initiated message goes when nothing ties it to a request. */
  pick(preferStandalone: boolean): OutStream;
  /** A GET without Last-Event-ID: attach the standalone stream; false if one is already attached. */
  attachStandalone(sink: ResponseSink): boolean;
  /** A GET with Last-Event-ID: replay that stream's later events and carry on; false if unknown. */
  resume(sink: ResponseSink, lastEventId: string): boolean;
  /** Undelivered messages queued on the standalone stream (no GET attached). */
  readonly backlog: number;
  /** True while any request stream is unfinished (an answer is still owed). */
  readonly busy: boolean;
  /** True while the standalone stream is attached and open. */
  readonly listening: boolean;
  /** Ends every attached response. */
  endAll(): void;
}

export function createStreamSet(options: StreamSetOptions): StreamSet {
  return new Streams(createStreamSetState(options));
}

/**
 * The set's methods live on the class (one copy for every session), its state and the rarer paths
 * in stream-set-state.ts.
 */
class Streams implements StreamSet {
  readonly standalone: OutStream;
  private readonly s: StreamSetState;

  constructor(s: StreamSetState) {
    this.s = s;
    this.standalone = s.standalone;
  }

  open(sink: ResponseSink, count: number, options: StreamOptions): OutStream {
    const s = this.s;
    const stream: OutStream = {
      id: s.nextId++,
      standalone: false,
      sink: undefined,
      mode: PENDING,
      remaining: count,
      options,
      openedAt: Date.now(),
      collected: options.batch ? [] : undefined,
      complete: false,
    };
    attach(s, stream, sink);
    s.streams.set(stream.id, stream);
    s.unfinished.add(stream);
    watchSlow(stream, s.promote);
    return stream;
  }

  deliver(stream: OutStream, data: string, final: boolean): void {
    if (stream.complete) {
      this.s.logger.debug({ stream: stream.id }, 'message for a finished stream; dropped');
      return;
    }
    if (stream.mode === PENDING) {
      if (final && !stream.options.batch) {
        stream.mode = JSON_MODE;
        stream.remaining = 0;
        stream.sink?.json(data);
        finish(this.s, stream);
        return;
      }
      if (final && stream.collected) {
        stream.collected.push(data);
        if (--stream.remaining === 0) {
          stream.mode = JSON_MODE;
          stream.sink?.json('[' + stream.collected.join(',') + ']');
          finish(this.s, stream);
        }
        return;
      }
      startSse(this.s, stream);
    }
    write(this.s, stream, data);
    if (final && --stream.remaining === 0) finish(this.s, stream);
  }

  challenge(stream: OutStream, message: JsonObject, scopes: readonly string[]): void {
    const sink = stream.sink;
    if (stream.mode !== PENDING || stream.options.batch || stream.complete || sink?.challenge === undefined || sink.closed) return this.send(stream, message, true);
    stream.mode = JSON_MODE;
    stream.remaining = 0;
    sink.challenge(message, scopes);
    finish(this.s, stream);
  }

  send(stream: OutStream, message: JsonObject, final: boolean): void {
    this.s.onsend?.(message);
    const take = stream.sink?.take;
    if (take === undefined) return this.deliver(stream, toWireText(message as unknown as JsonRpcMessage), final);
    if (stream.complete) return;
    // The sink decides JSON or SSE itself; the set keeps the count of answers owed.
    if (final) stream.remaining--;
    take(message, final);
    if (final && stream.remaining === 0) finish(this.s, stream);
  }

  drop(stream: OutStream, fallbackAnswer: JsonObject): void {
    if (stream.complete) return;
    if (stream.mode === SSE_MODE || stream.sink?.channel === true) {
      if (--stream.remaining === 0) finish(this.s, stream);
    } else {
      // An undecided response must still be answered: HTTP has no way to say "nothing".
      this.send(stream, fallbackAnswer, true);
    }
  }

  pick(preferStandalone: boolean): OutStream {
    return pick(this.s, preferStandalone);
  }

  attachStandalone(sink: ResponseSink): boolean {
    return attachStandalone(this.s, sink);
  }

  resume(sink: ResponseSink, lastEventId: string): boolean {
    return resume(this.s, sink, lastEventId);
  }

  get backlog(): number {
    return this.s.backlog;
  }

  get busy(): boolean {
    return this.s.unfinished.size > 0;
  }

  get listening(): boolean {
    return live(this.s.standalone);
  }

  endAll(): void {
    endAll(this.s);
  }
}
