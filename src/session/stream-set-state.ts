/**
 * The state of a session's stream set and the module-level functions over it (streams.ts keeps the
 * set's own methods, the per-message path): attaching a response, writing, switching a stream to
 * SSE, finishing it, picking a stream for a server-initiated message, and the GET side (the
 * standalone stream, resuming with `Last-Event-ID`). They take the state instead of closing over
 * it, so a set allocates no function per message.
 */
import type { JsonObject } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { type EventLog, parseEventId } from './event-log.ts';
import { unwatchSlow } from './slow-streams.ts';
import { PENDING, POST_2025, SSE_MODE, type OutStream, type ResponseSink } from './stream-shapes.ts';

/** What a stream set is made from (streams.ts re-exports it). */
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

/** The mutable state of one stream set. */
export interface StreamSetState {
  readonly log: EventLog;
  readonly logger: Logger;
  readonly priming: () => boolean;
  readonly keepFinished: number;
  readonly onabandon: ((stream: OutStream) => void) | undefined;
  readonly onsend: ((message: JsonObject) => void) | undefined;
  readonly streams: Map<number, OutStream>;
  readonly unfinished: Set<OutStream>;
  /** Ids of finished resumable streams, oldest first (at most keepFinished). */
  readonly finished: number[];
  readonly standalone: OutStream;
  /** What the slow-answer ticker calls (slow-streams.ts): made once per set, not per stream. */
  readonly promote: (stream: OutStream) => void;
  nextId: number;
  standaloneDeliveredSeq: number;
  backlog: number;
}

export function createStreamSetState({ log, logger, priming, keepFinished, onabandon, onsend }: StreamSetOptions): StreamSetState {
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
  const s: StreamSetState = {
    log,
    logger,
    priming,
    keepFinished,
    onabandon,
    onsend,
    streams: new Map([[0, standalone]]),
    unfinished: new Set(),
    finished: [],
    standalone,
    promote: (stream) => promote(s, stream),
    nextId: 1,
    standaloneDeliveredSeq: 0,
    backlog: 0,
  };
  return s;
}

export function live(stream: OutStream): boolean {
  return stream.sink !== undefined && !stream.sink.closed;
}

export function attach(s: StreamSetState, stream: OutStream, sink: ResponseSink): void {
  const old = stream.sink;
  stream.sink = sink;
  sink.onclose = () => {
    if (stream.sink === sink) stream.sink = undefined;
    if (stream.options.cancelOnClose && !stream.complete) {
      s.logger.debug({ stream: stream.id }, 'client went away from a stream; its requests are cancelled');
      s.onabandon?.(stream);
    } else {
      s.logger.debug({ stream: stream.id }, 'client went away from a stream (not a cancel)');
    }
  };
  if (old !== undefined && old !== sink && !old.closed) old.end();
}

export function write(s: StreamSetState, stream: OutStream, data: string): void {
  // Without replay an event has no id: there is nothing to resume from.
  const id = stream.options.replay ? s.log.append(stream.id, data) : '';
  const sink = stream.sink;
  if (sink !== undefined && !sink.closed) {
    sink.event(id, data);
    if (stream.standalone) s.standaloneDeliveredSeq = s.log.lastSeq;
  } else if (stream.standalone) {
    s.backlog++;
  }
}

export function finish(s: StreamSetState, stream: OutStream): void {
  stream.complete = true;
  unwatchSlow(stream);
  s.unfinished.delete(stream);
  if (stream.mode === SSE_MODE && stream.options.replay) {
    s.finished.push(stream.id);
    while (s.finished.length > s.keepFinished) s.streams.delete(s.finished.shift() as number);
  } else {
    s.streams.delete(stream.id);
  }
  const sink = stream.sink;
  if (sink !== undefined && !sink.closed) sink.end();
}

export function startSse(s: StreamSetState, stream: OutStream): void {
  stream.mode = SSE_MODE;
  stream.sink?.sse();
  if (stream.options.replay && s.priming()) write(s, stream, '');
  const collected = stream.collected;
  stream.collected = undefined;
  if (collected) for (const data of collected) write(s, stream, data);
}

function promote(s: StreamSetState, stream: OutStream): void {
  if (stream.mode === PENDING && !stream.complete && live(stream)) startSse(s, stream);
}

/** Where a server-initiated message goes when nothing ties it to a request (StreamSet.pick). */
export function pick(s: StreamSetState, preferStandalone: boolean): OutStream {
  const standalone = s.standalone;
  if (preferStandalone) return standalone;
  let last: OutStream | undefined;
  let count = 0;
  for (const u of s.unfinished) {
    count++;
    last = u;
  }
  const usable = last !== undefined && (live(last) || last.mode === SSE_MODE);
  if (count === 1 && usable && last) return last;
  if (live(standalone)) return standalone;
  if (usable && last) return last;
  return standalone;
}

/** A GET without Last-Event-ID (StreamSet.attachStandalone). */
export function attachStandalone(s: StreamSetState, sink: ResponseSink): boolean {
  const standalone = s.standalone;
  if (live(standalone)) return false;
  attach(s, standalone, sink);
  sink.sse();
  if (s.priming()) write(s, standalone, '');
  // Deliver what arrived while no GET stream was open.
  for (const e of s.log.after(0, s.standaloneDeliveredSeq)) {
    if (e.data !== '') sink.event(e.id, e.data);
    s.standaloneDeliveredSeq = e.seq;
  }
  s.backlog = 0;
  return true;
}

/** A GET with Last-Event-ID (StreamSet.resume). */
export function resume(s: StreamSetState, sink: ResponseSink, lastEventId: string): boolean {
  const cursor = parseEventId(lastEventId);
  const stream = cursor && s.streams.get(cursor.stream);
  if (!cursor || !stream || !stream.options.replay) return false;
  if (cursor.seq < s.log.oldestSeq - 1) {
    s.logger.warn({ stream: stream.id, lastEventId }, 'resume from an event no longer buffered; some events are lost');
  }
  attach(s, stream, sink);
  sink.sse();
  for (const e of s.log.after(stream.id, cursor.seq)) {
    if (e.data !== '') sink.event(e.id, e.data);
    if (stream.standalone) s.standaloneDeliveredSeq = Math.max(s.standaloneDeliveredSeq, e.seq);
  }
  if (stream.standalone) s.backlog = 0;
  if (stream.complete) sink.end();
  return true;
}

/** Ends every attached response (StreamSet.endAll). */
export function endAll(s: StreamSetState): void {
  for (const stream of s.streams.values()) {
    const sink = stream.sink;
    if (sink !== undefined && !sink.closed) sink.end();
  }
}
