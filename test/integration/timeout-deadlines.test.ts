/**
 * Request deadlines in the correlator, pinned through the gateway with a real stdio child (the
 * recorder fixture): when a request times out, with which error, what goes upstream, and that the
 * other requests of the same session (the same correlator) are untouched. Written before the
 * correlator's per-request timers became one timer over the deadlines; they hold on both.
 *
 * Timing bounds are one-sided where the machine's load can move them: a timeout never comes before
 * its deadline (the client starts its clock before the gateway does), and comes within a generous
 * margin after it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { recorderServer, rpc, textOf, type RawAnswer, type RawSession, type Recorded } from '../support/recorder.ts';
import type { TimeoutPolicy } from '../../src/config/types.ts';
import { DEFAULT_BREAKER_POLICY } from '../../src/upstream/circuit-breaker.ts';

/** Far above any timing here: a late timeout shows as a failure, load alone does not. */
const LATE_MS = 1_500;

function target(timeouts: TimeoutPolicy) {
  // The child's own hang detector (5 timeouts a minute end it) would end the session in the burst test.
  return { ...recorderServer(), timeouts, circuitBreaker: { ...DEFAULT_BREAKER_POLICY, timeouts: 10_000 } };
}

interface Timed {
  answer: RawAnswer;
  elapsedMs: number;
}

async function timed(session: RawSession, message: Record<string, unknown>): Promise<Timed> {
  const started = performance.now();
  const answer = await session.request(message);
  return { answer, elapsedMs: performance.now() - started };
}

function slow(id: string | number, ms: number, extra: Record<string, unknown> = {}) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow', arguments: { ms, ...extra.args as object }, ...(extra._meta ? { _meta: extra._meta } : {}) } };
}

/** The gateway's own elapsed time, from the error message ("... within N ms"). */
function reportedMs(answer: RawAnswer): number {
  const message = (answer.json.error as { message: string }).message;
  const match = /within (\d+) ms/.exec(message);
  if (match === null) throw new Error(`no elapsed time in ${message}`);
  return Number(match[1]);
}

function expectTimeout(t: Timed, id: string | number, requestMs: number, afterMs: number): void {
  expect(t.answer.status).toBe(200);
  expect(t.answer.json).toMatchObject({
    id,
    error: { code: -32603, data: { code: 'GW_UPSTREAM_TIMEOUT', target: 'rec', method: 'tools/call', timeoutMs: requestMs } },
  });
  // Node's timers may fire a few ms before the wall clock says the delay passed; never more.
  expect(reportedMs(t.answer)).toBeGreaterThanOrEqual(afterMs - 20);
  expect(reportedMs(t.answer)).toBeLessThan(afterMs + LATE_MS);
  expect(t.elapsedMs).toBeGreaterThanOrEqual(afterMs - 20);
}

const cancelsOf = (upstream: Recorded[]) =>
  upstream.filter((m) => m.method === 'notifications/cancelled').map((m) => (m.params as { requestId: unknown }).requestId);
const slowIds = (upstream: Recorded[]) =>
  upstream.filter((m) => m.method === 'tools/call' && (m.params as { name: string }).name === 'slow').map((m) => m.id);

describe('one deadline per request (300 ms)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ targets: { rec: target({ requestMs: 300, resetOnProgress: true, maxTotalMs: 0 }) } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('a slow call times out at its deadline while fast calls on the same session answer', async () => {
    const session = await rpc.initialize(gw.mcpUrl());
    const pending = timed(session, slow('slow-1', 5_000));
    const fast = await Promise.all(
      Array.from({ length: 20 }, (_, i) => session.request({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text: `e${i}` } } })),
    );
    fast.forEach((answer, i) => expect(answer.json).toMatchObject({ id: i, result: { content: [{ text: `e${i}` }] } }));
    expectTimeout(await pending, 'slow-1', 300, 300);
    const upstream = await session.history();
    expect(cancelsOf(upstream)).toEqual(slowIds(upstream));
    expect(cancelsOf(upstream)).toHaveLength(1);
    await session.delete();
  });

  it('a call cancelled before its deadline is cancelled upstream once, and never times out', async () => {
    const client = new Client({ name: 'deadline-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(gw.mcpUrl()));
    const controller = new AbortController();
    const call = client.callTool({ name: 'slow', arguments: { ms: 2_000 } }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort('stop'), 100);
    await expect(call).rejects.toThrow();
    // Past the deadline the cancelled call would have had: its timer must not fire a second cancel.
    await new Promise((r) => setTimeout(r, 500));
    const upstream = JSON.parse(textOf(await client.callTool({ name: 'history', arguments: {} }))) as Recorded[];
    expect(slowIds(upstream)).toHaveLength(1);
    expect(cancelsOf(upstream)).toEqual(slowIds(upstream));
    await client.close();
  });

  it('fifty calls timing out together each get their error, and the session stays usable', async () => {
    const session = await rpc.initialize(gw.mcpUrl());
    const all = await Promise.all(Array.from({ length: 50 }, (_, i) => timed(session, slow(`s${i}`, 5_000))));
    all.forEach((t, i) => expectTimeout(t, `s${i}`, 300, 300));
    const echo = await session.request({ jsonrpc: '2.0', id: 'after', method: 'tools/call', params: { name: 'echo', arguments: { text: 'still here' } } });
    expect(echo.json).toMatchObject({ id: 'after', result: { content: [{ text: 'still here' }] } });
    const upstream = await session.history();
    expect(new Set(cancelsOf(upstream))).toEqual(new Set(slowIds(upstream)));
    expect(cancelsOf(upstream)).toHaveLength(50);
    await session.delete();
  });

  it('a call that answers just before its deadline gets its answer, not a timeout', async () => {
    const session = await rpc.initialize(gw.mcpUrl());
    const answer = await session.request(slow('in-time', 150));
    expect(answer.json).toMatchObject({ id: 'in-time', result: { content: [{ text: 'done' }] } });
    const upstream = await session.history();
    expect(cancelsOf(upstream)).toEqual([]);
    await session.delete();
  });
});

describe('deadlines in another order than the requests (progress resets, a total cap)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ targets: { rec: target({ requestMs: 1_000, resetOnProgress: true, maxTotalMs: 1_200 }) } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('a call kept alive by progress is capped by maxTotalMs before a later call reaches its own deadline', async () => {
    const session = await rpc.initialize(gw.mcpUrl());
    // A: progress at 0, 800, 1600 ms... Its deadline moves to 800 + 1000, capped at 1200 total.
    const a = timed(session, slow('a', 8_000, { args: { steps: 10 }, _meta: { progressToken: 'pa' } }));
    await new Promise((r) => setTimeout(r, 400));
    // B: no progress, its deadline is 1000 ms after it started, about 1400 ms after A.
    const bStarted = performance.now();
    const b = timed(session, slow('b', 8_000));
    const first = await Promise.race([a.then(() => 'a'), b.then(() => 'b')]);
    expect(first).toBe('a');
    const ta = await a;
    expectTimeout(ta, 'a', 1_000, 1_200);
    const tb = await b;
    expectTimeout(tb, 'b', 1_000, 1_000);
    expect(performance.now() - bStarted).toBeGreaterThanOrEqual(980);
    const progress = ta.answer.events.filter((m) => m.method === 'notifications/progress');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.every((m) => (m.params as { progressToken: unknown }).progressToken === 'pa')).toBe(true);
    await session.delete();
  });
});
