import { describe, expect, it } from 'vitest';
import { JsonTooDeepError, MAX_JSON_DEPTH, nestsDeeperThan } from '../../../src/jsonrpc/depth.ts';
import { parseJson } from '../../../src/jsonrpc/envelope.ts';

const arrays = (n: number) => '['.repeat(n) + ']'.repeat(n);

describe('nesting depth', () => {
  it('counts objects and arrays, at the limit and one past it', () => {
    expect(nestsDeeperThan(arrays(10), 10)).toBe(false);
    expect(nestsDeeperThan(arrays(11), 10)).toBe(true);
    expect(nestsDeeperThan('{"a":[{"b":[1]}]}', 4)).toBe(false);
    expect(nestsDeeperThan('{"a":[{"b":[1]}]}', 3)).toBe(true);
  });

  it('many shallow openers (more than the limit in all) are not depth', () => {
    const wide = JSON.stringify(Array.from({ length: 300 }, () => ({ a: [1] })));
    expect(nestsDeeperThan(wide, 3)).toBe(false);
    expect(nestsDeeperThan(wide, 2)).toBe(true);
    expect(nestsDeeperThan('{"text":"' + 'x'.repeat(5_000) + '"}', 1)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ s: '[[[[[[[[[[{{{{{{{{{"\\"[[[[' });
    expect(nestsDeeperThan(text, 1)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify({ s: 'ends with a backslash \\' , t: [[1]] }), 2)).toBe(true);
  });

  it('parseJson refuses past MAX_JSON_DEPTH and reads up to it', () => {
    expect(() => parseJson(arrays(MAX_JSON_DEPTH + 1))).toThrow(JsonTooDeepError);
    expect(parseJson(arrays(MAX_JSON_DEPTH))).toBeInstanceOf(Array);
    expect(() => parseJson(arrays(100_000))).toThrow(JsonTooDeepError);
  });

  it('leaves malformed text to JSON.parse', () => {
    expect(() => parseJson('{"unterminated": "' + '['.repeat(500))).toThrow(SyntaxError);
  });
});
