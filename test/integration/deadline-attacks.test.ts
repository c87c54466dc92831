/**
 * Attacks on request deadlines through the gateway (the correlator's timeouts, whichever timers
 * keep them: written against a one-timer rewrite, since reverted, and kept for the next one):
 * deadlines that end in another order than the requests started, a late answer after a timeout
 * while the client reuses the id, client cancels and a session's end beside timeouts on a shared
 * child, a crash with many calls in flight and a restarted child's deadlines, and a timeout on
 * the aggregate /mcp and WebSocket. The child is test/fixtures/deadline-server.mjs. Bounds on
 * time are one-sided (a timeout never before its deadline); order and counts, never milliseconds.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestTarget } from '../support/gateway.ts';
import { fixture, rpc, textOf, type RawAnswer, type RawSession, type Recorded } from '../support/recorder.ts';
import { openWs, wsUrl } from '../support/ws-client.ts';
import { startAggregateGateway } from '../support/aggregate.ts';
import type { RunningGateway } from '../../src/main.ts';
import type { TimeoutPolicy } from '../../src/config/types.ts';
import { DEFAULT_BREAKER_POLICY } from '../../src/upstream/circuit-breaker.ts';

const NO_BREAKER = { ...DEFAULT_BREAKER_POLICY, timeouts: 0 };

function deadlineServer(requestMs: number, extra: Partial<TestTarget> = {}): TestTarget {
  const timeouts: TimeoutPolicy = { requestMs, resetOnProgress: true, maxTotalMs: 0 };
  return { command: process.execPath, args: [fixture('deadline-server.mjs')], timeouts, circuitBreaker: NO_BREAKER, ...extra };
}

const call = (id: string | number, name: string, args: Record<string, unknown> = {}, meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) },
});

const codeOf = (answer: RawAnswer) => (answer.json.error as { data?: { code?: string } } | undefined)?.data?.code;

/** The gateway's own elapsed time, from the timeout's message ("... within N ms"). */
function reportedMs(answer: RawAnswer): number {
  const match = /within (\d+) ms/.exec((answer.json.error as { message: string }).message);
  if (match === null) throw new Error(`no elapsed time in ${answer.text}`);
  return Number(match[1]);
}

async function historyOf(session: RawSession): Promise<Recorded[]> {
  const answer = await session.request(call(`history-${Math.random()}`, 'history'));
  return JSON.parse(textOf(answer.json.result)) as Recorded[];
}

const cancelled = (seen: Recorded[]) => seen.filter((m) => m.method === 'notifications/cancelled').map((m) => (m.params as { requestId: number }).requestId);
const callIds = (seen: Recorded[], tool: string) =>
  seen.filter((m) => m.method === 'tools/call' && (m.params as { name: string }).name === tool).map((m) => m.id as number);

let gateways: Array<TestGateway | RunningGateway> = [];
afterEach(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  gateways = [];
});
async function gateway(target: TestTarget): Promise<TestGateway> {
  const gw = await startTestGateway({ targets: { dl: target } });
  gateways.push(gw);
  return gw;
}

describe('deadlines through one correlator, attacked', () => {
  it('a call kept alive by progress times out after the calls started after it, each at its own deadline', async () => {
    const gw = await gateway(deadlineServer(500));
    const session = await rpc.initialize(gw.mcpUrl());
    const settled: string[] = [];
    const track = (name: string, p: Promise<RawAnswer>) => p.then((a) => (settled.push(name), a));
    // A: progress every 150 ms, six times (the last about 750 ms in), then silence: its deadline
    // moves past the others' and ends about 500 ms after its last progress.
    const a = track('a', session.request(call('a', 'progress-hang', { every: 150, count: 6 }, { progressToken: 'pa' })));
    const others = ['b', 'c', 'd'].map((id) => track(id, session.request(call(id, 'hang'))));
    const [ra, ...rest] = await Promise.all([a, ...others]);
    expect(settled.at(-1)).toBe('a');
    for (const [i, r] of rest.entries()) {
      expect(r.json).toMatchObject({ id: ['b', 'c', 'd'][i], error: { data: { code: 'GW_UPSTREAM_TIMEOUT', timeoutMs: 500 } } });
      expect(reportedMs(r)).toBeGreaterThanOrEqual(480);
    }
    expect(ra.json).toMatchObject({ id: 'a', error: { data: { code: 'GW_UPSTREAM_TIMEOUT', timeoutMs: 500 } } });
    expect(reportedMs(ra)).toBeGreaterThanOrEqual(750 + 480);
    expect(ra.events.filter((m) => m.method === 'notifications/progress')).toHaveLength(6);
    const seen = await historyOf(session);
    expect(cancelled(seen).sort()).toEqual([...callIds(seen, 'progress-hang'), ...callIds(seen, 'hang')].sort());
    await session.delete();
  });

  it('a late answer after a timeout is dropped, never delivered to the next request under the same client id', async () => {
    const gw = await gateway(deadlineServer(600));
    const session = await rpc.initialize(gw.mcpUrl());
    const first = await session.request(call('x', 'wait', { ms: 1_000, tag: 'late' }));
    expect(first.json).toMatchObject({ id: 'x', error: { data: { code: 'GW_UPSTREAM_TIMEOUT' } } });
    // The same client id again, pending while the first call's late answer arrives.
    const second = await session.request(call('x', 'hang'));
    expect(second.json).toMatchObject({ id: 'x', error: { data: { code: 'GW_UPSTREAM_TIMEOUT' } } });
    expect(second.text).not.toContain('late');
    const seen = await historyOf(session);
    const ids = [...callIds(seen, 'wait'), ...callIds(seen, 'hang')];
    expect(new Set(ids).size).toBe(2);
    expect(cancelled(seen).sort()).toEqual(ids.sort());
    await session.delete();
  });

  it('client cancels and a session ended mid-call beside timeouts on a shared child: only calls that reached their deadline are cancelled for a timeout, once', async () => {
    const gw = await gateway(deadlineServer(700, { upstream: { mode: 'shared', children: 1 } }));
    const [ended, cancelling, timing] = await Promise.all([0, 1, 2].map(() => rpc.initialize(gw.mcpUrl())));
    const endedCalls = Array.from({ length: 10 }, (_, i) => ended!.request(call(`e${i}`, 'hang')).catch(() => undefined));
    const cancelCalls = Array.from({ length: 10 }, (_, i) => cancelling!.request(call(`c${i}`, 'hang')));
    const timingCalls = Array.from({ length: 10 }, (_, i) => timing!.request(call(`t${i}`, 'hang')));
    // Every call is upstream before the cancels and the DELETE go.
    const hangs = async () => callIds(await historyOf(timing!), 'hang').length;
    while ((await hangs()) < 30) await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < 10; i += 2) {
      await cancelling!.request({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: `c${i}`, reason: 'enough' } });
    }
    expect(await ended!.delete()).toBeLessThan(300);
    await Promise.all(endedCalls);
    const timed = await Promise.all(timingCalls);
    timed.forEach((r, i) => expect(r.json).toMatchObject({ id: `t${i}`, error: { data: { code: 'GW_UPSTREAM_TIMEOUT' } } }));
    // The cancelled calls never answer; the others of that session time out.
    const kept = await Promise.all(cancelCalls.filter((_, i) => i % 2 === 1));
    kept.forEach((r) => expect(codeOf(r)).toBe('GW_UPSTREAM_TIMEOUT'));
    // Past every deadline: a cancelled or ended call's stale deadline must not cancel it again.
    await new Promise((r) => setTimeout(r, 300));
    const seen = await historyOf(timing!);
    const hangIds = callIds(seen, 'hang');
    expect(hangIds).toHaveLength(30);
    // Every call is cancelled upstream, once (an ended session's call used to be cancelled twice,
    // by the session and again by its lease's close); only the 15 that reached their deadline for a timeout.
    expect(cancelled(seen).sort()).toEqual([...hangIds].sort());
    const notes = seen.filter((m) => m.method === 'notifications/cancelled').map((m) => m.params as { requestId: number; reason: string });
    const timedOut = notes.filter((n) => n.reason.startsWith('Timed out'));
    expect(timedOut).toHaveLength(15);
    expect(new Set(timedOut.map((n) => n.requestId)).size).toBe(15);
    const byTimeout = new Set(timedOut.map((n) => n.requestId));
    for (const n of notes) if (!n.reason.startsWith('Timed out')) expect(byTimeout.has(n.requestId)).toBe(false);
    await Promise.all([cancelling!.delete(), timing!.delete()]);
  });

  it('a crash with many calls in flight fails them all with the exit and its stderr; the restarted child keeps deadlines', async () => {
    const restart = { onExit: 'restart' as const, maxRestarts: 2, initialBackoffMs: 50, maxBackoffMs: 100 };
    const gw = await gateway(deadlineServer(2_000, { restart, stderrInErrors: true }));
    const session = await rpc.initialize(gw.mcpUrl());
    const inFlight = Array.from({ length: 40 }, (_, i) => session.request(call(i, 'hang')));
    const crashed = await session.request(call('boom', 'crash', { text: 'disk on fire' }));
    const all = [crashed, ...(await Promise.all(inFlight))];
    for (const answer of all) {
      expect(codeOf(answer)).toBe('GW_UPSTREAM_EXITED');
      expect(JSON.stringify(answer.json.error)).toContain('disk on fire');
    }
    const after = await Promise.all([session.request(call('h', 'hang')), session.request(call('w', 'wait', { ms: 20, tag: 'fresh' }))]);
    expect(after[1].json).toMatchObject({ id: 'w', result: { content: [{ text: 'fresh' }] } });
    expect(after[0].json).toMatchObject({ id: 'h', error: { data: { code: 'GW_UPSTREAM_TIMEOUT', timeoutMs: 2_000 } } });
    expect(reportedMs(after[0])).toBeGreaterThanOrEqual(1_980);
    await session.delete();
  });
});

describe('a timeout on the other paths to a correlator', () => {
  it("aggregate /mcp: a member's call times out with the member named, the session keeps serving", async () => {
    const gw = await startAggregateGateway({ targets: { dl: deadlineServer(400) } });
    gateways.push(gw);
    const session = await rpc.initialize(new URL('/mcp', gw.url));
    const listed = await session.request({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
    const names = ((listed.json.result as { tools: Array<{ name: string }> }).tools).map((t) => t.name);
    // One member: its tools keep their own names (prefixed only when several members collide).
    const hang = names.find((n) => n.endsWith('hang') && !n.includes('progress'))!;
    const wait = names.find((n) => n.endsWith('wait'))!;
    const [hung, quick] = await Promise.all([session.request(call(1, hang)), session.request(call(2, wait, { ms: 10, tag: 'ok' }))]);
    expect(quick.json, quick.text).toMatchObject({ id: 2, result: { content: [{ text: 'ok' }] } });
    expect(hung.json).toMatchObject({ id: 1, error: { data: { code: 'GW_UPSTREAM_TIMEOUT', target: 'dl' } } });
    await session.delete();
  });

  it('WebSocket: calls time out in deadline order on one socket, which stays open', async () => {
    const gw = await gateway(deadlineServer(400));
    const peer = await openWs(wsUrl(gw.url, '/servers/dl/ws'));
    peer.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ws', version: '1' } } });
    await peer.until(0);
    peer.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    peer.send(call('p', 'progress-hang', { every: 150, count: 4 }, { progressToken: 7 }));
    peer.send(call('h', 'hang'));
    const frames = await peer.until('p');
    const answers = frames.filter((f) => 'id' in f && !('method' in f));
    expect(answers.map((f) => f.id)).toEqual(['h', 'p']);
    for (const f of answers) expect(f).toMatchObject({ error: { data: { code: 'GW_UPSTREAM_TIMEOUT' } } });
    peer.send(call('w', 'wait', { ms: 10, tag: 'still open' }));
    expect((await peer.until('w')).at(-1)).toMatchObject({ id: 'w', result: { content: [{ text: 'still open' }] } });
    peer.socket.close();
    await peer.closed;
  });
});
