import { describe, expect, it } from 'vitest';
import { createRelay, spliceComplete, toModernAnswer } from '../../../../src/session/stateless/relay.ts';

describe('spliceComplete: a large 2026 answer without serializing it again', () => {
  it('puts resultType into a plain result, whatever the spacing, key order and id type', () => {
    for (const body of [
      '{"jsonrpc":"2.0","id":"client-1","result":{"content":[{"type":"text","text":"hi"}]}}',
      '{"id":"client-1","jsonrpc":"2.0","result":{"content":[{"type":"text","text":"hi"}]}}',
      '{ "jsonrpc": "2.0", "id": "client-1", "result": {"content": [{"type": "text", "text": "hi"}]}}',
    ]) {
      const text = spliceComplete(body);
      expect(text, body).toBeDefined();
      expect(JSON.parse(text as string)).toEqual({ jsonrpc: '2.0', id: 'client-1', result: { resultType: 'complete', content: [{ type: 'text', text: 'hi' }] } });
    }
  });

  it('an empty result, and an id kept as its exact text', () => {
    expect(JSON.parse(spliceComplete('{"jsonrpc":"2.0","id":1E2,"result":{}}') as string)).toEqual({ jsonrpc: '2.0', id: 100, result: { resultType: 'complete' } });
    expect(spliceComplete('{"jsonrpc":"2.0","id":1E2,"result":{ }}')).toBe('{"jsonrpc":"2.0","id":1E2,"result":{"resultType":"complete" }}');
    expect(spliceComplete('{"jsonrpc":"2.0","id":"a\\"b","result":{}}')).toBe('{"jsonrpc":"2.0","id":"a\\"b","result":{"resultType":"complete"}}');
  });

  it('declines what is not plain: an error, a result first, a resultType already there, a look-alike key', () => {
    expect(spliceComplete('{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"x"}}')).toBeUndefined();
    expect(spliceComplete('{"result":{"a":1},"jsonrpc":"2.0","id":7}')).toBeUndefined();
    expect(spliceComplete('{"jsonrpc":"2.0","id":7,"result":{"resultType":"input_required"}}')).toBeUndefined();
    expect(spliceComplete('{"jsonrpc":"2.0","x":"\\"result\\":{","id":7,"result":{}}')).toBeUndefined();
  });
});

describe('toModernAnswer', () => {
  it('cache hints on lists, private whatever the upstream said; -32002 becomes -32602 with the uri', () => {
    const list = JSON.parse(toModernAnswer({ jsonrpc: '2.0', id: 1, result: { tools: [], cacheScope: 'public', ttlMs: 5 } }, 'x', 'tools/list').body);
    expect(list).toEqual({ jsonrpc: '2.0', id: 'x', result: { tools: [], resultType: 'complete', ttlMs: 5, cacheScope: 'private' } });
    const missing = toModernAnswer({ jsonrpc: '2.0', id: 1, error: { code: -32002, message: 'nope' } }, 2, 'resources/read', 'test://a');
    expect(missing.status).toBe(200);
    expect(JSON.parse(missing.body).error).toEqual({ code: -32602, message: 'nope', data: { uri: 'test://a' } });
    expect(toModernAnswer({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'x' } }, 2, 'x/y').status).toBe(404);
    expect(toModernAnswer({ jsonrpc: '2.0', id: 1, error: { code: -32021, message: 'x' } }, 2, 'tools/call').status).toBe(400);
  });
});

describe('createRelay: the sink of a 2026 request', () => {
  const exchange = () => {
    const seen = { json: [] as Array<[number, string]>, sse: 0, events: [] as string[], ended: 0 };
    let closed = false;
    const ex = {
      seen,
      onclose: undefined as (() => void) | undefined,
      get closed() {
        return closed;
      },
      json(status: number, body: string) {
        seen.json.push([status, body]);
        closed = true;
      },
      sse: () => void seen.sse++,
      event: (data: string) => void seen.events.push(data),
      end() {
        seen.ended++;
        closed = true;
      },
      goAway() {
        closed = true;
        ex.onclose?.();
      },
    };
    return ex;
  };
  const hooks = () => {
    const calls = { asked: [] as unknown[], done: 0 };
    return { calls, ask: (_r: unknown, m: unknown) => void calls.asked.push(m), done: () => void calls.done++ };
  };

  it('takes the answer object and writes it once, in the 2026 shape, under the client id', () => {
    const ex = exchange();
    const h = hooks();
    const relay = createRelay(ex, 1, 'c-1', 'tools/call', undefined, h);
    relay.take?.({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } }, false);
    relay.take?.({ jsonrpc: '2.0', id: 'c-1', result: { content: [] } }, true);
    expect(ex.seen.json).toEqual([[200, '{"jsonrpc":"2.0","id":"c-1","result":{"content":[],"resultType":"complete"}}']]);
    // No logLevel asked for: the log line was not relayed, and the answer stayed plain JSON.
    expect(ex.seen.sse).toBe(0);
    expect(h.calls.done).toBe(1);
    expect(relay.closed).toBe(true);
  });

  it('progress turns the response into SSE; a server->client request goes to ask, never to the client', () => {
    const ex = exchange();
    const h = hooks();
    const relay = createRelay(ex, 1, 7, 'tools/call', 'debug', h);
    const question = { jsonrpc: '2.0', id: 3, method: 'sampling/createMessage', params: {} };
    relay.take?.(question, false);
    relay.take?.({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } }, false);
    relay.take?.({ jsonrpc: '2.0', id: 7, result: {} }, true);
    expect(h.calls.asked).toEqual([question]);
    expect(ex.seen.sse).toBe(1);
    expect(ex.seen.events.map((e) => JSON.parse(e).method ?? 'answer')).toEqual(['notifications/progress', 'answer']);
    expect(ex.seen.ended).toBe(1);
  });

  it('the client going away closes the sink (the core cancels the request) once; a parked call is not closed by its answered exchange', () => {
    const ex = exchange();
    const h = hooks();
    const relay = createRelay(ex, 1, 1, 'tools/call', undefined, h);
    let closes = 0;
    relay.onclose = () => void closes++;
    ex.goAway();
    expect([closes, h.calls.done, relay.finished]).toEqual([1, 1, true]);
    relay.take?.({ jsonrpc: '2.0', id: 1, result: {} }, true);
    expect(ex.seen.json).toEqual([]);

    const first = exchange();
    const parkedHooks = hooks();
    const parked = createRelay(first, 2, 'a', 'tools/call', undefined, parkedHooks);
    let parkedCloses = 0;
    parked.onclose = () => void parkedCloses++;
    parked.park({ jsonrpc: '2.0', id: 'a', result: { resultType: 'input_required', inputRequests: {}, requestState: 's' } });
    first.goAway();
    expect([parkedCloses, parkedHooks.calls.done, parked.parked]).toEqual([0, 0, true]);
    // Nobody came back: given up, closed the same way (the core cancels it upstream).
    parked.drop();
    expect([parkedCloses, parkedHooks.calls.done, parked.finished]).toEqual([1, 1, true]);
  });
});
