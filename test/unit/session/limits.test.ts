import { describe, expect, it } from 'vitest';
import { countChildren, expiry, pickVictim, type Limited, type SessionUsage } from '../../../src/session/limits.ts';

const policy = { idleTtlMs: 1_000, shortIdleTtlMs: 100, initDeadlineMs: 50 };

function session(over: Partial<Omit<Limited, 'usage'>> & { usage?: Partial<SessionUsage>; name?: string } = {}): Limited & { name: string } {
  return {
    name: over.name ?? 's',
    protocolVersion: 'protocolVersion' in over ? over.protocolVersion : '2025-11-25',
    ended: over.ended ?? false,
    busy: over.busy ?? false,
    lastActivity: over.lastActivity ?? 0,
    usage: { initializing: false, streamed: true, children: ['t'], ...over.usage },
  };
}

describe('expiry', () => {
  it('ends a session that never initialized after the deadline, busy or not (a WebSocket is always "busy")', () => {
    const idle = session({ protocolVersion: undefined, busy: true });
    expect(expiry(idle, 0, 49, policy)).toBeUndefined();
    expect(expiry(idle, 0, 50, policy)).toBe('not initialized within 0.1 s');
  });

  it('never ends one whose initialize is under way', () => {
    expect(expiry(session({ protocolVersion: undefined, usage: { initializing: true } }), 0, 10_000, policy)).toBeUndefined();
  });

  it('gives the short TTL to a client that never opened a stream, the long one otherwise, none while busy', () => {
    expect(expiry(session({ usage: { streamed: false } }), 0, 100, policy)).toBe('idle for 0.1 s');
    expect(expiry(session(), 0, 100, policy)).toBeUndefined();
    expect(expiry(session(), 0, 1_000, policy)).toBe('idle for 1 s');
    expect(expiry(session({ busy: true }), 0, 1_000_000, policy)).toBeUndefined();
  });
});

describe('pickVictim', () => {
  it('takes the oldest un-initialized session first, then the least recently used idle one', () => {
    const a = session({ name: 'a', lastActivity: 5 });
    const b = session({ name: 'b', lastActivity: 3 });
    const pending = session({ name: 'pending', protocolVersion: undefined, busy: true, usage: { children: [] } });
    expect(pickVictim([a, b, pending], 'session')?.name).toBe('pending');
    expect(pickVictim([a, b], 'session')?.name).toBe('b');
    expect(pickVictim([a, b], 'uninitialized')).toBeUndefined();
  });

  it('never takes a busy, ended or initializing session; for children only one that owns some', () => {
    const busy = session({ name: 'busy', busy: true });
    const ended = session({ name: 'ended', ended: true });
    const starting = session({ name: 'starting', protocolVersion: undefined, usage: { initializing: true } });
    expect(pickVictim([busy, ended, starting], 'session')).toBeUndefined();
    const childless = session({ name: 'childless', protocolVersion: undefined, usage: { children: [] } });
    const owner = session({ name: 'owner', lastActivity: 9 });
    expect(pickVictim([childless, owner], 'children')?.name).toBe('owner');
    expect(countChildren([owner, ended, childless])).toBe(1);
  });
});
