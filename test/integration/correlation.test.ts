/**
 * What reaches the upstream, and what comes back: id rewriting in every direction, cancellation,
 * resume after a dropped SSE stream, and isolation between sessions. The recorder fixture reports
 * every message it received, so these tests see the upstream side of the wire.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PingRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { isAlive } from '../support/processes.ts';
import { recorderServer, rpc, textOf, type Recorded } from '../support/recorder.ts';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ targets: { rec: recorderServer() } });
});
afterAll(async () => {
  await gw?.close();
});

async function connect(options: ConstructorParameters<typeof StreamableHTTPClientTransport>[1] = {}) {
  const client = new Client({ name: 'correlation-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(gw.mcpUrl(), options);
  await client.connect(transport);
  return { client, transport };
}

async function history(client: Client): Promise<Recorded[]> {
  return JSON.parse(textOf(await client.callTool({ name: 'history', arguments: {} }))) as Recorded[];
}

describe('id rewriting', () => {
  it('sends the gateway own ids upstream and restores the client ids exactly', async () => {
    const session = await rpc.initialize(gw.mcpUrl());
    const ids: Array<string | number> = ['a-string-id', 7, 0, -3, 'with "quotes" and ünicode'];
    for (const id of ids) {
      const answer = await session.request({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: String(id) } } });
      expect(answer.json.id).toStrictEqual(id);
      // A JSON answer goes out in one piece with its length, not chunked.
      expect(answer.headers.get('content-length')).toBe(String(Buffer.byteLength(answer.text)));
    }
    // A big integer that a double cannot hold comes back with its exact digits.
    const big = await session.postRaw('{"jsonrpc":"2.0","id":12345678901234567890123,"method":"ping"}');
    expect(big.text).toContain('"id":12345678901234567890123');

    const seen = (await session.request({ jsonrpc: '2.0', id: 'h', method: 'tools/call', params: { name: 'history' } })).json;
    const upstream = JSON.parse((seen.result as { content: Array<{ text: string }> }).content[0]!.text) as Recorded[];
    const upstreamIds = upstream.filter((m) => m.method === 'tools/call' || m.method === 'ping').map((m) => m.id);
    // Upstream saw only integers from the gateway's own counter, all distinct.
    expect(upstreamIds.every((id) => typeof id === 'number')).toBe(true);
    expect(new Set(upstreamIds).size).toBe(upstreamIds.length);
    await session.delete();
  });

  it('rewrites the progress token upstream and restores it on progress notifications', async () => {
    const session = await rpc.initialize(gw.mcpUrl());
    const answer = await session.request({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'slow', arguments: { ms: 50, steps: 3 }, _meta: { progressToken: 'my-token' } },
    });
    expect(answer.contentType).toContain('text/event-stream');
    const progress = answer.events.filter((m) => m.method === 'notifications/progress');
    expect(progress.map((m) => (m.params as { progressToken: unknown }).progressToken)).toEqual(['my-token', 'my-token', 'my-token']);
    expect(answer.json).toMatchObject({ id: 1, result: { content: [{ text: 'done' }] } });
    const upstream = await session.history();
    const call = upstream.find((m) => m.method === 'tools/call' && (m.params as { name: string }).name === 'slow')!;
    expect((call.params as { _meta: { progressToken: unknown } })._meta.progressToken).toBe(call.id);
    await session.delete();
  });

  it('rewrites ids of server->client requests and restores them on the way back', async () => {
    const { client } = await connect();
    const seenIds: unknown[] = [];
    client.setRequestHandler(PingRequestSchema, async (_request, extra) => {
      seenIds.push(extra.requestId);
      return {};
    });
    const cases: Array<{ id?: unknown; rawId?: string }> = [{ id: 'srv-1' }, { id: 0 }, { rawId: '98765432109876543210' }];
    for (const args of cases) {
      // The fixture answers with the raw line it got back, so exact digits can be checked.
      const line = textOf(await client.callTool({ name: 'ask-client', arguments: { method: 'ping', ...args } }));
      if (args.rawId) expect(line).toContain(`"id":${args.rawId}`);
      else expect((JSON.parse(line) as { id: unknown }).id).toStrictEqual(args.id);
    }
    // Downstream, the gateway's own distinct ids were used.
    expect(new Set(seenIds).size).toBe(cases.length);
    await client.close();
  });
});

describe('cancellation', () => {
  it('forwards notifications/cancelled with the upstream id, and drops the late answer', async () => {
    const { client } = await connect();
    const controller = new AbortController();
    const call = client.callTool({ name: 'slow', arguments: { ms: 400, steps: 0 } }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort('stop'), 100);
    await expect(call).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 500));
    const upstream = await history(client);
    const slow = upstream.find((m) => m.method === 'tools/call' && (m.params as { name: string }).name === 'slow')!;
    const cancel = upstream.find((m) => m.method === 'notifications/cancelled')!;
    expect(cancel).toBeDefined();
    expect((cancel.params as { requestId: unknown }).requestId).toBe(slow.id);
    await client.close();
  });

  it('times out a request, answers the client with GW_UPSTREAM_TIMEOUT and cancels upstream', async () => {
    const quick = await startTestGateway({
      targets: { rec: { ...recorderServer(), timeouts: { requestMs: 200, resetOnProgress: true, maxTotalMs: 0 } } },
    });
    try {
      const session = await rpc.initialize(quick.mcpUrl());
      const started = Date.now();
      const answer = await session.request({ jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: { name: 'slow', arguments: { ms: 2_000 } } });
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(answer.status).toBe(200);
      expect(answer.json).toMatchObject({ id: 'slow-1', error: { code: -32603, data: { code: 'GW_UPSTREAM_TIMEOUT', target: 'rec' } } });
      const upstream = await session.history();
      expect(upstream.some((m) => m.method === 'notifications/cancelled')).toBe(true);
    } finally {
      await quick.close();
    }
  });

  it('progress resets the timeout', async () => {
    const quick = await startTestGateway({
      targets: { rec: { ...recorderServer(), timeouts: { requestMs: 300, resetOnProgress: true, maxTotalMs: 0 } } },
    });
    try {
      const session = await rpc.initialize(quick.mcpUrl());
      // 8 steps over 1.2 s: longer than the timeout, but never 300 ms without progress.
      const answer = await session.request({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'slow', arguments: { ms: 1_200, steps: 8 }, _meta: { progressToken: 2 } },
      });
      expect(answer.json).toMatchObject({ id: 2, result: { content: [{ text: 'done' }] } });
    } finally {
      await quick.close();
    }
  });
});

describe('streams', () => {
  it('resumes a dropped SSE response with Last-Event-ID, and the drop is not a cancel', async () => {
    let cut = false;
    const cuttingFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const sse = res.headers.get('content-type')?.startsWith('text/event-stream');
      if (init?.method !== 'POST' || !sse || cut || res.body === null) return res;
      cut = true;
      const reader = res.body.getReader();
      let seen = '';
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          seen += new TextDecoder().decode(value);
          controller.enqueue(value);
          if (seen.includes('notifications/progress')) {
            controller.error(new Error('connection dropped by the test'));
            await reader.cancel();
          }
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const { client } = await connect({
      fetch: cuttingFetch,
      reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1, maxRetries: 5 },
    });
    const progress: number[] = [];
    const result = await client.callTool({ name: 'slow', arguments: { ms: 600, steps: 4 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(cut).toBe(true);
    expect(textOf(result)).toBe('done');
    expect(progress).toEqual([1, 2, 3, 4]);
    const upstream = await history(client);
    expect(upstream.some((m) => m.method === 'notifications/cancelled')).toBe(false);
    await client.close();
  });

  it('turns a slow answer into SSE: priming event with retry, keep-alive comments, then the answer', async () => {
    const quick = await startTestGateway({ targets: { rec: recorderServer() }, session: { keepAliveMs: 200 } });
    try {
      const session = await rpc.initialize(quick.mcpUrl());
      const answer = await session.request({ jsonrpc: '2.0', id: 'long', method: 'tools/call', params: { name: 'slow', arguments: { ms: 1_700 } } });
      expect(answer.contentType).toContain('text/event-stream');
      expect(answer.text).toMatch(/^id: \d+-\d+\nretry: \d+\ndata: \n\n/);
      expect(answer.text).toContain(': keep-alive');
      expect(answer.json).toMatchObject({ id: 'long', result: { content: [{ text: 'done' }] } });
      // A 2025-06-18 client gets no priming event (it could not parse empty data).
      const older = await rpc.initialize(quick.mcpUrl(), '2025-06-18');
      const plain = await older.request({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { ms: 1_300 } } });
      expect(plain.contentType).toContain('text/event-stream');
      expect(plain.text).not.toContain('retry:');
      expect(plain.json).toMatchObject({ id: 1, result: { content: [{ text: 'done' }] } });
    } finally {
      await quick.close();
    }
  });

  it('sends list_changed on the standalone GET stream, and refuses a second GET with 409', async () => {
    const session = await rpc.initialize(gw.mcpUrl());
    const headers = { accept: 'text/event-stream', 'mcp-session-id': session.id };
    // Headers arrive only once the stream is attached, so no sleeping is needed.
    const first = await fetch(gw.mcpUrl(), { headers });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toContain('text/event-stream');
    const second = await fetch(gw.mcpUrl(), { headers });
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ error: { data: { code: 'GW_STREAM_CONFLICT' } } });

    const answer = await session.request({ jsonrpc: '2.0', id: 'n', method: 'tools/call', params: { name: 'notify-changed' } });
    // Not on the POST stream: it answered with plain JSON...
    expect(answer.contentType).toContain('application/json');
    // ...and the notification came on the GET stream.
    const reader = first.body!.getReader();
    let seen = '';
    while (!seen.includes('notifications/tools/list_changed')) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
    }
    expect(seen).toContain('"method":"notifications/tools/list_changed"');
    await reader.cancel();
    await session.delete();
  });
});

describe('isolation', () => {
  it("a child sees only the minimal environment, its target's env, and names its target lets through", async () => {
    process.env.SWITCHBOARD_TEST_SECRET = 'not-for-children';
    const envGw = await startTestGateway({
      targets: {
        plain: { ...recorderServer(), env: { OWN_SETTING: 'mine' } },
        open: { ...recorderServer(), inheritEnv: ['PATH', 'SWITCHBOARD_TEST_SECRET'] },
      },
    });
    try {
      const getenv = async (target: string, name: string) => {
        const s = await rpc.initialize(envGw.mcpUrl(target));
        const answer = await s.request({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'getenv', arguments: { name } } });
        await s.delete();
        return textOf(answer.json.result);
      };
      expect(await getenv('plain', 'SWITCHBOARD_TEST_SECRET')).toBe('(unset)');
      expect(await getenv('plain', 'OWN_SETTING')).toBe('mine');
      expect(await getenv('plain', 'PATH')).toBe(process.env.PATH);
      expect(await getenv('open', 'SWITCHBOARD_TEST_SECRET')).toBe('not-for-children');
    } finally {
      delete process.env.SWITCHBOARD_TEST_SECRET;
      await envGw.close();
    }
  });

  it('two sessions with the same client ids, 100 interleaved calls each, get only their own answers from their own child', async () => {
    const a = await rpc.initialize(gw.mcpUrl());
    const b = await rpc.initialize(gw.mcpUrl());
    const call = (s: typeof a, tag: string, i: number) =>
      s.request({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text: `${tag}-${i}` } } });
    const runs = [];
    for (let i = 0; i < 100; i++) runs.push(call(a, 'A', i), call(b, 'B', i));
    const answers = await Promise.all(runs);
    for (let i = 0; i < 100; i++) {
      expect(answers[2 * i]!.json).toMatchObject({ id: i, result: { content: [{ text: `A-${i}` }] } });
      expect(answers[2 * i + 1]!.json).toMatchObject({ id: i, result: { content: [{ text: `B-${i}` }] } });
    }
    const pidA = JSON.parse(textOf((await a.request({ jsonrpc: '2.0', id: 'w', method: 'tools/call', params: { name: 'whoami' } })).json.result)).pid as number;
    const pidB = JSON.parse(textOf((await b.request({ jsonrpc: '2.0', id: 'w', method: 'tools/call', params: { name: 'whoami' } })).json.result)).pid as number;
    expect(pidA).not.toBe(pidB);
    await a.delete();
    await b.delete();
    await new Promise((r) => setTimeout(r, 300));
    expect(isAlive(pidA)).toBe(false);
    expect(isAlive(pidB)).toBe(false);
  });
});
