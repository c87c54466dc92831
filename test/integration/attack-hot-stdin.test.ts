/**
 * An outside attack on the stdin queue's slot reuse (issue 34, branch hot3): an emptied queue
 * starts again at slot 0 of the same arrays, and arrays over 1,024 slots after a burst are let go.
 * Bursts over 1,024 lines (one 2025-03-26 batch is dispatched in one turn, so its lines queue while
 * the pipe drains), a quiet spell, another burst, and big lines among small ones: every request
 * reaches the real child once and in order, and every one is answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { recorderServer, rpc, textOf, type RawSession, type Recorded } from '../support/recorder.ts';

let gw: TestGateway;
let s: RawSession;

beforeAll(async () => {
  gw = await startTestGateway({ targets: { rec: recorderServer() }, limits: { maxInflightPerSession: 2_000, maxBodyBytes: 16 * 1024 * 1024 } });
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
  it('1,500 lines, quiet, big and small lines alternating, 1,100 lines again: all reach the child once and in order', async () => {
    const small = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}:${i}`);
    const first = small('one', 1_500);
    await burst('one', first);
    // Lines above and below the 16 KiB coalescing limit, and several at exactly around it.
    const mixed = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? `mix:${i}:${'x'.repeat(20_000 + i)}` : i % 3 === 0 ? `mix:${i}:${'y'.repeat(16 * 1024 - 200)}` : `mix:${i}`));
    await burst('mix', mixed);
    const third = small('three', 1_100);
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

  it('a burst cancelled half-way: the rest is answered, the session goes on', async () => {
    const batch = Array.from({ length: 1_200 }, (_, i) => echo(`c-${i}`, `c:${i}`));
    const answering = s.postRaw(JSON.stringify(batch));
    // Cancels for the second half, sent as soon as the batch is on its way (some may already be answered).
    const cancels = Array.from({ length: 600 }, (_, i) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: `c-${600 + i}`, reason: 'attack' } }));
    const cancelled = await s.postRaw(JSON.stringify(cancels));
    expect(cancelled.status).toBe(202);
    const answer = await answering;
    expect(answer.status).toBe(200);
    const ids = new Set(answer.events.map((e) => e.id));
    for (let i = 0; i < 600; i++) expect(ids.has(`c-${i}`)).toBe(true);
    // Every answer is whole: an echo with its own text, or an error for a withdrawn call.
    for (const e of answer.events) {
      if (e.result !== undefined) expect(textOf(e.result)).toBe(`c:${String(e.id).slice(2)}`);
    }
    const after = await s.request(echo('after', 'still here'));
    expect(textOf(after.json.result)).toBe('still here');
  });
});
