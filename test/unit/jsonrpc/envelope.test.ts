import { describe, expect, it } from 'vitest';
import { idKey, idText, parseJson, toMessage } from '../../../src/jsonrpc/envelope.ts';

describe('parseJson', () => {
  it('keeps ordinary ids as numbers and strings', () => {
    expect(parseJson('{"jsonrpc":"2.0","id":7,"method":"x"}')).toEqual({ jsonrpc: '2.0', id: 7, method: 'x' });
  });

  it('keeps the exact text of a big numeric id and writes it back unchanged', () => {
    const text = '{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"x","params":{"n":1.5}}';
    const value = parseJson(text) as { id: unknown; params: unknown };
    expect(JSON.stringify(value)).toBe(text);
    expect(idText(value.id as never)).toBe('123456789012345678901234567890');
  });

  it('handles big ids inside a batch', () => {
    const text = '[{"jsonrpc":"2.0","id":99999999999999999999,"method":"x"},{"jsonrpc":"2.0","id":1,"method":"y"}]';
    expect(JSON.stringify(parseJson(text))).toBe(text);
  });

  // The scan's shortcut (digits alone, up to 15, no leading zero) against the full round trip:
  // every spelling is written back as it came, whichever side of the shortcut it falls on.
  it.each(['0', '7', '10', '123456789012345', '1234567890123456', '9007199254740993', '-0', '-5', '1.0', '1E2', '1e-0', '2.50', '12345678901234567890'])(
    'writes the id %s back exactly as it was sent, as id, requestId and progressToken',
    (id) => {
      for (const text of [
        `{"jsonrpc":"2.0","id":${id},"method":"x"}`,
        `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${id}}}`,
        `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":${id}}}}`,
      ]) {
        expect(JSON.stringify(parseJson(text))).toBe(text);
      }
    },
  );

  it('throws on malformed JSON', () => {
    expect(() => parseJson('{"a":')).toThrow(SyntaxError);
  });
});

describe('toMessage', () => {
  const bad: Array<[unknown, RegExp]> = [
    [42, /object/],
    [[], /object/],
    [{ id: 1, method: 'x' }, /jsonrpc/],
    [{ jsonrpc: '2.0', id: null, method: 'x' }, /id/],
    [{ jsonrpc: '2.0', id: true, method: 'x' }, /id/],
    [{ jsonrpc: '2.0', method: '' }, /method/],
    [{ jsonrpc: '2.0', method: 'x', params: 'p' }, /params/],
    [{ jsonrpc: '2.0' }, /method|id/],
    [{ jsonrpc: '2.0', id: 1 }, /result|error/],
    [{ jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'm' } }, /exactly one/],
    [{ jsonrpc: '2.0', id: 1, error: { code: 'x', message: 'm' } }, /error/],
  ];
  for (const [value, problem] of bad) {
    it(`refuses ${JSON.stringify(value)}`, () => {
      const result = toMessage(value);
      expect(typeof result).toBe('string');
      expect(result).toMatch(problem);
    });
  }

  it('accepts requests, notifications, responses and unknown extra fields untouched', () => {
    const msg = { jsonrpc: '2.0', id: 'a', method: 'x', params: {}, extra: { keep: true } };
    expect(toMessage(msg)).toBe(msg);
    expect(typeof toMessage({ jsonrpc: '2.0', method: 'notifications/x' })).toBe('object');
    expect(typeof toMessage({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'm' } })).toBe('object');
  });
});

describe('idKey', () => {
  it('keeps "1" and 1 apart', () => {
    expect(idKey('1')).not.toBe(idKey(1));
  });
});
