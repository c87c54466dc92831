import { describe, expect, it } from 'vitest';
import { createEventLog, parseEventId } from '../../../src/session/event-log.ts';

describe('event log', () => {
  it('gives each stream its own later events', () => {
    const log = createEventLog(100, 1 << 20);
    const a1 = log.append(1, 'a1');
    log.append(2, 'b1');
    log.append(1, 'a2');
    const cursor = parseEventId(a1)!;
    expect(log.after(1, cursor.seq).map((e) => e.data)).toEqual(['a2']);
    expect(log.after(2, 0).map((e) => e.data)).toEqual(['b1']);
  });

  it('is bounded by count and by bytes, oldest first', () => {
    const byCount = createEventLog(3, 1 << 20);
    for (let i = 0; i < 10; i++) byCount.append(0, `e${i}`);
    expect(byCount.size).toBe(3);
    expect(byCount.after(0, 0).map((e) => e.data)).toEqual(['e7', 'e8', 'e9']);
    const byBytes = createEventLog(1000, 10);
    for (let i = 0; i < 10; i++) byBytes.append(0, 'xxxx');
    expect(byBytes.after(0, 0).length).toBe(2);
  });

  it('parses only ids it wrote', () => {
    expect(parseEventId('3-17')).toEqual({ stream: 3, seq: 17 });
    for (const bad of ['', 'x', '-1', '1-', 'a-b', '1-2-3']) expect(parseEventId(bad)).toBeUndefined();
  });
});
