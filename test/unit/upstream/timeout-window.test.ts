/**
 * The timeout window: a count within a sliding window, and how many distinct callers it needs;
 * its memory stays bounded however many callers time out.
 */
import { describe, expect, it } from 'vitest';
import { createTimeoutWindow } from '../../../src/upstream/timeout-window.ts';

describe('timeout window', () => {
  it('is full at `count` timeouts within the window, then starts afresh', () => {
    const window = createTimeoutWindow(3, 1_000);
    expect(window.add('a', 0)).toBe(false);
    expect(window.add('a', 500)).toBe(false);
    // The first has left the window (exactly windowMs old).
    expect(window.add('a', 1_000)).toBe(false);
    expect(window.add('a', 1_100)).toBe(true);
    expect(window.add('a', 1_200)).toBe(false);
  });

  it('needs `callers` distinct callers within the window; a caller outside it does not count', () => {
    const window = createTimeoutWindow(3, 1_000, 2);
    for (let t = 0; t < 50; t++) expect(window.add('same', t * 10)).toBe(false);
    expect(window.add('other', 600)).toBe(true);
    expect(window.add('b', 2_000)).toBe(false);
    expect(window.add('c', 3_100)).toBe(false);
    // b timed out more than windowMs ago: c and d are the two callers.
    expect(window.add('c', 3_200)).toBe(false);
    expect(window.add('d', 3_300)).toBe(true);
  });

  it('0 is never full; clear forgets', () => {
    const off = createTimeoutWindow(0, 1_000, 1);
    for (let t = 0; t < 10; t++) expect(off.add('a', t)).toBe(false);
    const window = createTimeoutWindow(2, 1_000, 2);
    window.add('a', 0);
    window.clear();
    expect(window.add('b', 1)).toBe(false);
    expect(window.add('a', 2)).toBe(true);
  });
});
