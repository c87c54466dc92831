/**
 * The 2026 -> 2025 bridge on real parts (the recorder fixture over stdio sees exactly what reaches
 * the upstream): closing a 2026 response cancels the call upstream; input_required rounds carry the
 * answers to the upstream under its own ids; a state is good once, for its caller only, until it
 * expires; held sessions are bounded, and a question is never shown to a client it may not be for; both eras share a URL
 * without crossing answers or questions.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { keyAuth } from '../support/auth-server.ts';
import { buildConfig, createTestLogger, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { errorOf, modern, readSseFrames, resultOf } from '../support/modern.ts';
import { fixture, recorderServer, textOf, type Recorded } from '../support/recorder.ts';
import { envelope, standardHeaders } from '../support/modern.ts';
import { descendantsOf } from '../support/processes.ts';

const running: Array<TestGateway | RunningGateway> = [];
afterEach(async () => {
  await Promise.allSettled(running.splice(0).map((g) => g.close()));
});

async function gateway(stateless: Partial<{ hostsPerCaller: number; inputWaitMs: number }> = {}): Promise<URL> {
  const gw = await startTestGateway({
    targets: { rec: recorderServer() },
    session: { stateless: { hostsPerCaller: 4, hostIdleMs: 60_000, inputWaitMs: 120_000, maxListenStreams: 16, maxParkedPerCaller: 16, maxParked: 1_024, ...stateless } },
  });
  running.push(gw);
  return gw.mcpUrl();
}

const SAMPLING = { sampling: {} };
const meta = { 'io.modelcontextprotocol/clientCapabilities': SAMPLING };
/** The recorder asks its client for a sampling; `id`: the id it asks under (distinct per call on one child). */
const ask = (text: string, id = 'srv-1') => ({ name: 'ask-client', arguments: { id, method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text } }], maxTokens: 5 } } });
const sampled = (text: string) => ({ role: 'assistant', content: { type: 'text', text }, model: 'm' });

/** What the upstream received so far (its `history` tool, on a host of the same caller). */
async function upstreamHistory(url: URL): Promise<Recorded[]> {
  return JSON.parse(textOf(resultOf(await modern(url, 'tools/call', { name: 'history' }, { meta })))) as Recorded[];
}

describe('2026 requests on a 2025 upstream', () => {
  it('closing the response stream cancels the call upstream, under the id the upstream saw', async () => {
    const url = await gateway();
    const abort = new AbortController();
    const params = { name: 'slow', arguments: { ms: 5_000, steps: 50 }, _meta: { ...envelope(meta), progressToken: 'p' } };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params });
    const res = await fetch(url, { method: 'POST', headers: standardHeaders('tools/call', params), body, signal: abort.signal });
    // Its first progress says the call runs upstream (not a clock): then the client goes away.
    await new Promise<void>((resolve) => void readSseFrames(res, resolve).reading.then(resolve));
    abort.abort();
    await expect
      .poll(async () => {
        const history = await upstreamHistory(url);
        const slow = history.find((m) => m.method === 'tools/call' && m.params?.name === 'slow');
        return history.some((m) => m.method === 'notifications/cancelled' && slow !== undefined && m.params?.requestId === slow.id);
      }, { timeout: 5_000 })
      .toBe(true);
  });

  it('closing a response still waiting for its one JSON answer cancels the call upstream as well', async () => {
    const url = await gateway();
    // A caller that declared nothing to ask: its calls share one host, so `history` sees the slow call.
    const plain = { 'io.modelcontextprotocol/clientCapabilities': {} };
    const history = async () => JSON.parse(textOf(resultOf(await modern(url, 'tools/call', { name: 'history' }, { meta: plain })))) as Recorded[];
    const abort = new AbortController();
    const params = { name: 'slow', arguments: { ms: 5_000 }, _meta: envelope(plain) };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params });
    const answered = fetch(url, { method: 'POST', headers: standardHeaders('tools/call', params), body, signal: abort.signal }).then(
      () => 'answered',
      () => 'aborted',
    );
    let slowId: unknown;
    await expect
      .poll(async () => {
        slowId = (await history()).find((m) => m.method === 'tools/call' && m.params?.name === 'slow')?.id;
        return slowId !== undefined;
      }, { timeout: 10_000 })
      .toBe(true);
    // No progress, no log line: the response is still undecided (no SSE writer made) when the client goes.
    abort.abort();
    expect(await answered).toBe('aborted');
    await expect
      .poll(async () => (await history()).some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === slowId), { timeout: 10_000 })
      .toBe(true);
  });

  it('a client gone while its held session still opens has cancelled: the call never goes upstream', async () => {
    const rec = recorderServer();
    const slowStart = { ...rec, args: [...(rec.args ?? []), '--init-delay-ms=3000'] };
    const gw = await startTestGateway({ targets: { rec: slowStart }, session: { stateless: { hostsPerCaller: 1, hostIdleMs: 60_000, inputWaitMs: 120_000, maxListenStreams: 16, maxParkedPerCaller: 16, maxParked: 1_024 } } });
    running.push(gw);
    const abort = new AbortController();
    const call = modern(gw.mcpUrl(), 'tools/call', { name: 'slow', arguments: { ms: 100 } }, { meta, signal: abort.signal });
    // Well inside the upstream's 3 s handshake: the held session is still opening.
    setTimeout(() => abort.abort(), 200);
    await expect(call).rejects.toThrow();
    const history = await upstreamHistory(gw.mcpUrl());
    expect(history.filter((m) => m.method === 'tools/call' && m.params?.name === 'slow')).toEqual([]);
  });

  it('an input_required round: the answer reaches the upstream under its own id; the state is good once', async () => {
    const url = await gateway();
    const first = resultOf(await modern(url, 'tools/call', ask('first?'), { meta, id: 'a' }));
    expect(first.resultType).toBe('input_required');
    const [key, request] = Object.entries(first.inputRequests as Record<string, { method: string; params: Record<string, unknown> }>)[0] ?? [];
    expect(request?.method).toBe('sampling/createMessage');
    expect(JSON.stringify(request?.params)).toContain('first?');

    const retry = { ...ask('first?'), inputResponses: { [key as string]: sampled('yes') }, requestState: first.requestState };
    const done = await modern(url, 'tools/call', retry, { meta, id: 'b' });
    expect(done.json.id).toBe('b');
    const answer = JSON.parse(textOf(resultOf(done))) as Recorded;
    // The recorder echoes the answer it got: its own id (srv-1), the result the client gave.
    expect(answer).toMatchObject({ id: 'srv-1', result: sampled('yes') });

    const again = await modern(url, 'tools/call', retry, { meta, id: 'c' });
    expect(again.status).toBe(400);
    expect(errorOf(again)).toMatchObject({ code: -32602, data: { code: 'GW_INVALID_REQUEST_STATE' } });
  });

  it('a retry without the answer asked for gets the question again, with a new state; a non-object inputResponses is -32602', async () => {
    const url = await gateway();
    const first = resultOf(await modern(url, 'tools/call', ask('q'), { meta }));
    const bad = await modern(url, 'tools/call', { ...ask('q'), inputResponses: 'nope', requestState: first.requestState }, { meta });
    expect(bad.status).toBe(400);
    expect(errorOf(bad).code).toBe(-32602);

    const second = resultOf(await modern(url, 'tools/call', { ...ask('q'), inputResponses: { wrong: sampled('x') }, requestState: first.requestState }, { meta }));
    expect(second.resultType).toBe('input_required');
    expect(Object.keys(second.inputRequests as object)).toEqual(Object.keys(first.inputRequests as object));
    expect(second.requestState).not.toBe(first.requestState);
    const key = Object.keys(second.inputRequests as object)[0] as string;
    const done = resultOf(await modern(url, 'tools/call', { ...ask('q'), inputResponses: { [key]: sampled('ok') }, requestState: second.requestState }, { meta }));
    expect(done.resultType).toBe('complete');
  });

  it('a round nobody resumes in time is cancelled upstream and its state refused', async () => {
    const url = await gateway({ inputWaitMs: 300 });
    const first = resultOf(await modern(url, 'tools/call', ask('late'), { meta }));
    await new Promise((r) => setTimeout(r, 600));
    const key = Object.keys(first.inputRequests as object)[0] as string;
    const late = await modern(url, 'tools/call', { ...ask('late'), inputResponses: { [key]: sampled('too late') }, requestState: first.requestState }, { meta });
    expect(errorOf(late).data?.code).toBe('GW_INVALID_REQUEST_STATE');
    const history = await upstreamHistory(url);
    const call = history.find((m) => m.method === 'tools/call' && m.params?.name === 'ask-client');
    expect(history.some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === call?.id)).toBe(true);
  });

  it('held sessions are bounded: past the cap calls share one, and a question two calls could own is refused upstream', async () => {
    const url = await gateway({ hostsPerCaller: 1 });
    const pid = async () => JSON.parse(textOf(resultOf(await modern(url, 'tools/call', { name: 'whoami' }, { meta })))).pid as number;
    const slow = modern(url, 'tools/call', { name: 'slow', arguments: { ms: 1_500 } }, { meta });
    await new Promise((r) => setTimeout(r, 200));
    // Shares the one session (a second would pass the cap): served at once, not queued, not refused.
    const echo = await modern(url, 'tools/call', { name: 'echo', arguments: { text: 'beside a running call' } }, { meta });
    expect(textOf(resultOf(echo))).toBe('beside a running call');
    // A question while two calls that may ask run on that session: nobody can tell whose, so the
    // upstream gets an error (the recorder returns the answer it got as its result).
    const asked = JSON.parse(textOf(resultOf(await modern(url, 'tools/call', ask('whose?'), { meta })))) as Recorded;
    expect(asked.error).toMatchObject({ code: -32603, data: { code: 'GW_SERVER_REQUEST_UNATTRIBUTABLE' } });
    expect(resultOf(await slow).resultType).toBe('complete');
    expect(await pid()).toBe(await pid());
  });

  it('a call waiting for input blocks no one: other calls run beside it, and it still completes', async () => {
    const url = await gateway({ hostsPerCaller: 1 });
    const parked = resultOf(await modern(url, 'tools/call', ask('later', 'p-1'), { meta }));
    expect(parked.resultType).toBe('input_required');
    const echo = await modern(url, 'tools/call', { name: 'echo', arguments: { text: 'meanwhile' } }, { meta });
    expect(textOf(resultOf(echo))).toBe('meanwhile');
    // Another question while the first waits: the waiting call is blocked, so it is the new one's.
    const second = resultOf(await modern(url, 'tools/call', ask('second', 'p-2'), { meta }));
    expect(second.resultType).toBe('input_required');
    for (const [round, text] of [[parked, 'first done'], [second, 'second done']] as const) {
      const key = Object.keys(round.inputRequests as object)[0] as string;
      const done = await modern(url, 'tools/call', { ...ask('x'), inputResponses: { [key]: sampled(text) }, requestState: round.requestState }, { meta });
      expect(textOf(resultOf(done))).toContain(text);
    }
  });

  it('a question goes to a session of its own when the cap allows: concurrent asking calls each get theirs', async () => {
    const url = await gateway({ hostsPerCaller: 3 });
    const slow = modern(url, 'tools/call', { name: 'slow', arguments: { ms: 800 } }, { meta });
    await new Promise((r) => setTimeout(r, 100));
    const round = resultOf(await modern(url, 'tools/call', ask('mine'), { meta }));
    expect(round.resultType).toBe('input_required');
    const key = Object.keys(round.inputRequests as object)[0] as string;
    const done = await modern(url, 'tools/call', { ...ask('mine'), inputResponses: { [key]: sampled('yours') }, requestState: round.requestState }, { meta });
    expect(textOf(resultOf(done))).toContain('yours');
    expect(resultOf(await slow).resultType).toBe('complete');
  });

  it('calls of a caller that declared nothing askable share one held session; asking callers spread', async () => {
    const before = descendantsOf(process.pid).length;
    const url = await gateway({ hostsPerCaller: 3 });
    const slow = (call: { meta?: Record<string, unknown> }) => modern(url, 'tools/call', { name: 'slow', arguments: { ms: 400 } }, call);
    // No sampling, elicitation or roots declared: no question can be for these calls (nor is one shown).
    const plain = await Promise.all([slow({}), slow({}), slow({})]);
    expect(plain.map((a) => resultOf(a).resultType)).toEqual(['complete', 'complete', 'complete']);
    expect(descendantsOf(process.pid).length - before).toBe(1);
    // The same calls from a caller that may be asked each want a session where no other may ask.
    await Promise.all([slow({ meta }), slow({ meta })]);
    expect(descendantsOf(process.pid).length - before).toBe(3);
  });

  it('a large result keeps its own text: resultType spliced in, under the client\'s id', async () => {
    const url = await gateway();
    const text = 'z'.repeat(64 * 1024);
    const answer = await modern(url, 'tools/call', { name: 'echo', arguments: { text } }, { id: 'big-1' });
    expect(answer.json.id).toBe('big-1');
    expect(resultOf(answer).resultType).toBe('complete');
    expect(textOf(resultOf(answer))).toBe(text);
    expect(answer.text.indexOf('"resultType":"complete"')).toBeLessThan(100);
  });

  it('concurrent 2026 requests with the same id on one held session each get their own answer', async () => {
    const url = await gateway();
    const call = (text: string) => modern(url, 'tools/call', { name: 'echo', arguments: { text } }, { id: 'same' });
    const answers = await Promise.all(['one', 'two', 'three'].map(call));
    expect(answers.map((a) => [a.json.id, textOf(resultOf(a))])).toEqual([['same', 'one'], ['same', 'two'], ['same', 'three']]);
  });

  it('sessions and states are per principal: another caller cannot resume a round, nor share a child', async () => {
    const config = { ...buildConfig({ targets: { rec: recorderServer() } }), auth: keyAuth({ alice: 'alice-key', bob: 'bob-key' }) };
    const gw = await startGateway(config, { logger: createTestLogger('silent', undefined) });
    running.push(gw);
    const url = new URL('/mcp', gw.url);
    const as = (key: string) => ({ authorization: `Bearer ${key}` });
    // A 2026 request is authenticated like a 2025 one: before its body is read.
    const anonymous = await modern(url, 'tools/list', {}, { meta });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain('Bearer');
    expect((await modern(url, 'tools/list', {}, { meta, headers: as('wrong-key') })).status).toBe(401);
    const pid = async (key: string) => JSON.parse(textOf(resultOf(await modern(url, 'tools/call', { name: 'whoami' }, { meta, headers: as(key) })))).pid as number;
    expect(await pid('alice-key')).not.toBe(await pid('bob-key'));

    const first = resultOf(await modern(url, 'tools/call', ask('alice only'), { meta, headers: as('alice-key') }));
    const key = Object.keys(first.inputRequests as object)[0] as string;
    const retry = { ...ask('alice only'), inputResponses: { [key]: sampled('from bob') }, requestState: first.requestState };
    const stolen = await modern(url, 'tools/call', retry, { meta, headers: as('bob-key') });
    expect(errorOf(stolen).data?.code).toBe('GW_INVALID_REQUEST_STATE');
    const own = await modern(url, 'tools/call', { ...retry, inputResponses: { [key]: sampled('from alice') } }, { meta, headers: as('alice-key') });
    expect(textOf(resultOf(own))).toContain('from alice');
  });

  it('a listen stream with resourceSubscriptions: the upstream is subscribed, and the stream hears those URIs only', async () => {
    const gw = await startTestGateway({ targets: { col: { command: process.execPath, args: [fixture('collider-server.mjs')] } } });
    running.push(gw);
    const url = gw.mcpUrl();
    const abort = new AbortController();
    const params = { notifications: { resourceSubscriptions: ['collider://notes/1'] }, _meta: envelope() };
    const res = await fetch(url, { method: 'POST', headers: standardHeaders('subscriptions/listen', {}), body: JSON.stringify({ jsonrpc: '2.0', id: 'L1', method: 'subscriptions/listen', params }), signal: abort.signal });
    const { frames, reading } = readSseFrames(res);
    await expect.poll(() => frames.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(1);
    expect(frames[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: { resourceSubscriptions: ['collider://notes/1'] } } });
    const touch = async (uri: string) => textOf(resultOf(await modern(url, 'tools/call', { name: 'touch', arguments: { uri } })));
    await expect.poll(() => touch('collider://notes/1'), { timeout: 5_000 }).toBe('touched');
    expect(await touch('collider://notes/2')).toBe('not subscribed');
    await expect.poll(() => frames.filter((f) => f.method === 'notifications/resources/updated').length, { timeout: 5_000 }).toBeGreaterThanOrEqual(1);
    const updates = frames.filter((f) => f.method === 'notifications/resources/updated');
    expect(updates.every((f) => f.params?.uri === 'collider://notes/1')).toBe(true);
    expect(updates[0]?.params?._meta).toMatchObject({ 'io.modelcontextprotocol/subscriptionId': 'L1' });
    abort.abort();
    await reading;
    // The last stream gone, the upstream is unsubscribed.
    await expect.poll(() => touch('collider://notes/1'), { timeout: 5_000 }).toBe('not subscribed');
  });

  it('both eras on one URL at once: each client answers its own questions', async () => {
    const url = await gateway();
    const v1 = new Client({ name: 'v1', version: '1' }, { capabilities: { sampling: {} } });
    v1.setRequestHandler(CreateMessageRequestSchema, async () => sampled('answer of the 2025 client'));
    await v1.connect(new StreamableHTTPClientTransport(url));
    try {
      const calls = Array.from({ length: 3 }, async (_, i) => {
        const old = v1.callTool(ask(`2025 #${i}`, `v1-${i}`));
        const first = resultOf(await modern(url, 'tools/call', ask(`2026 #${i}`), { meta }));
        const key = Object.keys(first.inputRequests as object)[0] as string;
        const modernDone = modern(url, 'tools/call', { ...ask(`2026 #${i}`), inputResponses: { [key]: sampled(`answer of 2026 client #${i}`) }, requestState: first.requestState }, { meta });
        return { old: textOf(await old), modern: textOf(resultOf(await modernDone)) };
      });
      for (const [i, { old, modern: now }] of (await Promise.all(calls)).entries()) {
        expect(old).toContain('answer of the 2025 client');
        expect(now).toContain(`answer of 2026 client #${i}`);
        expect(now).not.toContain('2025 client');
      }
    } finally {
      await v1.close();
    }
  });
});
