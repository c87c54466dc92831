import { describe, expect, it } from 'vitest';
import { spliceComplete, toModernAnswer } from '../../../../src/session/stateless/relay.ts';

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
