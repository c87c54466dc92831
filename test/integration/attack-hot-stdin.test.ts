/**
 * An outside attack on the stdin queue's slot reuse (issue 34, branch hot3): an emptied queue
 * starts again at slot 0 of the same arrays, and arrays over 1,024 slots after a burst are let go.
 * Bursts over 1,024 lines to a child that reads slowly (one 2025-03-26 batch is dispatched in one
 * turn, so its lines queue while the pipe drains), a quiet spell, another burst, and big lines among small ones: every request
 * reaches the real child once and in order, and every one is answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { MCP_HEADERS, parseBody, recorderServer, rpc, textOf, type RawSession, type Recorded } from '../support/recorder.ts';

let gw: TestGateway;
let s: RawSession;

beforeAll(async () => {
  // A child that pauses 15 ms after each chunk it reads: the pipe fills, and a burst's lines wait
  // in the gateway's queue (over 1,024 slots) until it drains.
  const rec = recorderServer();
  gw = await startTestGateway({
    targets: { rec: { ...rec, args: [...(rec.args ?? []), '--read-delay-ms=15'] } },
    limits: { maxInflightPerSession: 4_000, maxInflight: 8_000, maxBodyBytes: 16 * 1024 * 1024 },
  });
  s = await rpc.initialize(gw.mcpUrl(), '2025-03-26');
});
afterAll(async () => {
  await gw?.close();
});

const echo = (id: string, text: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text } } });

/** Sends `texts` as one batch; every answer comes back once with its own text. */
async function burst(prefix: string, texts: string[]): Promise<void> {
  const answer = await s.postRaw(JSON.stringify(texts.map((text, i) => echo(`${prefix}-${i}`, text))));
  expect(answer.status).toBe(200);
  expect(answer.events).toHaveLength(texts.length);
  const byId = new Map(answer.events.map((e) => [e.id, e]));
  expect(byId.size).toBe(texts.length);
  for (let i = 0; i < texts.length; i++) expect(textOf((byId.get(`${prefix}-${i}`) as Recorded).result), `${prefix}-${i}`).toBe(texts[i]);
}

describe('the stdin queue under bursts', () => {
  it('3,000 lines to a slow reader, quiet, big and small lines alternating, 1,500 lines again: all reach the child once and in order', async () => {
    const small = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}:${i}:${'s'.repeat(i % 150)}`);
    const first = small('one', 3_000);
    await burst('one', first);
    // Lines above and below the 16 KiB coalescing limit, and several at exactly around it.
    const mixed = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? `mix:${i}:${'x'.repeat(20_000 + i)}` : i % 3 === 0 ? `mix:${i}:${'y'.repeat(16 * 1024 - 200)}` : `mix:${i}`));
    await burst('mix', mixed);
    const third = small('three', 1_500);
    // Two batches in flight at once: each keeps its own order upstream.
    await Promise.all([burst('three', third), burst('four', small('four', 50))]);
    const history = await s.history();
    const seen = history.filter((m) => m.method === 'tools/call' && (m.params as { name?: string }).name === 'echo').map((m) => (m.params as { arguments: { text: string } }).arguments.text);
    const of = (tag: string) => seen.filter((t) => t.startsWith(`${tag}:`));
    expect(of('one')).toEqual(first);
    expect(of('mix')).toEqual(mixed);
    expect(of('three')).toEqual(third);
    expect(of('four')).toEqual(small('four', 50));
    expect(seen).toHaveLength(first.length + mixed.length + third.length + 50);
  });

  it('a burst of 2 KiB lines cancelled in its last quarter: queued lines withdrawn, the rest answered in order, the session goes on', async () => {
    const pad = 'p'.repeat(2_048);
    // First a call with progress: the answer becomes an SSE stream (fetch resolves) once the child
    // has read the first lines, while most of the batch still waits in the queue.
    const first = { jsonrpc: '2.0', id: 'c-first', method: 'tools/call', params: { name: 'slow', arguments: { ms: 20, steps: 2 }, _meta: { progressToken: 'c-p' } } };
    const batch = [first, ...Array.from({ length: 1_600 }, (_, i) => echo(`c-${i}`, `c:${i}:${pad}`))];
    const res = await fetch(gw.mcpUrl(), {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': s.id, 'mcp-protocol-version': s.protocolVersion },
      body: JSON.stringify(batch),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const answering = res.text().then((text) => ({ status: res.status, events: parseBody(text, 'text/event-stream') }));
    // Cancels for the last quarter: they wait in the queue and are withdrawn there (some may
    // already be on their way: those are answered or cancelled upstream).
    const cancels = Array.from({ length: 400 }, (_, i) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: `c-${1_200 + i}`, reason: 'attack' } }));
    const cancelled = await s.postRaw(JSON.stringify(cancels));
    expect(cancelled.status).toBe(202);
    const answer = await answering;
    expect(answer.status).toBe(200);
    const ids = new Set(answer.events.map((e) => e.id));
    for (let i = 0; i < 1_200; i++) expect(ids.has(`c-${i}`), `c-${i}`).toBe(true);
    expect(ids.has('c-first')).toBe(true);
    // Every answer is whole: an echo with its own text (or an error for a withdrawn call).
    for (const e of answer.events) {
      if (e.result !== undefined && e.id !== 'c-first') expect(textOf(e.result)).toBe(`c:${String(e.id).slice(2)}:${pad}`);
    }
    const after = await s.request(echo('after', 'still here'));
    expect(textOf(after.json.result)).toBe('still here');
    // The child saw each line at most once, in the order sent, and every one not cancelled.
    const seen = (await s.history())
      .filter((m) => m.method === 'tools/call' && (m.params as { arguments?: { text?: string } }).arguments?.text?.startsWith('c:') === true)
      .map((m) => Number((m.params as { arguments: { text: string } }).arguments.text.split(':')[1]));
    expect(seen.slice(0, 1_200)).toEqual(Array.from({ length: 1_200 }, (_, i) => i));
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1]!);
  });
});
