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
import type { Logger } from '../log/logger.ts';
import { type EventLog, parseEventId } from './event-log.ts';
import { unwatchSlow, watchSlow } from './slow-streams.ts';
import { JSON_MODE, PENDING, POST_2025, SSE_MODE, type OutStream, type ResponseSink, type StreamOptions } from './stream-shapes.ts';

export { BATCH_2025, CHANNEL_REQUEST, MODERN_REQUEST, POST_2025, type OutStream, type ResponseSink, type StreamOptions } from './stream-shapes.ts';
export { SLOW_ANSWER_SSE_MS } from './slow-streams.ts';

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

export interface StreamSetOptions {
  log: EventLog;
  logger: Logger;
  /** Priming events only for clients that negotiated >= 2025-11-25 (older ones choke on empty data). */
  priming: () => boolean;
  /** How many finished streams stay resumable (their events may still be in the log). */
  keepFinished: number;
  /** A `cancelOnClose` stream lost its client with answers still owed. */
  onabandon?: (stream: OutStream) => void;
  /** Sees each message as it goes to the client (url-consent.ts: answers that ask for a consent). */
  onsend?: ((message: JsonObject) => void) | undefined;
}

export function createStreamSet({ log, logger, priming, keepFinished, onabandon, onsend }: StreamSetOptions): StreamSet {
  const streams = new Map<number, OutStream>();
  const unfinished = new Set<OutStream>();
  const finished: number[] = [];
  let nextId = 1;
  let standaloneDeliveredSeq = 0;
  let backlog = 0;

  const standalone: OutStream = {
    id: 0,
    standalone: true,
    sink: undefined,
    mode: SSE_MODE,
    remaining: 0,
    options: POST_2025,
    openedAt: 0,
    collected: undefined,
    complete: false,
  };
  streams.set(0, standalone);

  const live = (s: OutStream) => s.sink !== undefined && !s.sink.closed;

  const attach = (stream: OutStream, sink: ResponseSink) => {
    const old = stream.sink;
    stream.sink = sink;
    sink.onclose = () => {
      if (stream.sink === sink) stream.sink = undefined;
      if (stream.options.cancelOnClose && !stream.complete) {
        logger.debug({ stream: stream.id }, 'client went away from a stream; its requests are cancelled');
        onabandon?.(stream);
      } else {
        logger.debug({ stream: stream.id }, 'client went away from a stream (not a cancel)');
      }
    };
    if (old !== undefined && old !== sink && !old.closed) old.end();
  };

  const write = (stream: OutStream, data: string) => {
    // Without replay an event has no id: there is nothing to resume from.
    const id = stream.options.replay ? log.append(stream.id, data) : '';
    const sink = stream.sink;
    if (sink !== undefined && !sink.closed) {
      sink.event(id, data);
      if (stream.standalone) standaloneDeliveredSeq = log.lastSeq;
    } else if (stream.standalone) {
      backlog++;
    }
  };

  const finish = (stream: OutStream) => {
    stream.complete = true;
    unwatchSlow(stream);
    unfinished.delete(stream);
    if (stream.mode === SSE_MODE && stream.options.replay) {
      finished.push(stream.id);
      while (finished.length > keepFinished) streams.delete(finished.shift() as number);
    } else {
      streams.delete(stream.id);
    }
    const sink = stream.sink;
    if (sink !== undefined && !sink.closed) sink.end();
  };

  const startSse = (stream: OutStream) => {
    stream.mode = SSE_MODE;
    stream.sink?.sse();
    if (stream.options.replay && priming()) write(stream, '');
    const collected = stream.collected;
    stream.collected = undefined;
    if (collected) for (const data of collected) write(stream, data);
  };

  const promote = (stream: OutStream) => {
    if (stream.mode === PENDING && !stream.complete && live(stream)) startSse(stream);
  };

  const set: StreamSet = {
    standalone,

    open(sink, count, options) {
      const stream: OutStream = {
        id: nextId++,
        standalone: false,
        sink: undefined,
        mode: PENDING,
        remaining: count,
        options,
        openedAt: Date.now(),
        collected: options.batch ? [] : undefined,
        complete: false,
      };
      attach(stream, sink);
      streams.set(stream.id, stream);
      unfinished.add(stream);
      watchSlow(stream, promote);
      return stream;
    },

    deliver(stream, data, final) {
      if (stream.complete) {
        logger.debug({ stream: stream.id }, 'message for a finished stream; dropped');
        return;
      }
      if (stream.mode === PENDING) {
        if (final && !stream.options.batch) {
          stream.mode = JSON_MODE;
          stream.remaining = 0;
          stream.sink?.json(data);
          finish(stream);
          return;
        }
        if (final && stream.collected) {
          stream.collected.push(data);
          if (--stream.remaining === 0) {
            stream.mode = JSON_MODE;
            stream.sink?.json('[' + stream.collected.join(',') + ']');
            finish(stream);
          }
          return;
        }
        startSse(stream);
      }
      write(stream, data);
      if (final && --stream.remaining === 0) finish(stream);
    },

    challenge(stream, message, scopes) {
      const sink = stream.sink;
      if (stream.mode !== PENDING || stream.options.batch || stream.complete || sink?.challenge === undefined || sink.closed) return set.send(stream, message, true);
      stream.mode = JSON_MODE;
      stream.remaining = 0;
      sink.challenge(message, scopes);
      finish(stream);
    },
    send(stream, message, final) {
      onsend?.(message);
      const take = stream.sink?.take;
      if (take === undefined) return set.deliver(stream, toWireText(message as unknown as JsonRpcMessage), final);
      if (stream.complete) return;
      // The sink decides JSON or SSE itself; the set keeps the count of answers owed.
      if (final) stream.remaining--;
      take(message, final);
      if (final && stream.remaining === 0) finish(stream);
    },

    drop(stream, fallbackAnswer) {
      if (stream.complete) return;
      if (stream.mode === SSE_MODE || stream.sink?.channel === true) {
        if (--stream.remaining === 0) finish(stream);
      } else {
        // An undecided response must still be answered: HTTP has no way to say "nothing".
        set.send(stream, fallbackAnswer, true);
      }
    },

    pick(preferStandalone) {
      if (preferStandalone) return standalone;
      let last: OutStream | undefined;
      let count = 0;
      for (const s of unfinished) {
        count++;
        last = s;
      }
      const usable = last !== undefined && (live(last) || last.mode === SSE_MODE);
      if (count === 1 && usable && last) return last;
      if (live(standalone)) return standalone;
      if (usable && last) return last;
      return standalone;
    },

    attachStandalone(sink) {
      if (live(standalone)) return false;
      attach(standalone, sink);
      sink.sse();
      if (priming()) write(standalone, '');
      // Deliver what arrived while no GET stream was open.
      for (const e of log.after(0, standaloneDeliveredSeq)) {
        if (e.data !== '') sink.event(e.id, e.data);
        standaloneDeliveredSeq = e.seq;
      }
      backlog = 0;
      return true;
    },

    resume(sink, lastEventId) {
      const cursor = parseEventId(lastEventId);
      const stream = cursor && streams.get(cursor.stream);
      if (!cursor || !stream || !stream.options.replay) return false;
      if (cursor.seq < log.oldestSeq - 1) {
        logger.warn({ stream: stream.id, lastEventId }, 'resume from an event no longer buffered; some events are lost');
      }
      attach(stream, sink);
      sink.sse();
      for (const e of log.after(stream.id, cursor.seq)) {
        if (e.data !== '') sink.event(e.id, e.data);
        if (stream.standalone) standaloneDeliveredSeq = Math.max(standaloneDeliveredSeq, e.seq);
      }
      if (stream.standalone) backlog = 0;
      if (stream.complete) sink.end();
      return true;
    },

    get backlog() {
      return backlog;
    },

    get busy() {
      return unfinished.size > 0;
    },

    get listening() {
      return live(standalone);
    },

    endAll() {
      for (const s of streams.values()) {
        const sink = s.sink;
        if (sink !== undefined && !sink.closed) sink.end();
      }
    },
  };
  return set;
}
