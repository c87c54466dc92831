/**
 * Remote Streamable HTTP upstreams that fail, against real local servers: a refused connection, an
 * HTTP 500, a 404 for the upstream session (transparent re-initialize, and the stateful case that
 * must not be hidden), a slow answer past the timeout, an SSE answer cut mid-way (resumed with
 * Last-Event-ID, or failed when it cannot be), plus what the gateway sends: configured headers,
 * the downstream's Authorization only on opt-in, MCP-Protocol-Version, DELETE at the end.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { post, rpc, textOf } from '../support/recorder.ts';

const logLines: string[] = [];
let gw: TestGateway;
let plain: HttpFixture;
let stateless: HttpFixture;
let noResume: HttpFixture;
let headers: HttpFixture;
let refusedUrl: string;

async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/mcp`;
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const call = (id: number | string, name: string, args: Record<string, unknown> = {}, meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});

beforeAll(async () => {
  [plain, stateless, noResume, headers] = await Promise.all([
    startHttpFixture(),
    startHttpFixture({ getStream: false }),
    startHttpFixture({ resumable: false }),
    startHttpFixture({ getStream: false }),
  ]);
  refusedUrl = await closedPortUrl();
  gw = await startTestGateway({
    targets: {
      plain: { type: 'http', url: plain.url, timeouts: { requestMs: 1_000, resetOnProgress: true, maxTotalMs: 0 } },
      stateless: { type: 'http', url: stateless.url },
      noresume: { type: 'http', url: noResume.url },
      refused: { type: 'http', url: refusedUrl },
      // TLS spoken to a plain HTTP server: the handshake fails.
      tls: { type: 'http', url: plain.url.replace('http:', 'https:') },
      small: { type: 'http', url: plain.url, maxMessageBytes: 2_048 },
      secret: { type: 'http', url: headers.url, headers: { 'x-api-key': 'k-123' } },
      forward: { type: 'http', url: headers.url, headers: { authorization: 'Bearer configured' }, forwardAuthorization: true },
    },
    logLines,
  });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([plain, stateless, noResume, headers].map((f) => f?.close()));
});

describe('remote upstream failures', () => {
  it('refused connection: initialize fails with GW_UPSTREAM_UNREACHABLE naming the target', async () => {
    const answer = await post(gw.mcpUrl('refused'), INIT);
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({
      id: 0,
      error: { code: -32603, data: { code: 'GW_UPSTREAM_UNREACHABLE', target: 'refused', reason: 'connection refused' } },
    });
    expect(answer.headers.get('mcp-session-id')).toBeNull();
  });

  it('TLS failure: GW_UPSTREAM_UNREACHABLE with reason "TLS handshake failed"', async () => {
    const answer = await post(gw.mcpUrl('tls'), INIT);
    expect(answer.json).toMatchObject({ id: 0, error: { data: { code: 'GW_UPSTREAM_UNREACHABLE', target: 'tls', reason: 'TLS handshake failed' } } });
  });

  it('an answer over maxMessageBytes fails only that request, as a JSON body or as an SSE event', async () => {
    const session = await rpc.initialize(gw.mcpUrl('small'));
    const json = await session.request(call(1, 'big', { bytes: 4_000 }));
    expect(json.json).toMatchObject({ id: 1, error: { data: { code: 'GW_UPSTREAM_MESSAGE_TOO_LARGE', target: 'small', limit: 2_048 } } });
    const sse = await session.request(call(2, 'big', { bytes: 4_000, sse: true }));
    expect(sse.json).toMatchObject({ id: 2, error: { data: { code: 'GW_UPSTREAM_MESSAGE_TOO_LARGE', target: 'small', limit: 2_048 } } });
    const fits = await session.request(call(3, 'big', { bytes: 100, sse: true }));
    expect(textOf(fits.json.result)).toHaveLength(100);
    await session.delete();
  });

  it('HTTP 500 fails only that request, with the status and a correlation id in data (the upstream\'s text only in the log); the session goes on', async () => {
    const session = await rpc.initialize(gw.mcpUrl('plain'));
    const failed = await session.request(call(1, 'fail500'));
    expect(failed.json).toMatchObject({
      id: 1,
      error: { code: -32603, data: { code: 'GW_UPSTREAM_HTTP_ERROR', target: 'plain', status: 500, correlationId: expect.any(String) } },
    });
    expect(failed.text).not.toContain('fixture exploded');
    const ok = await session.request(call(2, 'echo', { text: 'after 500' }));
    expect(textOf(ok.json.result)).toBe('after 500');
    await session.delete();
  });

  it('a slow answer past timeoutMs becomes GW_UPSTREAM_TIMEOUT and is cancelled upstream', async () => {
    const session = await rpc.initialize(gw.mcpUrl('plain'));
    const from = plain.seen.length;
    const answer = await session.request(call('slow-1', 'hang'));
    expect(answer.json).toMatchObject({ id: 'slow-1', error: { data: { code: 'GW_UPSTREAM_TIMEOUT', target: 'plain', timeoutMs: 1_000 } } });
    const hung = await plain.waitAfter(from, (m) => (m.params as { name?: string } | undefined)?.name === 'hang');
    const { id } = hung.body as { id: number };
    const cancel = await plain.waitAfter(from, (m) => m.method === 'notifications/cancelled' && (m.params as { requestId?: unknown }).requestId === id);
    expect(cancel.headers['mcp-session-id']).toBe(hung.headers['mcp-session-id']);
    await expect.poll(() => plain.hangsClosed).toContain(`${hung.headers['mcp-session-id']}/${id}`);
    await session.delete();
  });

  it('a notification the upstream never acknowledges fails after timeoutMs instead of holding the POST', async () => {
    const session = await rpc.initialize(gw.mcpUrl('plain'));
    const answer = await session.request({ jsonrpc: '2.0', method: 'notifications/x-hang' });
    expect(answer.status).toBe(504);
    expect(answer.json).toMatchObject({ error: { data: { code: 'GW_UPSTREAM_TIMEOUT', target: 'plain', timeoutMs: 1_000 } } });
    expect(textOf((await session.request(call(1, 'echo', { text: 'alive' }))).json.result)).toBe('alive');
    await session.delete();
  });

  it("the client's cancel reaches upstream with the upstream id, and the hung POST is closed", async () => {
    const session = await rpc.initialize(gw.mcpUrl('plain'));
    const from = plain.seen.length;
    const pending = session.request(call('to-cancel', 'hang'));
    const hung = await plain.waitAfter(from, (m) => m.method === 'tools/call' && (m.params as { name?: string }).name === 'hang');
    const { id } = hung.body as { id: number };
    const upstreamSession = hung.headers['mcp-session-id'];
    await session.request({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'to-cancel', reason: 'no longer needed' } });
    const cancel = await plain.waitAfter(from, (m) => m.method === 'notifications/cancelled' && (m.params as { requestId?: unknown }).requestId === id);
    expect(cancel.headers['mcp-session-id']).toBe(upstreamSession);
    expect(cancel.body).toMatchObject({ params: { reason: 'no longer needed' } });
    await expect.poll(() => plain.hangsClosed).toContain(`${upstreamSession}/${id}`);
    expect((await pending).json).toMatchObject({ id: 'to-cancel', error: { data: { code: 'GW_REQUEST_CANCELLED' } } });
    await session.delete();
  });

  it('an SSE answer cut mid-way is resumed with Last-Event-ID', async () => {
    const session = await rpc.initialize(gw.mcpUrl('plain'));
    const answer = await session.request(call(3, 'cut', {}, { progressToken: 'p' }));
    expect(answer.events.find((m) => m.method === 'notifications/progress')).toMatchObject({ params: { progressToken: 'p', progress: 1 } });
    expect(answer.json).toMatchObject({ id: 3, result: { content: [{ text: 'resumed answer' }] } });
    expect(plain.seen.some((s) => s.method === 'GET' && s.headers['last-event-id'] !== undefined)).toBe(true);
    // The 2025-11-25 priming event (an id, empty data) is normal traffic, not a warning.
    expect(logLines.filter((l) => l.includes('not JSON') || l.includes('not a JSON-RPC message'))).toEqual([]);
    await session.delete();
  });

  it('an SSE answer cut mid-way without event ids fails that request with GW_UPSTREAM_CLOSED', async () => {
    const session = await rpc.initialize(gw.mcpUrl('noresume'));
    const answer = await session.request(call(4, 'cut'));
    expect(answer.json).toMatchObject({ id: 4, error: { data: { code: 'GW_UPSTREAM_CLOSED', target: 'noresume' } } });
    expect(String((answer.json.error as { data: { reason: string } }).data.reason)).toContain('cannot be resumed');
    const ok = await session.request(call(5, 'echo', { text: 'still fine' }));
    expect(textOf(ok.json.result)).toBe('still fine');
    await session.delete();
  });

  it('404 for the upstream session with no state: re-initializes transparently and retries', async () => {
    const session = await rpc.initialize(gw.mcpUrl('stateless'));
    expect(textOf((await session.request(call(1, 'echo', { text: 'before' }))).json.result)).toBe('before');
    const initsBefore = stateless.messages().filter((m) => m.method === 'initialize').length;
    stateless.expireSessions();
    const after = await session.request(call(2, 'echo', { text: 'after expiry' }));
    expect(textOf(after.json.result)).toBe('after expiry');
    const inits = stateless.messages().filter((m) => m.method === 'initialize');
    expect(inits.length).toBe(initsBefore + 1);
    // The replay is the client's own initialize, under the gateway's id.
    expect(inits.at(-1)).toMatchObject({ id: 'switchboard-reinit-1', params: { clientInfo: { name: 'raw' } } });
    const retried = stateless.seen.findLast((s) => (s.body as { params?: { name?: string } } | undefined)?.params?.name === 'echo')!;
    expect(retried.headers['mcp-session-id']).not.toBe(stateless.seen.find((s) => s.headers['mcp-session-id'])?.headers['mcp-session-id']);
    await session.delete();
  });

  it('404 for the upstream session after logging/setLevel: a clear error, then the session is gone', async () => {
    const session = await rpc.initialize(gw.mcpUrl('stateless'));
    await session.request({ jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'debug' } });
    stateless.expireSessions();
    const failed = await session.request(call(2, 'echo', { text: 'lost' }));
    expect(failed.json).toMatchObject({ id: 2, error: { data: { code: 'GW_UPSTREAM_SESSION_EXPIRED', target: 'stateless', status: 404 } } });
    await expect.poll(async () => (await session.request(call(3, 'echo', { text: 'x' }))).status).toBe(404);
  });
});

describe('what the gateway sends upstream', () => {
  it('configured headers, MCP-Protocol-Version and the session id; never the downstream Authorization by default', async () => {
    const session = await rpc.initialize(gw.mcpUrl('secret'), '2025-11-25', { authorization: 'Bearer downstream' });
    const answer = await session.request(call(1, 'headers'));
    const seen = JSON.parse(textOf(answer.json.result)) as Record<string, string | undefined>;
    expect(seen['x-api-key']).toBe('k-123');
    expect(seen.authorization).toBeUndefined();
    expect(seen['mcp-protocol-version']).toBe('2025-11-25');
    expect(seen['mcp-session-id']).toMatch(/^session-\d+$/);
    const upstreamSession = seen['mcp-session-id'];
    expect(await session.delete()).toBe(200);
    await expect.poll(() => headers.seen.some((s) => s.method === 'DELETE' && s.headers['mcp-session-id'] === upstreamSession)).toBe(true);
  });

  it('keeps configured header values out of error data', async () => {
    const session = await rpc.initialize(gw.mcpUrl('secret'));
    const failed = await session.request(call(2, 'fail500'));
    expect(failed.json.error).toBeDefined();
    expect(failed.text).not.toContain('k-123');
    await session.delete();
  });

  it('forwards the downstream Authorization with forwardAuthorization (it wins over the configured one)', async () => {
    const withToken = await rpc.initialize(gw.mcpUrl('forward'), '2025-11-25', { authorization: 'Bearer downstream' });
    const seen = JSON.parse(textOf((await withToken.request(call(1, 'headers'))).json.result)) as Record<string, string>;
    expect(seen.authorization).toBe('Bearer downstream');
    await withToken.delete();

    const without = await rpc.initialize(gw.mcpUrl('forward'));
    const fallback = JSON.parse(textOf((await without.request(call(1, 'headers'))).json.result)) as Record<string, string>;
    expect(fallback.authorization).toBe('Bearer configured');
    await without.delete();
  });

  it('opens the upstream GET stream and carries a server->client request over it', async () => {
    const client = new Client({ name: 'sampler', version: '1' }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({ model: 'm', role: 'assistant', content: { type: 'text', text: 'from the client' } }));
    const gets = () => plain.seen.filter((s) => s.method === 'GET').length;
    const before = gets();
    await client.connect(new StreamableHTTPClientTransport(gw.mcpUrl('plain')));
    await expect.poll(gets).toBeGreaterThan(before);
    const result = await client.callTool({ name: 'sample', arguments: {} });
    expect(textOf(result)).toContain('from the client');
    await client.close();
  });
});
