/**
 * Any replica serves any session (issue 24 items 2-3): a session opened on replica r0 is used
 * through replica r1, each its own process, with a real Redis as the directory. The SDK client
 * initializes on r0 and sends everything else to r1: a call whose progress streams through r1,
 * the SSE response cut mid-call and resumed with Last-Event-ID through r1, DELETE through r1; and
 * a legacy SSE stream opened on r0 whose POSTs go to r1.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type TestCluster } from '../support/cluster.ts';
import { openLegacyStream } from '../support/legacy-sse.ts';
import { MCP_HEADERS, post, textOf } from '../support/recorder.ts';
import { cutAfterFirstProgress } from '../support/sse-cut.ts';

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startCluster({ replicas: 2 });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

/** A fetch that sends initialize to `first` and every later request to `then`; it records where each went. */
function switchingFetch(first: string, then: string, seen: string[], cutFirstSse: { cut: boolean }): typeof fetch {
  return async (input, init) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    const body = typeof init?.body === 'string' ? init.body : '';
    const to = body.includes('"method":"initialize"') ? first : then;
    const target = new URL(url.pathname + url.search, to);
    seen.push(`${init?.method ?? 'GET'} ${target.origin}`);
    const res = await fetch(target, init);
    const sse = res.headers.get('content-type')?.startsWith('text/event-stream') === true;
    if (init?.method !== 'POST' || !sse || cutFirstSse.cut || res.body === null) return res;
    // Cut the first SSE answer after its first progress event: the SDK resumes it with a GET and Last-Event-ID.
    cutFirstSse.cut = true;
    return cutAfterFirstProgress(res);
  };
}

describe('a session opened on one replica, used through another', () => {
  it('streams progress through the non-owner, resumes with Last-Event-ID there, and deletes there', async () => {
    const [r0, r1] = cluster.replicas as [(typeof cluster.replicas)[0], (typeof cluster.replicas)[0]];
    const seen: string[] = [];
    const cut = { cut: false };
    const transport = new StreamableHTTPClientTransport(r0.mcpUrl(), {
      fetch: switchingFetch(r0.url, r1.url, seen, cut),
      reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1, maxRetries: 5 },
    });
    const client = new Client({ name: 'cluster-hop', version: '1.0.0' });
    await client.connect(transport);
    const sessionId = transport.sessionId as string;
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{60,}$/);

    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('slow');
    const progress: number[] = [];
    const result = await client.callTool({ name: 'slow', arguments: { ms: 800, steps: 4 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    expect(cut.cut).toBe(true);
    expect(textOf(result)).toBe('done');
    expect(progress).toEqual([1, 2, 3, 4]);
    // Only initialize went to the owner; the rest, the resuming GET included, went to r1.
    expect(seen.filter((s) => s.endsWith(r0.url))).toEqual([`POST ${r0.url}`]);
    expect(seen.some((s) => s === `GET ${r1.url}`)).toBe(true);

    await transport.terminateSession();
    // Deleted on its owner: r0 itself no longer knows it.
    const after = await post(r0.mcpUrl(), JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), { 'mcp-session-id': sessionId });
    expect(after.status).toBe(404);
    await client.close();
  });

  it('answers from the owner when r1 relays a plain JSON request; the owner refusals come back as they are', async () => {
    const [r0, r1] = cluster.replicas as [(typeof cluster.replicas)[0], (typeof cluster.replicas)[0]];
    const init = await post(r0.mcpUrl(), JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }));
    const id = init.headers.get('mcp-session-id') as string;
    const headers = { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' };
    const echo = await post(r1.mcpUrl(), JSON.stringify({ jsonrpc: '2.0', id: 'e', method: 'tools/call', params: { name: 'echo', arguments: { text: 'via r1' } } }), headers);
    expect(echo.status).toBe(200);
    expect(echo.headers.get('mcp-session-id')).toBe(id);
    expect(echo.json).toMatchObject({ id: 'e', result: { content: [{ text: 'via r1' }] } });
    // The owner's own checks answer through the hop: a bad protocol version header is its 400.
    const bad = await post(r1.mcpUrl(), JSON.stringify({ jsonrpc: '2.0', id: 'v', method: 'ping' }), { ...headers, 'mcp-protocol-version': '1999-01-01' });
    expect(bad.status).toBe(400);
    const res = await fetch(r1.mcpUrl(), { method: 'DELETE', headers });
    expect(res.status).toBe(200);
  });

  it('ends the hop when the client goes away: the owner lets go of a standalone stream closed at the edge', async () => {
    const [r0, r1] = cluster.replicas as [(typeof cluster.replicas)[0], (typeof cluster.replicas)[0]];
    const init = await post(r0.mcpUrl(), JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }));
    const headers = { 'mcp-session-id': init.headers.get('mcp-session-id') as string, 'mcp-protocol-version': '2025-11-25', accept: 'text/event-stream' };
    const first = new AbortController();
    const open = await fetch(r1.mcpUrl(), { headers, signal: first.signal });
    expect(open.status).toBe(200);
    expect(open.headers.get('content-type')).toContain('text/event-stream');
    // One standalone stream per session: while the first is open on the owner, a second is 409.
    const second = await fetch(r1.mcpUrl(), { headers });
    expect(second.status).toBe(409);
    await second.arrayBuffer();
    first.abort();
    // Once the edge has dropped the hop, the owner's stream is gone and a new one opens.
    await expect
      .poll(
        async () => {
          const again = await fetch(r1.mcpUrl(), { headers, signal: AbortSignal.timeout(5_000) });
          void again.body?.cancel();
          return again.status;
        },
        { timeout: 10_000 },
      )
      .toBe(200);
  });

  it('takes the POSTs of a legacy SSE stream through another replica', async () => {
    const [r0, r1] = cluster.replicas as [(typeof cluster.replicas)[0], (typeof cluster.replicas)[0]];
    const stream = await openLegacyStream(r0.mcpUrl('/servers/rec/sse'));
    try {
      const messages = new URL(stream.endpoint.pathname + stream.endpoint.search, r1.url);
      const send = async (message: unknown) => {
        const res = await fetch(messages, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(message) });
        await res.arrayBuffer();
        return res.status;
      };
      expect(await send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } } })).toBe(202);
      expect(await stream.nextMessage()).toMatchObject({ id: 1, result: { serverInfo: expect.anything() } });
      expect(await send({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBe(202);
      expect(await send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'legacy via r1' } } })).toBe(202);
      expect(await stream.nextMessage()).toMatchObject({ id: 2, result: { content: [{ text: 'legacy via r1' }] } });
    } finally {
      stream.close();
    }
    // The stream closed on r0 ended the session: its POSTs get 404 through r1 too.
    await expect
      .poll(async () => (await fetch(new URL(stream.endpoint.pathname + stream.endpoint.search, r1.url), { method: 'POST', headers: MCP_HEADERS, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })).status, { timeout: 10_000 })
      .toBe(404);
  });
});
