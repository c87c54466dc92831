/**
 * The pure parts of observe/: label caps, histograms, the traffic window, and the metrics
 * collector's bookkeeping (real Observer calls, no gateway).
 */
import { describe, expect, it } from 'vitest';
import { createHistogram, observe } from '../../../src/observe/histogram.ts';
import { createLabelCap, OTHER } from '../../../src/observe/label-cap.ts';
import { createMetricsCollector, eraOf } from '../../../src/observe/metrics.ts';
import { createMetricsRegistry } from '../../../src/observe/metrics-export.ts';
import { createStatusBoard } from '../../../src/observe/status.ts';
import { createWindow, record, summarize } from '../../../src/observe/window.ts';
import type { ObservedRequest, ObservedSession } from '../../../src/log/observer.ts';
import { combineObservers, NOOP_OBSERVER } from '../../../src/log/observer.ts';
import { parseMetrics, valueOf } from '../../support/metrics.ts';

describe('label caps', () => {
  it('keeps the first max values and folds the rest into "other", counting them', () => {
    const cap = createLabelCap(2);
    expect(['a', 'b', 'c', 'a', 'd', 'b'].map(cap.fold)).toEqual(['a', 'b', OTHER, 'a', OTHER, 'b']);
    expect(cap.folded).toBe(2);
  });

  it('never lets a real value named "other" take a slot', () => {
    const cap = createLabelCap(1);
    expect(cap.fold('other')).toBe(OTHER);
    expect(cap.fold('x')).toBe('x');
  });
});

describe('histograms', () => {
  it('counts each observation in its first bucket, and past the last one only in count and sum', () => {
    const h = createHistogram([0.1, 1]);
    for (const v of [0.05, 0.1, 0.5, 3]) observe(h, v);
    expect([...h.counts]).toEqual([2, 1]);
    expect(h.count).toBe(4);
    expect(h.sum).toBeCloseTo(3.65);
  });
});

describe('traffic window', () => {
  it('gives calls per second, error rate and percentiles over the last minute only', () => {
    const w = createWindow(100);
    const t0 = 1_000_000_000;
    for (let i = 0; i < 10; i++) record(w, t0 + i * 1000, i % 5 === 0, i + 1);
    const now = summarize(w, t0 + 9_000);
    expect(now.callsPerSec).toBe(1);
    expect(now.errorRate).toBe(0.2);
    expect(now.p50).toBe(6);
    expect(now.p99).toBe(10);
    // A minute and more later, the calls have left the window (the latency samples stay).
    expect(summarize(w, t0 + 75_000).callsPerSec).toBe(0);
  });
});

const session: ObservedSession = { id: 's1', endpoint: 'target:a', transport: 'websocket', principal: undefined, protocolVersion: '2025-06-18', openedAt: 0, lastActivity: 0 };
const request = (method: string, subject: string | undefined, target: string | undefined, upstreamMs: number): ObservedRequest => ({
  session,
  protocolVersion: session.protocolVersion,
  clientId: 1,
  method,
  subject,
  member: target === undefined ? undefined : { name: target },
  startedAt: 1_000,
  sentAt: upstreamMs > 0 ? 1_001 : 0,
  upstreamMs,
  endedAt: 1_005,
});

describe('metrics collector', () => {
  it('turns observer events into labelled series', async () => {
    const { observer, tallies } = createMetricsCollector(10);
    const { render } = createMetricsRegistry(tallies, { children: () => [['a', 2]] });
    observer.sessionOpened(session);
    observer.requestEnded(request('tools/call', 'echo', 'a', 3), 'ok', undefined, undefined);
    observer.requestEnded(request('tools/call', 'echo', 'a', 0), 'error', 'GW_UPSTREAM_TIMEOUT', undefined);
    observer.requestEnded(request('tools/call', 'secret-tool', undefined, 0), 'denied', undefined, undefined);
    observer.sessionClosed(session, 'reaped');
    observer.upstream('a', 'start-failed');
    observer.refused('auth', 'GW_UNAUTHORIZED');
    observer.bytes(10, 20);
    const m = parseMetrics(await render());
    const labels = { endpoint: 'target:a', era: '2025', transport: 'websocket', method: 'tools/call' };
    expect(valueOf(m, 'switchboard_requests_total', { ...labels, outcome: 'ok' })).toBe(1);
    expect(valueOf(m, 'switchboard_requests_total', { ...labels, outcome: 'denied' })).toBe(1);
    expect(valueOf(m, 'switchboard_tool_calls_total', { target: 'none', tool: 'secret-tool', outcome: 'denied' })).toBe(1);
    expect(valueOf(m, 'switchboard_request_errors_total', { code: 'GW_UPSTREAM_TIMEOUT', target: 'a' })).toBe(1);
    expect(valueOf(m, 'switchboard_upstream_duration_seconds_count', { target: 'a' })).toBe(1);
    expect(valueOf(m, 'switchboard_upstream_duration_seconds_bucket', { target: 'a', le: '0.005' })).toBe(1);
    expect(valueOf(m, 'switchboard_gateway_duration_seconds_count', { transport: 'websocket' })).toBe(3);
    expect(valueOf(m, 'switchboard_sessions_open', { endpoint: 'target:a', transport: 'websocket' })).toBe(0);
    expect(valueOf(m, 'switchboard_sessions_closed_total', { endpoint: 'target:a', transport: 'websocket', cause: 'reaped' })).toBe(1);
    expect(valueOf(m, 'switchboard_upstream_events_total', { target: 'a', event: 'start-failed' })).toBe(1);
    expect(valueOf(m, 'switchboard_auth_failures_total', { code: 'GW_UNAUTHORIZED' })).toBe(1);
    expect(valueOf(m, 'switchboard_children_live', { target: 'a' })).toBe(2);
    expect(valueOf(m, 'switchboard_downstream_bytes_total', { direction: 'out' })).toBe(20);
  });

  it('names the era of a revision', () => {
    expect([eraOf(undefined), eraOf('2024-11-05'), eraOf('2025-11-25'), eraOf('2026-07-28')]).toEqual(['2025', '2025', '2025', '2026']);
  });
});

describe('combineObservers', () => {
  it('is the no-op for none, the observer itself for one, and tells each of several', () => {
    expect(combineObservers([])).toBe(NOOP_OBSERVER);
    const a = createMetricsCollector(4);
    expect(combineObservers([a.observer, NOOP_OBSERVER])).toBe(a.observer);
    const b = createMetricsCollector(4);
    combineObservers([a.observer, b.observer]).bytes(1, 2);
    expect([...a.tallies.bytes, ...b.tallies.bytes]).toEqual([1, 2, 1, 2]);
  });
});

describe('status board', () => {
  const board = () => createStatusBoard({ targets: () => [{ name: 'a', type: 'stdio' }], children: () => [['a', 1]] }, 3);

  it('keeps only the last recentErrors errors, newest first, without their messages', () => {
    const b = board();
    for (let i = 0; i < 5; i++) b.observer.requestEnded({ ...request('tools/call', 'x', 'a', 1), clientId: i }, 'error', 'GW_UPSTREAM_TIMEOUT', undefined);
    const { errors } = b.snapshot();
    expect(errors.map((e) => e.requestId)).toEqual(['4', '3', '2']);
    expect(errors[0]).toMatchObject({ target: 'a', method: 'tools/call', code: 'GW_UPSTREAM_TIMEOUT', session: 's1' });
  });

  it('keeps state for configured targets only, and clips long tool descriptions at a word', () => {
    const b = board();
    b.observer.upstream('elsewhere', 'start');
    b.observer.listed('a', 'tools/list', { tools: [{ name: 'long', description: 'word '.repeat(100) }, { nameless: true }] }, true);
    const snap = b.snapshot();
    expect(snap.targets.map((t) => t.name)).toEqual(['a']);
    expect(snap.targets[0]).toMatchObject({ health: 'up', children: 1 });
    expect(snap.tools.a).toHaveLength(1);
    expect(snap.tools.a?.[0]?.description.length).toBeLessThanOrEqual(241);
    expect(snap.tools.a?.[0]?.description.endsWith('word…')).toBe(true);
  });
});
