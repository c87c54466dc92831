/**
 * StreamSet.challenge (step-up): a refusal becomes the sink's 403 only while the response has not
 * started and is one request's; otherwise it is that request's JSON-RPC answer.
 */
import type { JsonObject } from '../../../src/jsonrpc/types.ts';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.ts';
import { createEventLog } from '../../../src/session/event-log.ts';
import { BATCH_2025, CHANNEL_REQUEST, createStreamSet, POST_2025, type ResponseSink } from '../../../src/session/streams.ts';

interface Written {
  json: string[];
  events: string[];
  challenged: Array<[string, readonly string[]]>;
}

function sink(canChallenge: boolean): ResponseSink & { out: Written } {
  const out: Written = { json: [], events: [], challenged: [] };
  let closed = false;
  const s: ResponseSink & { out: Written } = {
    out,
    onclose: undefined,
    get closed() {
      return closed;
    },
    json: (body) => void (out.json.push(body), (closed = true)),
    sse: () => undefined,
    event: (_id, data) => void out.events.push(data),
    end: () => void (closed = true),
  };
  if (canChallenge) s.challenge = (message, scopes) => void (out.challenged.push([JSON.stringify(message), scopes]), (closed = true));
  return s;
}

const streams = () => createStreamSet({ log: createEventLog(100, 1 << 20), logger: createLogger({ level: 'silent' }), priming: () => false, keepFinished: 8 });
const REFUSAL = '{"jsonrpc":"2.0","id":1,"error":{}}';
/** The refusal as the stream set is handed it (an object; it serializes it once, where it must). */
const refusal = () => JSON.parse(REFUSAL) as JsonObject;

describe('StreamSet.challenge', () => {
  it("an undecided single request's response: the sink's 403", () => {
    const set = streams();
    const http = sink(true);
    set.challenge(set.open(http, 1, POST_2025), refusal(), ['files:write']);
    expect(http.out).toEqual({ json: [], events: [], challenged: [[REFUSAL, ['files:write']]] });
  });

  it('a response already streaming (SSE): an event carrying the error', () => {
    const set = streams();
    const http = sink(true);
    const stream = set.open(http, 1, POST_2025);
    set.deliver(stream, '{"jsonrpc":"2.0","method":"notifications/progress","params":{}}', false);
    set.challenge(stream, refusal(), ['files:write']);
    expect(http.out.challenged).toEqual([]);
    expect(http.out.events.at(-1)).toBe(REFUSAL);
  });

  it('a batch: the error among the answers, no 403 for the whole POST', () => {
    const set = streams();
    const http = sink(true);
    const stream = set.open(http, 2, BATCH_2025);
    set.challenge(stream, refusal(), ['files:write']);
    set.deliver(stream, '{"jsonrpc":"2.0","id":2,"result":{}}', true);
    expect(http.out.challenged).toEqual([]);
    expect(http.out.json).toEqual([`[${REFUSAL},{"jsonrpc":"2.0","id":2,"result":{}}]`]);
  });

  it('a sink that cannot refuse (a message channel, stepUp jsonrpc): the error as the answer', () => {
    const set = streams();
    const channel = sink(false);
    set.challenge(set.open(channel, 1, CHANNEL_REQUEST), refusal(), ['files:write']);
    expect(channel.out.json).toEqual([REFUSAL]);
  });
});
