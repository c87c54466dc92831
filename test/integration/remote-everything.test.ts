/**
 * The official SDK client, through the gateway, to @modelcontextprotocol/server-everything running
 * as a remote upstream: over Streamable HTTP (its `streamableHttp` mode) and over legacy HTTP+SSE
 * (its `sse` mode). Server->client requests (sampling, elicitation) reach the client through the
 * upstream's GET stream (http) or its event stream (sse).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startEverythingHttp, startEverythingSse, type RemoteUpstream } from '../support/remote-upstreams.ts';

function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

describe.each([
  { kind: 'http' as const, start: startEverythingHttp },
  { kind: 'sse' as const, start: startEverythingSse },
])('server-everything over $kind through the gateway', ({ kind, start }) => {
  let upstream: RemoteUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await start();
    gw = await startTestGateway({ targets: { everything: { type: kind, url: upstream.url } } });
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
  });

  async function connect(capabilities: ConstructorParameters<typeof Client>[1] = {}) {
    const client = new Client({ name: 'remote-test', version: '1.0.0' }, capabilities);
    const transport = new StreamableHTTPClientTransport(gw.mcpUrl());
    await client.connect(transport);
    return { client, transport };
  }

  it('initializes, lists tools and calls one', async () => {
    const { client, transport } = await connect();
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(client.getServerVersion()?.name).toContain('everything');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('echo');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: `over ${kind}` } }))).toBe(`Echo: over ${kind}`);
    await client.close();
  });

  it('streams progress of a long call and then its result', async () => {
    const { client } = await connect();
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 4 } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(progress).toEqual([1, 2, 3, 4]);
    expect(textOf(result)).toContain('Long running operation completed');
    await client.close();
  });

  it('carries a sampling request to the client and its answer back', async () => {
    const { client } = await connect({ capabilities: { sampling: {} } });
    let asked = '';
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const content = request.params.messages[0]?.content;
      asked = content && 'text' in content ? String(content.text) : '';
      return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'sampled by the test' } };
    });
    const result = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello sampler', maxTokens: 5 } });
    expect(asked).toContain('hello sampler');
    expect(textOf(result)).toContain('sampled by the test');
    await client.close();
  });

  it('carries an elicitation request to the client and its answer back', async () => {
    const { client } = await connect({ capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada Lovelace' } }));
    const result = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
    expect(textOf(result)).toContain('Ada Lovelace');
    await client.close();
  });

  it('cancels a call mid-way upstream and keeps the session usable', async () => {
    const { client } = await connect();
    const controller = new AbortController();
    const call = client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 5 } },
      undefined,
      { signal: controller.signal, onprogress: () => controller.abort('changed my mind') },
    );
    await expect(call).rejects.toThrow(/changed my mind|abort/i);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'still here' } }))).toBe('Echo: still here');
    await client.close();
  });

  it('keeps two sessions with colliding request ids apart', async () => {
    const a = await connect();
    const b = await connect();
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId);
    // Both SDK clients number their requests from the same start, so ids collide on every call.
    const calls = [];
    for (let i = 0; i < 5; i++) {
      calls.push(a.client.callTool({ name: 'echo', arguments: { message: `a${i}` } }));
      calls.push(b.client.callTool({ name: 'echo', arguments: { message: `b${i}` } }));
    }
    const texts = (await Promise.all(calls)).map(textOf);
    expect(texts).toEqual([0, 1, 2, 3, 4].flatMap((i) => [`Echo: a${i}`, `Echo: b${i}`]));
    await a.client.close();
    await b.client.close();
  });
});

describe.each([
  { kind: 'http' as const, start: startEverythingHttp },
  { kind: 'sse' as const, start: startEverythingSse },
])('server-everything over $kind crashing mid-call', ({ kind, start }) => {
  it('fails the pending call with a JSON-RPC error and ends the session', async () => {
    const upstream = await start();
    const gw = await startTestGateway({ targets: { everything: { type: kind, url: upstream.url } } });
    try {
      const client = new Client({ name: 'crash-test', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(gw.mcpUrl());
      await client.connect(transport);
      let crashed = 0;
      const call = client.callTool(
        { name: 'trigger-long-running-operation', arguments: { duration: 20, steps: 20 } },
        undefined,
        {
          onprogress: () => {
            if (crashed === 0) {
              crashed = Date.now();
              void upstream.close();
            }
          },
          timeout: 25_000,
        },
      );
      const error = (await call.catch((e: unknown) => e)) as { code?: number; data?: { code?: string; target?: string } };
      expect(error.code).toBe(-32603);
      expect(error.data).toMatchObject({ target: 'everything' });
      expect(['GW_UPSTREAM_CLOSED', 'GW_UPSTREAM_UNREACHABLE']).toContain(error.data?.code);
      // Bounded by the reconnect series, well below the call's own 20 s.
      expect(Date.now() - crashed).toBeLessThan(15_000);
      await expect.poll(async () => {
        const again = await fetch(gw.mcpUrl(), {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId! },
          body: JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/list' }),
        });
        await again.arrayBuffer();
        return again.status;
      }, { timeout: 15_000 }).toBe(404);
      await client.close();
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
});
