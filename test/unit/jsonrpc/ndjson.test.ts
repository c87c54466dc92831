import { describe, expect, it } from 'vitest';
import { createLineSplitter, serializeMessage, sniffLineHead } from '../../../src/jsonrpc/ndjson.ts';

function collect(maxLineBytes = 1024, headBytes?: number) {
  const lines: string[] = [];
  const overflows: { head: string; totalBytes: number }[] = [];
  const splitter = createLineSplitter({
    maxLineBytes,
    onLine: (line) => lines.push(line),
    onOverflow: (head, totalBytes) => overflows.push({ head, totalBytes }),
    ...(headBytes === undefined ? {} : { headBytes }),
  });
  return { splitter, lines, overflows };
}

describe('createLineSplitter', () => {
  it('joins a line split across chunks and splits several lines in one chunk', () => {
    const { splitter, lines } = collect();
    splitter.push(Buffer.from('{"a":'));
    splitter.push(Buffer.from('1}\n{"b":2}\n{"c"'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    splitter.push(Buffer.from(':3}\n'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('delivers many lines from one chunk in order', () => {
    const { splitter, lines } = collect();
    const input = Array.from({ length: 1000 }, (_, i) => `{"n":${i}}`);
    splitter.push(Buffer.from(input.join('\n') + '\n'));
    expect(lines).toEqual(input);
  });

  it('decodes a multi-byte character cut between chunks', () => {
    const { splitter, lines } = collect();
    const bytes = Buffer.from('{"t":"h€llo 😀"}\n', 'utf8');
    const euro = bytes.indexOf(0xe2); // first byte of the 3-byte '€'
    const emoji = bytes.indexOf(0xf0); // first byte of the 4-byte emoji
    splitter.push(bytes.subarray(0, euro + 1));
    splitter.push(bytes.subarray(euro + 1, emoji + 2));
    splitter.push(bytes.subarray(emoji + 2));
    expect(lines).toEqual(['{"t":"h€llo 😀"}']);
  });

  it('feeds byte by byte without losing or corrupting anything', () => {
    const { splitter, lines } = collect();
    const text = '{"x":"ünïcødé"}\r\n{"y":2}\n';
    for (const byte of Buffer.from(text)) splitter.push(Buffer.from([byte]));
    expect(lines).toEqual(['{"x":"ünïcødé"}', '{"y":2}']);
  });

  it('strips a CR before LF, also when the CR ends a chunk', () => {
    const { splitter, lines } = collect();
    splitter.push(Buffer.from('{"a":1}\r\n{"b":2}\r'));
    splitter.push(Buffer.from('\n'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('skips empty and whitespace-only lines', () => {
    const { splitter, lines } = collect();
    splitter.push(Buffer.from('\n\n  \n\t\r\n{"a":1}\n\r\n'));
    expect(lines).toEqual(['{"a":1}']);
  });

  it('delivers a last line without newline at end()', () => {
    const { splitter, lines } = collect();
    splitter.push(Buffer.from('{"a":1}\n{"b":'));
    splitter.push(Buffer.from('2}'));
    expect(lines).toEqual(['{"a":1}']);
    splitter.end();
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('accepts a line of exactly the limit and reports one byte more as overflow', () => {
    const { splitter, lines, overflows } = collect(10);
    splitter.push(Buffer.from('0123456789\n01234567890\n'));
    expect(lines).toEqual(['0123456789']);
    expect(overflows).toEqual([{ head: '01234567890', totalBytes: 11 }]);
  });

  it('keeps only the head of an over-long line, discards the rest, and resumes at the next line', () => {
    const { splitter, lines, overflows } = collect(64, 16);
    splitter.push(Buffer.from('{"a":1}\n{"jsonrpc":"2.0","id":42,'));
    for (let i = 0; i < 100; i++) splitter.push(Buffer.from('x'.repeat(1000)));
    splitter.push(Buffer.from('}\n{"b":2}\n'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    expect(overflows).toHaveLength(1);
    expect(overflows[0]?.head).toBe('{"jsonrpc":"2.0"');
    expect(overflows[0]?.totalBytes).toBe('{"jsonrpc":"2.0","id":42,'.length + 100_000 + 1);
  });

  it('builds the head from the kept chunks and the chunk that crossed the limit', () => {
    const { splitter, overflows } = collect(64);
    splitter.push(Buffer.from('a'.repeat(40)));
    splitter.push(Buffer.from('b'.repeat(40)));
    splitter.push(Buffer.from('c'.repeat(1000) + '\n'));
    // Nothing after the crossing chunk is looked at, not even to fill the head.
    expect(overflows).toEqual([{ head: 'a'.repeat(40) + 'b'.repeat(40), totalBytes: 1080 }]);
  });

  it('reports an over-long line that arrives in one chunk, and one cut by end()', () => {
    const { splitter, overflows, lines } = collect(8);
    splitter.push(Buffer.from('{"id":7,"result":{}}\n{"id":8,"more'));
    splitter.end();
    expect(lines).toEqual([]);
    expect(overflows.map((o) => o.head)).toEqual(['{"id":7,"result":{}}', '{"id":8,"more']);
  });
});

describe('sniffLineHead', () => {
  it('reads a top-level integer id of a response', () => {
    expect(sniffLineHead('{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"xxx')).toEqual({
      id: 42,
      hasMethod: false,
    });
    expect(sniffLineHead('{ "id" : 7 , "jsonrpc": "2.0", "error": {')).toEqual({ id: 7, hasMethod: false });
  });

  it('ignores an id nested in params or result', () => {
    const head = '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":{"id":3,"blob":"xx';
    expect(sniffLineHead(head)).toEqual({ id: undefined, hasMethod: true });
    expect(sniffLineHead('{"jsonrpc":"2.0","result":{"id":9,"x":"yy').id).toBeUndefined();
  });

  it('is not fooled by keys inside strings', () => {
    expect(sniffLineHead('{"jsonrpc":"2.0","result":{"text":"\\"id\\":5, \\"method\\":1","x').id).toBeUndefined();
    expect(sniffLineHead('{"note":"{\\"id\\": 5}","id":6,"result":{').id).toBe(6);
  });

  it('refuses an id the head cuts short, and string ids', () => {
    expect(sniffLineHead('{"jsonrpc":"2.0","id":12').id).toBeUndefined();
    expect(sniffLineHead('{"jsonrpc":"2.0","id":"12","result":{').id).toBeUndefined();
  });

  it('flags requests and notifications by a top-level method', () => {
    expect(sniffLineHead('{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{')).toEqual({
      id: 5,
      hasMethod: true,
    });
  });
});

describe('serializeMessage', () => {
  it('writes one line per message, with newlines in strings escaped', () => {
    const line = serializeMessage({ jsonrpc: '2.0', id: 1, method: 'x', params: { text: 'a\nb\r\nc' } });
    expect(line.endsWith('\n')).toBe(true);
    expect(line.indexOf('\n')).toBe(line.length - 1);
    expect(JSON.parse(line)).toEqual({ jsonrpc: '2.0', id: 1, method: 'x', params: { text: 'a\nb\r\nc' } });
  });
});
