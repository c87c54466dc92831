import { describe, expect, it } from 'vitest';
import { LARGE_LINE_CHARS, scanLargeResponse, skipValue, stringEnd } from '../../../src/jsonrpc/large-response.ts';
import type { JsonRpcResponse } from '../../../src/jsonrpc/types.ts';
import { toWireText } from '../../../src/jsonrpc/wire-text.ts';

const pad = '.'.repeat(LARGE_LINE_CHARS);

/** The scanner's answer, checked against JSON.parse of the same line (result read lazily). */
function scanAgreeing(line: string): JsonRpcResponse {
  const message = scanLargeResponse(line);
  expect(message).toBeDefined();
  const parsed = JSON.parse(line) as JsonRpcResponse;
  expect((message as JsonRpcResponse).id).toBe(parsed.id);
  expect(JSON.parse(JSON.stringify(message))).toEqual(parsed);
  return message as JsonRpcResponse;
}

describe('scanLargeResponse: lines it reads', () => {
  it('reads the plain form, keeps the text and splices the client id in byte for byte', () => {
    const line = `{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"${pad}"}]}}`;
    const message = scanAgreeing(line);
    message.id = 'client "id" é';
    expect(toWireText(message)).toBe(line.replace('"id":17', `"id":${JSON.stringify('client "id" é')}`));
  });

  it('finds the id last, after a result full of nested "id" keys, escaped quotes and unicode', () => {
    const result = `{"id":1,"a":{"id":2,"s":"say \\"id\\": 3 \\\\","t":"é ü 😀 \\u0022"},"list":[{"id":4},[],{},"x\\\\\\"y"],"text":"${pad}"}`;
    const line = ` \r\n{ "result" : ${result} ,\n\t"jsonrpc" : "2.0" , "id" : 5 } \n `;
    const message = scanAgreeing(line);
    expect(message.id).toBe(5);
    message.id = 9007199254740993n.toString();
    const out = toWireText(message);
    expect(JSON.parse(out)).toEqual({ ...JSON.parse(line), id: '9007199254740993' });
    expect(out).toBe(line.replace('"id" : 5 }', '"id" : "9007199254740993" }'));
  });

  it('accepts every kind of JSON value inside the result', () => {
    const line = `{"id":0,"result":{"n":[-0.5e+3,0,12,1E2],"b":[true,false,null],"o":{"":{}},"s":"${pad}"},"jsonrpc":"2.0"}`;
    expect(scanAgreeing(line).id).toBe(0);
  });

  it('makes result a lazy property that behaves like data: read, assigned, listed', () => {
    const message = scanAgreeing(`{"jsonrpc":"2.0","id":1,"result":{"k":"${pad}"}}`) as unknown as { result: unknown };
    expect('result' in message).toBe(true);
    expect(Object.keys(message)).toEqual(['jsonrpc', 'id', 'result']);
    expect((message.result as { k: string }).k).toBe(pad);
    message.result = { replaced: true };
    expect(message.result).toEqual({ replaced: true });
  });
});

describe('scanLargeResponse: lines left to the full parse', () => {
  const cases: Array<[string, string]> = [
    ['an error response', `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"${pad}"}}`],
    ['a request', `{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"${pad}"}}`],
    ['a notification', `{"jsonrpc":"2.0","method":"x","params":{"s":"${pad}"}}`],
    ['a wrong version', `{"jsonrpc":"1.0","id":1,"result":{"s":"${pad}"}}`],
    ['no jsonrpc', `{"id":1,"result":{"s":"${pad}"}}`],
    ['no id', `{"jsonrpc":"2.0","result":{"s":"${pad}"}}`],
    ['no result', `{"jsonrpc":"2.0","id":1,"pad":"${pad}"}`],
    ['both result and error', `{"jsonrpc":"2.0","id":1,"result":{"s":"${pad}"},"error":{"code":1,"message":"m"}}`],
    ['a repeated id', `{"jsonrpc":"2.0","id":1,"id":2,"result":{"s":"${pad}"}}`],
    ['a repeated result', `{"jsonrpc":"2.0","id":1,"result":{},"result":{"s":"${pad}"}}`],
    ['a string id', `{"jsonrpc":"2.0","id":"1","result":{"s":"${pad}"}}`],
    ['a negative id', `{"jsonrpc":"2.0","id":-1,"result":{"s":"${pad}"}}`],
    ['a fractional id', `{"jsonrpc":"2.0","id":1.0,"result":{"s":"${pad}"}}`],
    ['an exponent id', `{"jsonrpc":"2.0","id":1e3,"result":{"s":"${pad}"}}`],
    ['a leading-zero id', `{"jsonrpc":"2.0","id":01,"result":{"s":"${pad}"}}`],
    ['a big integer id', `{"jsonrpc":"2.0","id":9007199254740993,"result":{"s":"${pad}"}}`],
    ['a null id', `{"jsonrpc":"2.0","id":null,"result":{"s":"${pad}"}}`],
    ['an escaped key', `{"jsonrpc":"2.0","\\u0069d":1,"result":{"s":"${pad}"}}`],
    ['a result that is not an object', `{"jsonrpc":"2.0","id":1,"result":["${pad}"]}`],
    ['an unknown top-level key', `{"jsonrpc":"2.0","id":1,"result":{"s":"${pad}"},"extra":1}`],
    ['an unclosed string', `{"jsonrpc":"2.0","id":1,"result":{"s":"${pad}}}`],
    ['an escaped closing quote', `{"jsonrpc":"2.0","id":1,"result":{"s":"${pad}\\"}}`],
    ['an unclosed result', `{"jsonrpc":"2.0","id":1,"result":{"s":"${pad}"}`],
    ['a mismatched bracket', `{"jsonrpc":"2.0","id":1,"result":{"s":["${pad}"}}}`],
    ['a missing comma', `{"jsonrpc":"2.0","id":1,"result":{"s":"${pad}" "t":1}}`],
    ['a trailing comma', `{"jsonrpc":"2.0","id":1,"result":{"s":"${pad}",}}`],
    ['a missing colon', `{"jsonrpc":"2.0","id":1,"result":{"s" "${pad}"}}`],
    ['a bad literal', `{"jsonrpc":"2.0","id":1,"result":{"s":"${pad}","t":tru}}`],
    ['a bad number', `{"jsonrpc":"2.0","id":1,"result":{"s":"${pad}","t":+1}}`],
    ['a bare word', `{"jsonrpc":"2.0","id":1,"result":{"s":"${pad}","t":abc}}`],
    ['text after the object', `{"jsonrpc":"2.0","id":1,"result":{"s":"${pad}"}} x`],
    ['two objects', `{"jsonrpc":"2.0","id":1,"result":{"s":"${pad}"}}{}`],
    ['a batch', `[{"jsonrpc":"2.0","id":1,"result":{"s":"${pad}"}}]`],
    ['a top-level trailing comma', `{"jsonrpc":"2.0","id":1,"result":{"s":"${pad}"},}`],
  ];
  it.each(cases)('%s', (_name, line) => {
    expect(scanLargeResponse(line)).toBeUndefined();
  });

  it('refuses every truncation of a valid line', () => {
    const line = `{"jsonrpc":"2.0","id":12,"result":{"a":[1,{"b":"c\\"d"}],"s":"${pad}","t":true}}`;
    expect(scanLargeResponse(line)).toBeDefined();
    for (const cut of [1, 2, 5, 10, 20, 30]) expect(scanLargeResponse(line.slice(0, line.length - cut))).toBeUndefined();
    for (const cut of [1, 10, 20, 30, 40]) expect(scanLargeResponse(line.slice(0, cut) + line.slice(cut + 1))).toBeUndefined();
  });
});

describe('skipValue and stringEnd', () => {
  it('agrees with JSON.parse on where a value ends, and refuses what it refuses', () => {
    const good = ['{}', '[]', '""', '"a\\\\"', '"\\\\\\""', '0', '-1.5e-7', 'true', 'null', '{"a":[{"b":{}}],"c":""}', '[1,[2,[3]]]', ' { "a" : 1 }'];
    for (const v of good) {
      expect(() => JSON.parse(v)).not.toThrow();
      expect(skipValue(v + ' ,', 0)).toBe(v.length);
    }
    const bad = ['{', '[1,]', '{"a"}', '{"a":}', '{,}', '[1 2]', '{"a":1,}', '"abc', '-', '01x', 'nul', '{1:2}', '[}', '{]'];
    for (const v of bad) {
      expect(() => JSON.parse(v)).toThrow();
      const end = skipValue(v, 0);
      // Either refused, or it stopped before garbage that the caller must then refuse.
      expect(end === -1 || end < v.length).toBe(true);
    }
  });

  it('survives deep nesting without recursion', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(skipValue(deep, 0)).toBe(deep.length);
    expect(skipValue(deep.slice(0, -1), 0)).toBe(-1);
  });

  it('counts backslashes before a quote', () => {
    expect(stringEnd('"a\\"b"', 0)).toBe(5);
    expect(stringEnd('"a\\\\"b"', 0)).toBe(4);
    expect(stringEnd('"a\\\\\\"', 0)).toBe(-1);
  });
});
