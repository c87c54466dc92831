import { describe, expect, it } from 'vitest';
import { createLogThrottle } from '../../../src/transport/log-throttle.ts';

describe('createLogThrottle', () => {
  it('allows perSecond lines per window, counts the rest, and starts afresh next second', () => {
    let now = 10_000;
    const throttle = createLogThrottle(3, () => now);
    const taken = Array.from({ length: 5 }, () => throttle.take());
    expect(taken).toEqual([true, true, true, false, false]);
    now += 999;
    expect(throttle.take()).toBe(false);
    now += 1;
    expect(throttle.take()).toBe(true);
    expect(throttle.drainSuppressed()).toBe(3);
    expect(throttle.drainSuppressed()).toBe(0);
  });

  it('suppresses everything at 0 lines per second', () => {
    const throttle = createLogThrottle(0, () => 0);
    expect(throttle.take()).toBe(false);
    expect(throttle.drainSuppressed()).toBe(1);
  });
});
