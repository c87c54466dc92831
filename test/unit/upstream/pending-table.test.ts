/**
 * The correlator's slot table of pending requests (src/upstream/pending-table.ts): what a Map
 * did (get, take, size, ids oldest first), including when an old request still holds the slot a
 * new id maps to, and when more are pending than the table has slots.
 */
import { describe, expect, it } from 'vitest';
import { createPendingTable } from '../../../src/upstream/pending-table.ts';

const item = (id: number) => ({ id });

describe('pending table', () => {
  it('one slow request among thousands of fast ones: every id found, taken once, the slow one last', () => {
    const table = createPendingTable<{ id: number }>();
    const slow = item(1);
    table.add(slow);
    for (let id = 2; id < 5_000; id++) {
      table.add(item(id));
      expect(table.get(id)?.id).toBe(id);
      expect(table.take(id)?.id).toBe(id);
      expect(table.take(id)).toBeUndefined();
    }
    expect(table.size).toBe(1);
    expect(table.get(1)).toBe(slow);
    expect(table.ids()).toEqual([1]);
    expect(table.take(1)).toBe(slow);
    expect(table.size).toBe(0);
  });

  it('thousands pending at once, taken out of order; ids oldest first; foreign keys find nothing', () => {
    const table = createPendingTable<{ id: number }>();
    // Starts where the low bits collide with a stuck early id.
    table.add(item(7));
    for (let id = 100; id < 10_100; id++) table.add(item(id));
    expect(table.size).toBe(10_001);
    expect(table.ids().slice(0, 3)).toEqual([7, 100, 101]);
    expect(table.ids()).toHaveLength(10_001);
    for (let id = 10_099; id >= 100; id -= 2) expect(table.take(id)?.id).toBe(id);
    expect(table.size).toBe(5_001);
    for (const foreign of [NaN, 0, -1, 1.5, 2 ** 40 + 7, 10_099]) expect(table.get(foreign)).toBeUndefined();
    for (let id = 100; id < 10_100; id += 2) expect(table.take(id)?.id).toBe(id);
    expect(table.ids()).toEqual([7]);
  });
});
