import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createStdinQueue } from '../../../src/transport/stdin-queue.ts';

/** A pipe that takes `room` characters, then needs draining until `drain()` is called. */
function pipe(highWaterMark: number) {
  const written: string[] = [];
  let pendingCallback: (() => void) | undefined;
  const stream = new Writable({
    highWaterMark,
    decodeStrings: false,
    write(chunk: string, _enc, callback) {
      written.push(chunk);
      pendingCallback = callback; // the reader is stalled until drain()
    },
  });
  return { stream, written, drain: () => pendingCallback?.() };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('stdin queue', () => {
  it('coalesces the lines of one turn into one write', async () => {
    const p = pipe(1 << 20);
    const q = createStdinQueue(p.stream, 1 << 20);
    q.push('a\n', 1);
    q.push('b\n', 2);
    await tick();
    expect(p.written).toEqual(['a\nb\n']);
    expect(q.queuedBytes).toBe(0);
  });

  it('holds lines while the pipe needs draining, refuses past the cap, and takes back a withdrawn one', async () => {
    const p = pipe(4);
    const q = createStdinQueue(p.stream, 10);
    expect(q.push('first-line\n', 1)).toBe(true); // a lone line is always taken
    await tick();
    expect(p.written).toEqual(['first-line\n']); // now the pipe needs draining
    expect(q.push('aaaa\n', 2)).toBe(true);
    expect(q.push('bbbb\n', 3)).toBe(true);
    expect(q.push('c\n', 4)).toBe(false); // 10 queued, cap 10
    expect(q.withdraw(2)).toBe(true);
    expect(q.withdraw(2)).toBe(false);
    expect(q.queuedBytes).toBe(5);
    const room = q.waitForRoom();
    expect(room).toBeInstanceOf(Promise);
    p.drain();
    await room;
    expect(p.written).toEqual(['first-line\n', 'bbbb\n']);
    expect(q.queuedBytes).toBe(0);
  });

  it('end() hands over what waits and ends the pipe; clear() drops it', async () => {
    const p = pipe(1);
    const q = createStdinQueue(p.stream, 100);
    q.push('x\n', 1);
    await tick();
    q.push('last\n', undefined);
    q.end();
    p.drain();
    await tick();
    expect(p.written.join('')).toBe('x\nlast\n');
    const other = createStdinQueue(pipe(1).stream, 100);
    other.push('gone\n', 1);
    other.clear();
    expect(other.queuedBytes).toBe(0);
    expect(other.waitForRoom()).toBeUndefined();
  });

  it('reuses its slots once emptied: later lines, withdrawals and end() see only what waits now', async () => {
    const p = pipe(4);
    const q = createStdinQueue(p.stream, 100);
    for (const [line, id] of [['a\n', 1], ['b\n', 2], ['c\n', 3]] as const) q.push(line, id);
    await tick();
    expect(p.written).toEqual(['a\nb\nc\n']); // emptied; the pipe now needs draining
    q.push('dd\n', 4);
    q.push('ee\n', 5);
    expect(q.withdraw(1)).toBe(false); // an id of a line that already left is not found again
    expect(q.withdraw(4)).toBe(true);
    q.push('ff\n', 6);
    expect(q.queuedBytes).toBe(6);
    const room = q.waitForRoom();
    p.drain();
    await room;
    expect(p.written).toEqual(['a\nb\nc\n', 'ee\nff\n']);
    q.push('gg\n', 7);
    q.end();
    p.drain();
    await tick();
    expect(p.written.join('')).toBe('a\nb\nc\nee\nff\ngg\n');
  });
});
