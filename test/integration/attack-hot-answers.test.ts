/**
 * An outside attack on what the hot POST path answers (issue 34's fifth round, branch hot3): a
 * lone message is now a list of one, `requestsOf` runs only for POSTs with notifications or
 * answers, and a 2025 JSON answer's session header goes into writeHead's flat list. Mixed
 * batches keep their order upstream, ids of every spelling come back as sent, Content-Length is
 * the byte length of multi-byte text, odd params never hang, and a client that hangs up
 * mid-call leaves the gateway serving everyone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, call, KEY_A, KEY_B, note, startHotGateway, waitUntil, type HotGateway } from '../support/hot-gateway.ts';
import { MCP_HEADERS, parseBody, rpc, textOf, type RawSession, type Recorded } from '../support/recorder.ts';

let hot: HotGateway;
let url: URL;
let a: RawSession;
let b: RawSession;
const expectHealthy = () => hot.expectHealthy();

beforeAll(async () => {
  hot = await startHotGateway();
  ({ url, a, b } = hot);
});

afterAll(async () => {
  await hot?.gw.close();
});

describe('what the fast path answers', () => {
  it('a batch mixing notifications, answers and requests: the notifications reach upstream first and in order, every request is answered once', async () => {
    const batch = await a.postRaw(JSON.stringify([
      note('m-1'),
      call('r-1', 'echo', { text: 'first' }),
      { jsonrpc: '2.0', id: 'an-answer-nobody-asked-for', result: {} },
      note('m-2'),
      call('r-2', 'echo', { text: 'second' }),
    ]));
    expect(batch.status).toBe(200);
    expect(batch.events.map((e) => e.id).sort()).toEqual(['r-1', 'r-2']);
    const history = await a.history();
    const seen = history.map((m) => (m.method === 'notifications/x-marker' ? `note:${(m.params as { marker: string }).marker}` : m.method === 'tools/call' ? `call:${textOf(undefined)}${(m.params as { arguments?: { text?: string } }).arguments?.text ?? ''}` : '')).filter((x) => x.startsWith('note:m-') || x === 'call:first' || x === 'call:second');
    expect(seen).toEqual(['note:m-1', 'note:m-2', 'call:first', 'call:second']);
  });

  it('only notifications and answers: 202 with no body, lone or batched', async () => {
    expect((await a.postRaw(JSON.stringify(note('n-alone')))).status).toBe(202);
    const both = await a.postRaw(JSON.stringify([note('n-batch'), { jsonrpc: '2.0', id: 99, error: { code: -1, message: 'no' } }]));
    expect(both.status).toBe(202);
    expect(both.text).toBe('');
  });

  it('weird id spellings come back exactly as sent, lone and batched', async () => {
    const ids: unknown[] = ['0', '', ' 1 ', 'ü\u0000😀', 'x'.repeat(300), -1, 1.5, 0, 2 ** 52, '__proto__', 'constructor'];
    for (const id of ids) {
      const answer = await a.request(call(id, 'echo', { text: `id ${JSON.stringify(id)}` }));
      expect(answer.status).toBe(200);
      expect(answer.json.id).toEqual(id);
    }
    // In batches of three: the session's in-flight cap here is 3.
    for (let i = 0; i < ids.length; i += 3) {
      const some = ids.slice(i, i + 3);
      const batch = await a.postRaw(JSON.stringify(some.map((id) => call(id, 'echo', { text: 'b' }))));
      expect(batch.status).toBe(200);
      expect(batch.events.map((e) => JSON.stringify(e.id)).sort()).toEqual(some.map((id) => JSON.stringify(id)).sort());
    }
  });

  it('a JSON answer carries the session header and the right Content-Length for multi-byte text, small or large', async () => {
    for (const text of ['héllo 🌍 ünïcödé', '🌍'.repeat(9000), 'é'.repeat(16 * 1024)]) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, ...bearer(KEY_B), 'mcp-session-id': b.id, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify(call(`len-${text.length}`, 'echo', { text })),
      });
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('mcp-session-id')).toBe(b.id);
      expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
      expect(textOf((JSON.parse(bytes.toString('utf8')) as Recorded).result)).toBe(text);
    }
  });

  it('a client that hangs up mid-call: the gateway stays up, the session goes on, the late answer goes nowhere', async () => {
    const s = await rpc.initialize(url, '2025-11-25', bearer(KEY_A));
    try {
      const controller = new AbortController();
      const gone = fetch(url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, ...bearer(KEY_A), 'mcp-session-id': s.id, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify(call('hung-up', 'slow', { ms: 300 })),
        signal: controller.signal,
      });
      await waitUntil(async () => (await s.history()).some((m) => m.id !== undefined && (m.params as { name?: string } | undefined)?.name === 'slow'));
      controller.abort();
      await expect(gone).rejects.toThrow();
      // More calls, some failing, on this session (two: the hung-up one may still count against
      // its cap of three) and on five others at once, while the slow one ends.
      const others = await Promise.all([1, 2, 3, 4, 5].map(() => rpc.initialize(url, '2025-11-25', bearer(KEY_A))));
      const calls = [s.request(call('after-s-1', 'echo', { text: 'after-s-1' })), s.request(call('after-s-2', 'no-such-tool'))];
      for (const [n, o] of others.entries()) {
        calls.push(o.request(call(`o-${n}-1`, 'echo', { text: `o-${n}` })), o.request(call(`o-${n}-2`, 'crash-not', {})), o.request({ jsonrpc: '2.0', id: `o-${n}-3`, method: 'ping' }));
      }
      const answers = await Promise.all(calls);
      for (const answer of answers) expect(answer.status).toBe(200);
      expect(textOf(answers[0]!.json.result)).toBe('after-s-1');
      expect(answers[1]!.json.error ?? (answers[1]!.json.result as { isError?: boolean }).isError).toBeTruthy();
      for (const o of others) expect(await o.delete()).toBe(200);
      // The child answers in timer order: once a later, longer call is answered, so was the hung-up one.
      const later = await s.request(call('later', 'slow', { ms: 400 }));
      expect(later.status).toBe(200);
      const again = await s.request(call('again', 'echo', { text: 'still here' }));
      expect(textOf(again.json.result)).toBe('still here');
    } finally {
      await s.delete();
    }
    await expectHealthy();
  });

  it('odd params and methods on the fast path: each answered with its own id (200 or 400), none hangs', async () => {
    const odd: Array<Record<string, unknown>> = [
      { method: 'tools/call', params: { name: 'echo', arguments: 'not-an-object' } },
      { method: 'tools/call', params: { name: 5 } },
      { method: 'tools/call', params: { name: 'echo', arguments: { text: 'm' }, _meta: null } },
      { method: 'tools/call', params: { name: 'echo', arguments: { text: 'm' }, _meta: [] } },
      { method: 'tools/call', params: { name: 'echo', arguments: { text: 'm' }, _meta: { progressToken: { nested: true } } } },
      { method: 'tools/call', params: { name: '__proto__' } },
      { method: 'tools/call' },
      { method: '' },
      { method: '__proto__' },
      { method: 'constructor', params: {} },
      { method: 'notifications/cancelled', params: { requestId: 'x' } },
      { method: 'tasks/get', params: { taskId: '../../etc' } },
    ];
    for (const [i, m] of odd.entries()) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, ...bearer(KEY_B), 'mcp-session-id': b.id, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: `odd-${i}`, ...m }),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      expect([200, 400], `${JSON.stringify(m)} -> ${res.status} ${text}`).toContain(res.status);
      const events = parseBody(text, res.headers.get('content-type') ?? '');
      expect(events.at(-1)?.id, JSON.stringify(m)).toBe(res.status === 400 && events.at(-1)?.id === null ? null : `odd-${i}`);
      expect(events.at(-1)?.result !== undefined || events.at(-1)?.error !== undefined).toBe(true);
    }
    await expectHealthy();
  });
});
