/**
 * Attacks on the one timer over a correlator's deadlines (src/upstream/deadlines.ts) that the
 * behaviour tests beside it do not make: memory held while the table never empties (a long call
 * reporting progress, a shared child that always has something in flight), and timers near the
 * largest timeout the config accepts. Through the gateway: test/integration/deadline-attacks.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { MAX_DURATION_MS } from '../../../src/config/schema-kit.ts';
import { createDeadlines, type Deadlines, type Timed } from '../../../src/upstream/deadlines.ts';

/** The backing arrays' length: what the table holds in memory, settled slots below `head` included. */
function backing(deadlines: Deadlines<Timed>): number {
  return (deadlines as unknown as { stamps: number[] }).stamps.length;
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('deadlines: memory while something is always pending', () => {
  it('a request re-armed by progress for ever keeps the table within a bound, not one slot per progress', async () => {
    const live = new Set<Timed>();
    const fired: Timed[] = [];
    const deadlines = createDeadlines<Timed>((e) => (live.delete(e), fired.push(e)), () => live.size);
    const long: Timed = { deadline: NaN };
    live.add(long);
    deadlines.add(long, 4);
    // Each progress moves the deadline on; the old slot goes stale and the timer reaches it, so
    // `slots` stays small, but the table never empties (the call is still pending).
    // Under load a tick can outlast the deadline: then the call is made pending again, as a
    // new request would be; the bound must hold either way.
    let rearms = 0;
    while (rearms < 800) {
      live.add(long);
      deadlines.add(long, 4);
      rearms++;
      await tick(1);
    }
    expect(fired.length).toBeLessThan(rearms);
    expect(deadlines.slots).toBeLessThan(40);
    expect(backing(deadlines)).toBeLessThan(200);
    deadlines.clear();
  });

  it('calls settling beside one stuck call, slower than compaction notices, leave a bounded table', async () => {
    const live = new Set<Timed>();
    const deadlines = createDeadlines<Timed>((e) => live.delete(e), () => live.size);
    const stuck: Timed = { deadline: NaN };
    live.add(stuck);
    deadlines.add(stuck, 60_000);
    // A few calls at a time, each settled quickly, with short deadlines: stale slots reached by
    // the timer before they ever outnumber the live ones.
    for (let round = 0; round < 300; round++) {
      const call: Timed = { deadline: NaN };
      live.add(call);
      deadlines.add(call, 2);
      live.delete(call);
      deadlines.settled(call);
      await tick(3);
    }
    expect(live.has(stuck)).toBe(true);
    expect(backing(deadlines)).toBeLessThan(200);
    deadlines.clear();
  });
});

describe('deadlines: the largest timeout the config accepts', () => {
  it('arms no overflowing timer (Node would turn it into 1 ms and spin) and still fires an earlier one', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const live = new Set<Timed>();
      const fired: Timed[] = [];
      const deadlines = createDeadlines<Timed>((e) => (live.delete(e), fired.push(e)), () => live.size);
      const far: Timed = { deadline: NaN };
      const near: Timed = { deadline: NaN };
      live.add(far);
      deadlines.add(far, MAX_DURATION_MS);
      live.add(near);
      deadlines.add(near, 20);
      while (fired.length === 0) await tick(5);
      await tick(50);
      expect(fired).toEqual([near]);
      expect(warnings).not.toContain('TimeoutOverflowWarning');
      deadlines.clear();
    } finally {
      process.off('warning', onWarning);
    }
  });
});
