/** The console's recent calls (observe/recent-calls.ts): bounded, newest first, filtered, audited methods only. */
import { describe, expect, it } from 'vitest';
import type { ObservedRequest } from '../../../src/log/observer.ts';
import { createRecentCalls } from '../../../src/observe/recent-calls.ts';

const request = (i: number, method = 'tools/call', principal = 'key:a', server = 's'): ObservedRequest => ({
  session: { id: `sess-${i}`, endpoint: `target:${server}`, transport: 'streamable-http', principal, protocolVersion: '2025-06-18', openedAt: 0, lastActivity: 0 },
  protocolVersion: '2025-06-18',
  clientId: i,
  method,
  subject: `tool-${i % 3}`,
  member: { name: server },
  startedAt: 1,
  sentAt: 2,
  upstreamMs: 1,
  endedAt: 3,
});

describe('recent calls', () => {
  it('keeps the last `max`, newest first, and only calls, prompts and reads', () => {
    const calls = createRecentCalls(5);
    for (let i = 0; i < 12; i++) calls.observer.requestEnded(request(i), i % 2 === 0 ? 'ok' : 'error', i % 2 === 0 ? undefined : 'GW_X', undefined);
    calls.observer.requestEnded(request(99, 'tools/list'), 'ok', undefined, undefined);
    const all = calls.query({});
    expect(all.map((r) => r.name)).toEqual(['tool-2', 'tool-1', 'tool-0', 'tool-2', 'tool-1']);
    expect(all).toHaveLength(5);
  });

  it('filters by principal, server, tool and outcome, and honours the limit', () => {
    const calls = createRecentCalls(50);
    for (let i = 0; i < 30; i++) calls.observer.requestEnded(request(i, 'tools/call', i < 10 ? 'key:a' : 'key:b', i < 20 ? 's' : 't'), i % 3 === 0 ? 'denied' : 'ok', undefined, undefined);
    expect(calls.query({ principal: 'key:a' })).toHaveLength(10);
    expect(calls.query({ server: 't' })).toHaveLength(10);
    expect(calls.query({ tool: 'tool-0', outcome: 'denied' })).toHaveLength(10);
    expect(calls.query({ principal: 'key:b', limit: 3 })).toHaveLength(3);
  });
});
