import { describe, expect, it } from 'vitest';
import { createSseParser, type SseEvent } from '../../../src/transport/sse-parser.ts';

function collect(maxEventBytes = 1024) {
  const events: SseEvent[] = [];
  const overflows: Array<{ head: string; bytes: number }> = [];
  const parser = createSseParser({
    maxEventBytes,
    onevent: (event) => events.push(event),
    onoverflow: (head, bytes) => overflows.push({ head, bytes }),
  });
  return { parser, events, overflows };
}

describe('SSE parser', () => {
  it('reads events with data, event type and id; comments and unknown fields are ignored', () => {
    const { parser, events } = collect();
    parser.push(': keep-alive\nid: 1\nevent: endpoint\ndata: /messages?sessionId=a\nfoo: bar\n\ndata: {"a":1}\n\n');
    expect(events).toEqual([
      { event: 'endpoint', data: '/messages?sessionId=a', id: '1' },
      { event: 'message', data: '{"a":1}', id: '1' },
    ]);
    expect(parser.lastEventId).toBe('1');
  });

  it('joins data lines with LF and removes one leading space only', () => {
    const { parser, events } = collect();
    parser.push('data:  two spaces\ndata:none\ndata\n\n');
    expect(events[0]?.data).toBe(' two spaces\nnone\n');
  });

  it('accepts CRLF, LF and CR line ends, also split across chunks', () => {
    const { parser, events } = collect();
    parser.push('data: a\r');
    parser.push('\n\r');
    parser.push('\ndata: b\r\rdata: c\n\n');
    expect(events.map((e) => e.data)).toEqual(['a', 'b', 'c']);
  });

  it('handles an event split anywhere, including inside a UTF-8 character', () => {
    const { parser, events } = collect();
    const bytes = Buffer.from('data: {"t":"ünï"}\n\n', 'utf8');
    for (let i = 0; i < bytes.length; i++) parser.push(bytes.subarray(i, i + 1));
    expect(events).toEqual([{ event: 'message', data: '{"t":"ünï"}', id: undefined }]);
  });

  it('drops a leading BOM', () => {
    const { parser, events } = collect();
    parser.push('\uFEFFdata: x\n\n');
    expect(events[0]?.data).toBe('x');
  });

  it('does not dispatch an event without data, but keeps its id and retry (a priming event)', () => {
    const { parser, events } = collect();
    parser.push('id: prime-1\nretry: 250\ndata: \n\n');
    parser.push('id: 2\n\n');
    expect(events).toEqual([{ event: 'message', data: '', id: 'prime-1' }]);
    expect(parser.lastEventId).toBe('2');
    expect(parser.retryMs).toBe(250);
  });

  it('ignores a retry that is not all digits and an id with NUL', () => {
    const { parser } = collect();
    parser.push('retry: 10\nretry: 5s\nid: ok\nid: bad\0id\n\n');
    expect(parser.retryMs).toBe(10);
    expect(parser.lastEventId).toBe('ok');
  });

  it('discards an event over the limit, reports its head, and goes on with the next', () => {
    const { parser, events, overflows } = collect(32);
    parser.push(`data: {"jsonrpc":"2.0","id":7,"result":{"x":"${'y'.repeat(100)}"}}\n`);
    parser.push('data: more of the same\n\ndata: small\n\n');
    expect(events.map((e) => e.data)).toEqual(['small']);
    expect(overflows).toHaveLength(1);
    expect(overflows[0]?.head.startsWith('{"jsonrpc":"2.0","id":7')).toBe(true);
    expect(overflows[0]?.bytes).toBeGreaterThan(32);
  });

  it('discards a line that grows past the limit without ever ending it in one chunk', () => {
    const { parser, events, overflows } = collect(64);
    parser.push('data: {"id":3,');
    for (let i = 0; i < 20; i++) parser.push('"pad":"' + 'z'.repeat(50) + '",');
    parser.push('"end":1}\n\ndata: next\n\n');
    expect(overflows).toHaveLength(1);
    expect(overflows[0]?.head.startsWith('{"id":3,')).toBe(true);
    expect(events.map((e) => e.data)).toEqual(['next']);
  });

  it('reset() drops a half-received event but keeps the last id', () => {
    const { parser, events } = collect();
    parser.push('id: 5\ndata: complete\n\ndata: half');
    parser.reset();
    parser.push('data: fresh\n\n');
    expect(events.map((e) => e.data)).toEqual(['complete', 'fresh']);
    expect(parser.lastEventId).toBe('5');
  });
});
