import { describe, expect, it } from 'vitest';
import { countChildren, expiry, pickVictim, retryAfterSec, type Limited, type SessionUsage } from '../../../src/session/limits.ts';

const policy = { idleTtlMs: 1_000, shortIdleTtlMs: 100, initDeadlineMs: 50, evictIdleMs: 60_000 };
/** Room is needed at t = 100 s; a session is a candidate once idle for 60 s (last activity <= 40 s). */
const at = { now: 100_000, evictIdleMs: 60_000 };

function session(over: Partial<Omit<Limited, 'usage'>> & { usage?: Partial<SessionUsage>; name?: string } = {}): Limited & { name: string } {
  return {
    name: over.name ?? 's',
    protocolVersion: 'protocolVersion' in over ? over.protocolVersion : '2025-11-25',
    ended: over.ended ?? false,
    busy: over.busy ?? false,
    lastActivity: over.lastActivity ?? 0,
    usage: { initializing: false, streamed: true, listening: true, children: ['t'], ...over.usage },
  };
}

describe('expiry', () => {
  it('ends a session that never initialized after the deadline, busy or not', () => {
    const idle = session({ protocolVersion: undefined, busy: true });
    expect(expiry(idle, 0, 49, policy)).toBeUndefined();
    expect(expiry(idle, 0, 50, policy)).toBe('not initialized within 0.1 s');
  });

  it('never ends one whose initialize is under way', () => {
    expect(expiry(session({ protocolVersion: undefined, usage: { initializing: true } }), 0, 10_000, policy)).toBeUndefined();
  });

  it('gives the long TTL only while a standalone stream is open, the short one otherwise, none while at work', () => {
    expect(expiry(session({ usage: { streamed: false, listening: false } }), 0, 100, policy)).toBe('idle for 0.1 s');
    expect(expiry(session(), 0, 100, policy)).toBeUndefined();
    expect(expiry(session(), 0, 1_000, policy)).toBe('idle for 1 s');
    // Its client opened a stream once and lost it: nobody reconnected, it may be gone.
    expect(expiry(session({ usage: { listening: false } }), 0, 100, policy)).toBe('idle for 0.1 s');
    expect(expiry(session({ busy: true }), 0, 1_000_000, policy)).toBeUndefined();
  });
});

describe('pickVictim', () => {
  it('takes the oldest un-initialized session first, then the least recently used one idle past the floor', () => {
    const a = session({ name: 'a', lastActivity: 5 });
    const b = session({ name: 'b', lastActivity: 3 });
    const pending = session({ name: 'pending', protocolVersion: undefined, busy: true, usage: { children: [] } });
    expect(pickVictim([a, b, pending], 'session', at)?.name).toBe('pending');
    expect(pickVictim([a, b], 'session', at)?.name).toBe('b');
    expect(pickVictim([a, b], 'uninitialized', at)).toBeUndefined();
  });

  it('never takes a session used within the floor, even with nothing in flight at this instant', () => {
    const recent = session({ name: 'recent', lastActivity: at.now - 1 });
    const almost = session({ name: 'almost', lastActivity: at.now - 59_999 });
    expect(pickVictim([recent, almost], 'session', at)).toBeUndefined();
    const past = session({ name: 'past', lastActivity: at.now - 60_000 });
    expect(pickVictim([recent, almost, past], 'children', at)?.name).toBe('past');
  });

  it('an open standalone stream does not make a session in use; work does', () => {
    const listening = session({ name: 'listening', usage: { listening: true } });
    expect(pickVictim([listening], 'session', at)?.name).toBe('listening');
    const working = session({ name: 'working', busy: true });
    expect(pickVictim([working], 'session', at)).toBeUndefined();
  });

  it('never takes a busy, ended or initializing session; for children only one that owns some', () => {
    const busy = session({ name: 'busy', busy: true });
    const ended = session({ name: 'ended', ended: true });
    const starting = session({ name: 'starting', protocolVersion: undefined, usage: { initializing: true } });
    expect(pickVictim([busy, ended, starting], 'session', at)).toBeUndefined();
    const childless = session({ name: 'childless', protocolVersion: undefined, usage: { children: [] } });
    const owner = session({ name: 'owner', lastActivity: 9 });
    expect(pickVictim([childless, owner], 'children', at)?.name).toBe('owner');
    expect(pickVictim([childless, owner], 'children', at, 'other')).toBeUndefined();
    expect(countChildren([owner, ended, childless])).toBe(1);
  });
});

describe('retryAfterSec', () => {
  it('is the time until the soonest idle session passes the floor, within 1-30 s', () => {
    expect(retryAfterSec([session({ lastActivity: at.now - 50_000 })], 'session', at)).toBe(10);
    expect(retryAfterSec([session({ lastActivity: at.now - 59_900 })], 'session', at)).toBe(1);
    // Every session at work: no candidate is in sight; say the most a client should wait.
    expect(retryAfterSec([session({ busy: true })], 'session', at)).toBe(30);
    // For a target's children only that target's sessions count.
    expect(retryAfterSec([session({ lastActivity: at.now - 50_000 })], 'children', at, 'other')).toBe(30);
  });
});
