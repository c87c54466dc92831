import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.ts';
import { createEventLog } from '../../../src/session/event-log.ts';
import { BATCH_2025, createStreamSet, MODERN_REQUEST, POST_2025, type ResponseSink, type StreamOptions } from '../../../src/session/streams.ts';

interface Recorded {
  json?: string;
  sse: boolean;
  events: Array<[string, string]>;
  ended: boolean;
}

function sink(): ResponseSink & { rec: Recorded; drop(): void } {
  const rec: Recorded = { sse: false, events: [], ended: false };
  let closed = false;
  const s = {
    rec,
    onclose: undefined as (() => void) | undefined,
    get closed() {
      return closed;
    },
    json(body: string) {
      rec.json = body;
      closed = true;
    },
    sse() {
      rec.sse = true;
    },
    event(id: string, data: string) {
      rec.events.push([id, data]);
    },
    end() {
      rec.ended = true;
      closed = true;
    },
    drop() {
      closed = true;
      s.onclose?.();
    },
  };
  return s;
}

function set(priming = false, onabandon?: (stream: unknown) => void) {
  return createStreamSet({ log: createEventLog(100, 1 << 20), logger: createLogger({ level: 'silent' }), priming: () => priming, keepFinished: 8, ...(onabandon ? { onabandon } : {}) });
}

/** The stateless era's stream: nothing to resume, and a closed response cancels. */
const STATELESS: StreamOptions = { batch: false, replay: false, cancelOnClose: true };

describe('stream set', () => {
  it('a dropped request on an HTTP response still gets the fallback answer; on a message channel none', () => {
    const streams = set();
    const http = sink();
    streams.drop(streams.open(http, 1, POST_2025), { id: 1, error: {} });
    expect(http.rec.json).toBe('{"id":1,"error":{}}');
    const channel = Object.assign(sink(), { channel: true });
    streams.drop(streams.open(channel, 1, POST_2025), { id: 1, error: {} });
    expect(channel.rec).toMatchObject({ sse: false, events: [] });
    expect(channel.rec.json).toBeUndefined();
  });

  it('answers a lone request with plain JSON', () => {
    const streams = set();
    const s = sink();
    streams.deliver(streams.open(s, 1, POST_2025), '{"id":1}', true);
    expect(s.rec).toMatchObject({ json: '{"id":1}', sse: false });
  });

  it('switches to SSE when something comes before the answer, then ends after it', () => {
    const streams = set(true);
    const s = sink();
    const stream = streams.open(s, 1, POST_2025);
    streams.deliver(stream, '{"progress":1}', false);
    streams.deliver(stream, '{"id":1}', true);
    expect(s.rec.sse).toBe(true);
    // Priming event (empty data) first, then the two messages, then the end.
    expect(s.rec.events.map(([, d]) => d)).toEqual(['', '{"progress":1}', '{"id":1}']);
    expect(s.rec.ended).toBe(true);
  });

  it('answers a batch with one JSON array when nothing else came', () => {
    const streams = set();
    const s = sink();
    const stream = streams.open(s, 2, BATCH_2025);
    streams.deliver(stream, '{"id":1}', true);
    streams.deliver(stream, '{"id":2}', true);
    expect(s.rec.json).toBe('[{"id":1},{"id":2}]');
  });

  it('keeps recording after the client went away, and replays on resume', () => {
    const streams = set(true);
    const first = sink();
    const stream = streams.open(first, 1, POST_2025);
    streams.deliver(stream, '{"progress":1}', false);
    const [lastId] = first.rec.events.at(-1)!;
    first.drop();
    streams.deliver(stream, '{"progress":2}', false);
    streams.deliver(stream, '{"id":1}', true);
    const second = sink();
    expect(streams.resume(second, lastId)).toBe(true);
    expect(second.rec.events.map(([, d]) => d)).toEqual(['{"progress":2}', '{"id":1}']);
    expect(second.rec.ended).toBe(true);
  });

  it('queues standalone messages until a GET attaches, and refuses a second GET', () => {
    const streams = set();
    streams.deliver(streams.standalone, '{"method":"a"}', false);
    expect(streams.backlog).toBe(1);
    const get = sink();
    expect(streams.attachStandalone(get)).toBe(true);
    expect(get.rec.events.map(([, d]) => d)).toEqual(['{"method":"a"}']);
    expect(streams.attachStandalone(sink())).toBe(false);
    streams.deliver(streams.standalone, '{"method":"b"}', false);
    expect(get.rec.events.map(([, d]) => d)).toEqual(['{"method":"a"}', '{"method":"b"}']);
  });

  it('picks the single open request stream, else the GET stream', () => {
    const streams = set();
    const a = streams.open(sink(), 1, POST_2025);
    expect(streams.pick(false)).toBe(a);
    expect(streams.pick(true)).toBe(streams.standalone);
    streams.open(sink(), 1, POST_2025);
    const get = sink();
    streams.attachStandalone(get);
    expect(streams.pick(false)).toBe(streams.standalone);
  });

  it('an unknown Last-Event-ID is not resumable', () => {
    expect(set().resume(sink(), '42-7')).toBe(false);
    expect(set().resume(sink(), 'garbage')).toBe(false);
  });

  it('a stream without replay writes events without ids, primes nothing, and cannot be resumed', () => {
    const streams = set(true);
    const s = sink();
    const stream = streams.open(s, 1, STATELESS);
    streams.deliver(stream, '{"progress":1}', false);
    streams.deliver(stream, '{"id":1}', true);
    expect(s.rec.events).toEqual([
      ['', '{"progress":1}'],
      ['', '{"id":1}'],
    ]);
    expect(s.rec.ended).toBe(true);
    // Even an id the 2025 format would accept names nothing on such a stream.
    expect(streams.resume(sink(), `${stream.id}-0`)).toBe(false);
  });

  it('a cancelOnClose stream reports its client going away while answers are owed, and only then', () => {
    const abandoned: unknown[] = [];
    const streams = set(false, (stream) => abandoned.push(stream));
    const early = sink();
    const owed = streams.open(early, 1, STATELESS);
    early.drop();
    expect(abandoned).toEqual([owed]);
    const late = sink();
    streams.deliver(streams.open(late, 1, STATELESS), '{"id":2}', true);
    late.drop();
    expect(abandoned).toHaveLength(1);
  });

  it('a 2025 stream losing its client is not a cancel', () => {
    const abandoned: unknown[] = [];
    const streams = set(false, (stream) => abandoned.push(stream));
    const s = sink();
    streams.open(s, 1, POST_2025);
    s.drop();
    expect(abandoned).toEqual([]);
  });

  it('a sink that takes objects gets each message as it is, never text; the set still counts the answers owed', () => {
    const abandoned: unknown[] = [];
    const streams = set(false, (stream) => abandoned.push(stream));
    const base = sink();
    const taken: Array<[unknown, boolean]> = [];
    const objects = Object.assign(base, { take: (message: unknown, final: boolean) => void taken.push([message, final]) });
    const stream = streams.open(objects, 1, MODERN_REQUEST);
    const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } };
    const answer = { jsonrpc: '2.0', id: 'c-1', result: {} };
    streams.send(stream, progress, false);
    expect(streams.busy).toBe(true);
    streams.send(stream, answer, true);
    expect(taken).toEqual([[progress, false], [answer, true]]);
    expect(taken[1]?.[0]).toBe(answer);
    expect(base.rec.json).toBeUndefined();
    expect(base.rec).toMatchObject({ sse: false, events: [] });
    expect(streams.busy).toBe(false);
    // Answered: the client going away now is no cancel.
    base.drop();
    expect(abandoned).toEqual([]);
  });

  it('a 2026 stream whose object sink closes before its answer is abandoned (the core cancels it); a text sink still gets text', () => {
    const abandoned: unknown[] = [];
    const streams = set(false, (stream) => abandoned.push(stream));
    const objects = Object.assign(sink(), { take: () => undefined });
    const stream = streams.open(objects, 1, MODERN_REQUEST);
    objects.drop();
    expect(abandoned).toEqual([stream]);
    const text = sink();
    streams.send(streams.open(text, 1, POST_2025), { jsonrpc: '2.0', id: 1, result: { a: 1 } }, true);
    expect(text.rec.json).toBe('{"jsonrpc":"2.0","id":1,"result":{"a":1}}');
  });
});
