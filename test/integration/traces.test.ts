/**
 * OpenTelemetry traces against a real OTLP/HTTP receiver (test/support/otlp-receiver.ts): real SDK
 * clients that send a W3C `traceparent` header call tools through the gateway to a real stdio child
 * (the recorder, which shows what it received) and to a remote Streamable HTTP upstream (the HTTP
 * fixture, which records the headers it got); a WebSocket client sends its context in `_meta`.
 * The gateway is closed before the assertions, so its shutdown flush is what delivers the spans.
 * With tracing off, nothing is injected upstream and nothing is exported.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { startSseFixture, type SseFixture } from '../fixtures/sse-upstream.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';
import { recorderServer, textOf, type Recorded } from '../support/recorder.ts';
import { openWs, wsUrl } from '../support/ws-client.ts';

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

/** A client's own context: a fresh trace id and the id of the client span the gateway's will hang under. */
function clientContext(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

async function connect(url: URL, traceparent: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { traceparent, tracestate: 'client=1' } } });
  const client = new Client({ name: 'traces-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** What the recorder child received, as its `history` tool reports it. */
async function historyOf(client: Client): Promise<Recorded[]> {
  return JSON.parse(textOf(await client.callTool({ name: 'history' }))) as Recorded[];
}

const callsOf = (history: Recorded[], tool: string) => history.filter((m) => m.method === 'tools/call' && m.params?.name === tool);
const metaOf = (m: Recorded | undefined) => m?.params?._meta as Record<string, unknown> | undefined;

describe('traces on: spans reach a real OTLP/HTTP receiver with the right parents', () => {
  let receiver: OtlpReceiver;
  let fixture: HttpFixture;
  let sse: SseFixture;
  const stdio = clientContext();
  const legacy = clientContext();
  const aggregate = clientContext();
  let legacyMeta: Record<string, unknown> | null = null;
  const remote = clientContext();
  const ws = clientContext();
  let stdioSession: string | undefined;
  let remoteSession: string | undefined;
  let history: Recorded[] = [];
  let wsHistory: Recorded[] = [];
  let failures: string[] = [];

  beforeAll(async () => {
    [receiver, fixture, sse] = await Promise.all([startOtlpReceiver(), startHttpFixture(), startSseFixture()]);
    const gw: TestGateway = await startTestGateway({
      targets: { rec: recorderServer(), remote: { type: 'http', url: fixture.url }, legacy: { type: 'sse', url: sse.url } },
      // The endpoint from the config, the service name from the environment (config wins, env fills).
      telemetry: { traces: { enabled: true, endpoint: receiver.url, serviceName: undefined, sampleRatio: undefined } },
      env: { OTEL_SERVICE_NAME: 'switchboard-under-test' },
    });
    try {
      const a = await connect(gw.mcpUrl('rec'), stdio.traceparent);
      stdioSession = a.transport.sessionId;
      expect(textOf(await a.client.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toBe('hi');
      // The recorder answers an unknown tool with isError: true (a tool error, not a protocol error).
      expect((await a.client.callTool({ name: 'no-such-tool' })).isError).toBe(true);
      history = await historyOf(a.client);
      await a.client.close();

      const b = await connect(gw.mcpUrl('remote'), remote.traceparent);
      remoteSession = b.transport.sessionId;
      expect(textOf(await b.client.callTool({ name: 'echo', arguments: { text: 'far' } }))).toBe('far');
      failures = await Promise.all(
        ['fail500', 'unknown-remote-tool'].map((name) => b.client.callTool({ name }).then(() => 'answered', (err: Error) => err.message)),
      );
      await b.client.close();

      const c = await connect(gw.mcpUrl('legacy'), legacy.traceparent);
      legacyMeta = JSON.parse(textOf(await c.client.callTool({ name: 'meta' }))) as Record<string, unknown> | null;
      await c.client.close();

      // `/mcp` over the three servers: names are prefixed, the list is the gateway's own answer.
      const d = await connect(new URL('/mcp', gw.url), aggregate.traceparent);
      expect((await d.client.listTools()).tools.map((t) => t.name)).toContain('rec__echo');
      expect(textOf(await d.client.callTool({ name: 'rec__echo', arguments: { text: 'agg' } }))).toBe('agg');
      await d.client.close();

      const peer = await openWs(wsUrl(gw.url, '/servers/rec/ws'));
      peer.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ws', version: '1' } } });
      await peer.until(1);
      peer.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      peer.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'ws' }, _meta: { traceparent: ws.traceparent, other: 'kept' } } });
      await peer.until(2);
      peer.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'history' } });
      const answer = (await peer.until(3)).at(-1) as { result?: unknown };
      wsHistory = JSON.parse(textOf(answer.result)) as Recorded[];
      peer.socket.close();
    } finally {
      // The shutdown flush exports what the batch processor still holds.
      await gw.close();
    }
  });

  afterAll(async () => {
    await Promise.all([receiver?.close(), fixture?.close(), sse?.close()]);
  });

  const find = (traceId: string, kind: number, name: string): ReceivedSpan => {
    const span = receiver.spans.find((s) => s.traceId === traceId && s.kind === kind && s.name === name);
    expect(span, `${kind === SERVER ? 'server' : 'client'} span "${name}" in trace ${traceId}; got ${receiver.spans.map((s) => s.name).join(', ')}`).toBeDefined();
    return span!;
  };

  it('exports OTLP/HTTP JSON the receiver reads, with the service name from OTEL_SERVICE_NAME', () => {
    expect(receiver.refused).toEqual([]);
    expect(receiver.spans.length).toBeGreaterThan(0);
    for (const span of receiver.spans) {
      expect(span.resource['service.name']).toBe('switchboard-under-test');
      expect(span.resource['service.version']).toMatch(/^\d+\.\d+\.\d+/);
    }
  });

  it('stdio: the server span continues the client trace and the child gets the upstream span in _meta', () => {
    const server = find(stdio.traceId, SERVER, 'tools/call echo');
    expect(server.parentSpanId).toBe(stdio.spanId);
    expect(server.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'gen_ai.operation.name': 'execute_tool',
      'mcp.session.id': stdioSession,
      'mcp.protocol.version': '2025-11-25',
      'switchboard.target': 'rec',
      'switchboard.era': '2025',
      'switchboard.downstream.transport': 'streamable-http',
      'jsonrpc.protocol.version': '2.0',
    });
    expect(server.status.code).not.toBe(ERROR);

    const upstream = find(stdio.traceId, CLIENT, 'tools/call echo');
    expect(upstream.parentSpanId).toBe(server.spanId);
    expect(upstream.attributes).toMatchObject({ 'switchboard.target': 'rec', 'switchboard.upstream.transport': 'stdio', 'network.transport': 'pipe' });

    const [call] = callsOf(history, 'echo');
    expect(metaOf(call)?.traceparent).toBe(`00-${stdio.traceId}-${upstream.spanId}-01`);
    // The client's tracestate travelled with its context into the gateway's spans and on upstream.
    expect(metaOf(call)?.tracestate).toBe('client=1');
  });

  it('a tool that reports isError gets an error span (error.type tool_error)', () => {
    const server = find(stdio.traceId, SERVER, 'tools/call no-such-tool');
    expect(server.status.code).toBe(ERROR);
    expect(server.attributes['error.type']).toBe('tool_error');
  });

  it('Streamable HTTP: the upstream got the upstream span as a traceparent header', () => {
    const server = find(remote.traceId, SERVER, 'tools/call echo');
    expect(server.parentSpanId).toBe(remote.spanId);
    expect(server.attributes).toMatchObject({ 'mcp.session.id': remoteSession, 'switchboard.target': 'remote' });
    const upstream = find(remote.traceId, CLIENT, 'tools/call echo');
    expect(upstream.parentSpanId).toBe(server.spanId);
    expect(upstream.attributes).toMatchObject({ 'switchboard.upstream.transport': 'http', 'network.transport': 'tcp', 'server.address': '127.0.0.1' });

    const post = fixture.seen.find((r) => (r.body as Recorded | undefined)?.method === 'tools/call' && (r.body as Recorded).params?.name === 'echo');
    expect(post?.headers.traceparent).toBe(`00-${remote.traceId}-${upstream.spanId}-01`);
    expect(post?.headers.tracestate).toBe('client=1');
    // Over HTTP the context goes in the header only: the body is the client's.
    expect(metaOf(post?.body as Recorded)?.traceparent).toBeUndefined();
  });

  it('legacy SSE upstream: the context rides in the request _meta (its POST only acknowledges)', () => {
    const upstream = find(legacy.traceId, CLIENT, 'tools/call meta');
    expect(upstream.attributes).toMatchObject({ 'switchboard.upstream.transport': 'sse', 'network.transport': 'tcp' });
    expect(legacyMeta).toMatchObject({ traceparent: `00-${legacy.traceId}-${upstream.spanId}-01`, tracestate: 'client=1' });
  });

  it('aggregate: the server span has the name the client called, the upstream span the server\'s own', () => {
    const server = find(aggregate.traceId, SERVER, 'tools/call rec__echo');
    expect(server.attributes).toMatchObject({ 'gen_ai.tool.name': 'rec__echo', 'switchboard.target': 'rec' });
    const upstream = find(aggregate.traceId, CLIENT, 'tools/call echo');
    expect(upstream.parentSpanId).toBe(server.spanId);
    expect(upstream.attributes['gen_ai.tool.name']).toBe('echo');
    // The merged list is answered by the gateway: a server span, no upstream span of its own.
    const list = find(aggregate.traceId, SERVER, 'tools/list');
    expect(list.status.code).not.toBe(ERROR);
    expect(receiver.spans.filter((s) => s.traceId === aggregate.traceId && s.parentSpanId === list.spanId)).toEqual([]);
  });

  it('failures end both spans with the error status, the JSON-RPC code and the gateway code', () => {
    expect(failures.every((f) => f !== 'answered')).toBe(true);
    for (const kind of [SERVER, CLIENT]) {
      const http500 = find(remote.traceId, kind, 'tools/call fail500');
      expect(http500.status.code).toBe(ERROR);
      expect(http500.attributes).toMatchObject({
        'rpc.response.status_code': '-32603',
        'error.type': 'GW_UPSTREAM_HTTP_ERROR',
        'switchboard.error.code': 'GW_UPSTREAM_HTTP_ERROR',
      });
      const unknown = find(remote.traceId, kind, 'tools/call unknown-remote-tool');
      expect(unknown.status.code).toBe(ERROR);
      expect(unknown.attributes).toMatchObject({ 'rpc.response.status_code': '-32602', 'error.type': '-32602' });
    }
  });

  it('WebSocket: the context comes from the request _meta, and the child sees the gateway span there, other keys kept', () => {
    const server = find(ws.traceId, SERVER, 'tools/call echo');
    expect(server.parentSpanId).toBe(ws.spanId);
    expect(server.attributes['switchboard.downstream.transport']).toBe('websocket');
    const upstream = find(ws.traceId, CLIENT, 'tools/call echo');
    expect(upstream.parentSpanId).toBe(server.spanId);
    const meta = metaOf(callsOf(wsHistory, 'echo')[0]);
    expect(meta).toMatchObject({ traceparent: `00-${ws.traceId}-${upstream.spanId}-01`, other: 'kept' });
    // The client's context had no tracestate: none is made up.
    expect(meta?.tracestate).toBeUndefined();
  });
});

describe('traces off', () => {
  let receiver: OtlpReceiver;
  let fixture: HttpFixture;
  let history: Recorded[] = [];

  beforeAll(async () => {
    [receiver, fixture] = await Promise.all([startOtlpReceiver(), startHttpFixture()]);
    // The environment names a collector, but the config says no: the config wins.
    const gw = await startTestGateway({
      targets: { rec: recorderServer(), remote: { type: 'http', url: fixture.url } },
      telemetry: { traces: { enabled: false, endpoint: undefined, serviceName: undefined, sampleRatio: undefined } },
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.base },
    });
    try {
      const { traceparent } = clientContext();
      const a = await connect(gw.mcpUrl('rec'), traceparent);
      await a.client.callTool({ name: 'echo', arguments: { text: 'hi' } });
      history = await historyOf(a.client);
      await a.client.close();
      const b = await connect(gw.mcpUrl('remote'), traceparent);
      await b.client.callTool({ name: 'echo', arguments: { text: 'far' } });
      await b.client.close();
    } finally {
      await gw.close();
    }
  });

  afterAll(async () => {
    await Promise.all([receiver?.close(), fixture?.close()]);
  });

  it('injects no trace context upstream and exports nothing', () => {
    const [call] = callsOf(history, 'echo');
    expect(call).toBeDefined();
    expect(metaOf(call)?.traceparent).toBeUndefined();
    const posts = fixture.seen.filter((r) => r.method === 'POST');
    expect(posts.length).toBeGreaterThan(0);
    for (const post of posts) expect(post.headers.traceparent).toBeUndefined();
    expect(receiver.spans).toEqual([]);
    expect(receiver.refused).toEqual([]);
  });
});
