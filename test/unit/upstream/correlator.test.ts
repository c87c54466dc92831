import { describe, expect, it } from 'vitest';
import type { GatewayError } from '../../../src/errors/gateway-error.ts';
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../../../src/jsonrpc/types.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { createMemoryTransportPair } from '../../../src/transport/memory.ts';
import type { SendOptions } from '../../../src/transport/types.ts';
import { createCorrelator, type PendingHandler } from '../../../src/upstream/correlator.ts';

const logger = createLogger({ level: 'silent' });
const timeouts = { requestMs: 5_000, resetOnProgress: true, maxTotalMs: 0 };

interface Outcome {
  response?: JsonRpcResponse;
  error?: GatewayError;
  progress: JsonRpcNotification[];
  done: Promise<void>;
}

const handler: PendingHandler<Outcome & { resolve: () => void }> = {
  onresponse: (response, o) => ((o.response = response), o.resolve()),
  onerror: (error, o) => ((o.error = error), o.resolve()),
  onprogress: (n, o) => void o.progress.push(n),
};

function outcome(): Outcome & { resolve: () => void } {
  let resolve!: () => void;
  const done = new Promise<void>((r) => (resolve = r));
  return { progress: [], done, resolve };
}

function setup() {
  const [near, far] = createMemoryTransportPair();
  const correlator = createCorrelator({ transport: near, target: 't', logger });
  const seen: JsonRpcMessage[] = [];
  far.onmessage = (m) => void seen.push(m);
  return { correlator, far, seen };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('correlator', () => {
  it('sends its own ids and restores the caller id exactly', async () => {
    const { correlator, far, seen } = setup();
    const a = outcome();
    const b = outcome();
    correlator.request({ jsonrpc: '2.0', id: 'x', method: 'ping' }, handler, a, timeouts);
    correlator.request({ jsonrpc: '2.0', id: 1, method: 'ping' }, handler, b, timeouts);
    await tick();
    expect(seen.map((m) => (m as JsonRpcRequest).id)).toEqual([1, 2]);
    // Answer out of order.
    await far.send({ jsonrpc: '2.0', id: 2, result: { b: true } });
    await far.send({ jsonrpc: '2.0', id: 1, result: { a: true } });
    await Promise.all([a.done, b.done]);
    expect(a.response).toEqual({ jsonrpc: '2.0', id: 'x', result: { a: true } });
    expect(b.response).toEqual({ jsonrpc: '2.0', id: 1, result: { b: true } });
    expect(correlator.inflight).toBe(0);
  });

  it('rewrites the progress token and restores it on progress', async () => {
    const { correlator, far, seen } = setup();
    const o = outcome();
    correlator.request({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { _meta: { progressToken: 'tok' } } }, handler, o, timeouts);
    await tick();
    const sent = seen[0] as JsonRpcRequest;
    const upstreamToken = (sent.params!._meta as { progressToken: unknown }).progressToken;
    expect(upstreamToken).toBe(sent.id);
    await far.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: upstreamToken, progress: 1 } });
    await far.send({ jsonrpc: '2.0', id: sent.id, result: {} });
    await o.done;
    expect(o.progress.map((n) => n.params!.progressToken)).toEqual(['tok']);
  });

  it('times out, fails the request and sends notifications/cancelled upstream', async () => {
    const { correlator, seen } = setup();
    const o = outcome();
    correlator.request({ jsonrpc: '2.0', id: 'slow', method: 'tools/call' }, handler, o, { requestMs: 30, resetOnProgress: true, maxTotalMs: 0 });
    await o.done;
    await tick();
    expect(o.error?.code).toBe('GW_UPSTREAM_TIMEOUT');
    expect(seen[1]).toMatchObject({ method: 'notifications/cancelled', params: { requestId: 1 } });
  });

  it('caps the total time even with progress', async () => {
    const { correlator, far } = setup();
    const o = outcome();
    correlator.request({ jsonrpc: '2.0', id: 1, method: 'x', params: { _meta: { progressToken: 1 } } }, handler, o, { requestMs: 40, resetOnProgress: true, maxTotalMs: 100 });
    const started = Date.now();
    const pump = setInterval(() => void far.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } }), 10);
    await o.done;
    clearInterval(pump);
    expect(o.error?.code).toBe('GW_UPSTREAM_TIMEOUT');
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
  });

  it('cancel withdraws a request: upstream told, late answer dropped, handler silent', async () => {
    const { correlator, far, seen } = setup();
    const o = outcome();
    const id = correlator.request({ jsonrpc: '2.0', id: 'c', method: 'x' }, handler, o, timeouts);
    expect(correlator.cancel(id, 'no longer needed')).toBe(true);
    await far.send({ jsonrpc: '2.0', id, result: {} });
    await tick();
    expect(o.response).toBeUndefined();
    expect(o.error).toBeUndefined();
    expect(seen[1]).toMatchObject({ method: 'notifications/cancelled', params: { requestId: id, reason: 'no longer needed' } });
    expect(correlator.cancel(id)).toBe(false);
  });

  it("a request's send carries a signal aborted by a cancel (after the note) or a timeout, never by its answer; and its headers and trace", async () => {
    const [near, far] = createMemoryTransportPair();
    const sends: Array<{ message: JsonRpcMessage; options: SendOptions | undefined; abortedBefore: boolean[] }> = [];
    const send = near.send.bind(near);
    near.send = (message, options) => {
      sends.push({ message, options, abortedBefore: sends.map((s) => s.options?.signal?.aborted === true) });
      return send(message, options);
    };
    const correlator = createCorrelator({ transport: near, target: 't', logger });
    const trace = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    const answered = correlator.request({ jsonrpc: '2.0', id: 'a', method: 'x' }, handler, outcome(), timeouts, { headers: { 'x-h': '1' }, trace });
    const cancelled = correlator.request({ jsonrpc: '2.0', id: 'c', method: 'x' }, handler, outcome(), timeouts);
    const timedOut = outcome();
    correlator.request({ jsonrpc: '2.0', id: 't', method: 'x' }, handler, timedOut, { ...timeouts, requestMs: 20 });
    expect(sends[0]!.options).toMatchObject({ headers: { 'x-h': '1' }, trace });
    expect(sends.map((s) => s.options?.signal?.aborted)).toEqual([false, false, false]);
    await far.send({ jsonrpc: '2.0', id: answered, result: {} });
    expect(correlator.cancel(cancelled, 'stop')).toBe(true);
    // The note went out while the request's signal was still unaborted: the abort follows it.
    expect(sends[3]!.message).toMatchObject({ method: 'notifications/cancelled', params: { requestId: cancelled } });
    expect(sends[3]!.abortedBefore[1]).toBe(false);
    expect(sends[1]!.options?.signal?.aborted).toBe(true);
    await timedOut.done;
    expect(timedOut.error?.code).toBe('GW_UPSTREAM_TIMEOUT');
    expect(sends[2]!.options?.signal?.aborted).toBe(true);
    expect(sends[0]!.options?.signal?.aborted).toBe(false);
  });

  it('destroy fails everything pending at once, and later requests too', async () => {
    const { correlator } = setup();
    const outcomes = [outcome(), outcome(), outcome()];
    outcomes.forEach((o, i) => correlator.request({ jsonrpc: '2.0', id: i, method: 'x' }, handler, o, timeouts));
    const idle = correlator.idle();
    const { GatewayError } = await import('../../../src/errors/gateway-error.ts');
    correlator.destroy(new GatewayError('GW_UPSTREAM_EXITED', 'gone'));
    await idle;
    expect(outcomes.map((o) => o.error?.code)).toEqual(['GW_UPSTREAM_EXITED', 'GW_UPSTREAM_EXITED', 'GW_UPSTREAM_EXITED']);
    const late = outcome();
    correlator.request({ jsonrpc: '2.0', id: 'late', method: 'x' }, handler, late, timeouts);
    expect(late.error?.code).toBe('GW_UPSTREAM_EXITED');
  });

  it('hands server->client requests and other notifications to the owner', async () => {
    const { correlator, far } = setup();
    const requests: JsonRpcRequest[] = [];
    const notes: JsonRpcNotification[] = [];
    correlator.onrequest = (r) => void requests.push(r);
    correlator.onnotification = (n) => void notes.push(n);
    await far.send({ jsonrpc: '2.0', id: 'srv', method: 'sampling/createMessage', params: {} });
    await far.send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } });
    await tick();
    expect(requests.map((r) => r.id)).toEqual(['srv']);
    expect(notes.map((n) => n.method)).toEqual(['notifications/message']);
  });
});
