/**
 * The span helpers over a real SDK provider with an in-memory exporter: names and attributes after
 * the MCP semantic conventions, where the parent context is read from, and how failures end.
 */
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { remoteTarget, stdioTarget } from '../../support/gateway.ts';
import type { JsonRpcRequest } from '../../../src/jsonrpc/types.ts';
import {
  endSpan,
  eraOf,
  parentCarrier,
  startRequestSpan,
  startUpstreamSpan,
  traceContextOf,
  type RequestOrigin,
  type Tracing,
} from '../../../src/telemetry/tracing.ts';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracing: Tracing = { tracer: provider.getTracer('test'), propagator: new W3CTraceContextPropagator() };
const origin: RequestOrigin = { sessionId: 's-1', protocolVersion: '2025-06-18', transport: 'streamable-http' };

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';
const request = (method: string, params?: Record<string, unknown>): JsonRpcRequest => ({ jsonrpc: '2.0', id: 9, method, ...(params ? { params } : {}) });

afterEach(() => exporter.reset());

describe('startRequestSpan', () => {
  it('continues the client trace from the headers, named after the tool, with the MCP attributes', () => {
    const span = startRequestSpan(tracing, request('tools/call', { name: 'echo' }), { traceparent: `00-${TRACE}-${PARENT}-01` }, origin);
    endSpan(span);
    const [done] = exporter.getFinishedSpans();
    expect(done?.name).toBe('tools/call echo');
    expect(done?.kind).toBe(SpanKind.SERVER);
    expect(done?.spanContext().traceId).toBe(TRACE);
    expect(done?.parentSpanContext?.spanId).toBe(PARENT);
    expect(done?.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'jsonrpc.request.id': '9',
      'mcp.session.id': 's-1',
      'mcp.protocol.version': '2025-06-18',
      'switchboard.era': '2025',
      'switchboard.downstream.transport': 'streamable-http',
      'network.protocol.name': 'http',
    });
  });

  it('starts a new trace when there is no valid traceparent', () => {
    for (const carrier of [undefined, {}, { traceparent: 'garbage' }, { traceparent: `00-${'0'.repeat(32)}-${PARENT}-01` }]) {
      endSpan(startRequestSpan(tracing, request('ping'), carrier, origin));
    }
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(4);
    for (const span of spans) expect(span.parentSpanContext).toBeUndefined();
  });

  it('keeps resource URIs out of the span name (unbounded cardinality) but in an attribute', () => {
    endSpan(startRequestSpan(tracing, request('resources/read', { uri: 'file:///etc/hosts' }), undefined, origin));
    endSpan(startRequestSpan(tracing, request('prompts/get', { name: 'greet' }), undefined, origin));
    const [read, prompt] = exporter.getFinishedSpans();
    expect(read?.name).toBe('resources/read');
    expect(read?.attributes['mcp.resource.uri']).toBe('file:///etc/hosts');
    expect(prompt?.name).toBe('prompts/get greet');
    expect(prompt?.attributes['gen_ai.prompt.name']).toBe('greet');
  });
});

describe('parentCarrier', () => {
  it('prefers the request _meta (per message) over the HTTP headers (per POST)', () => {
    const headers = { traceparent: 'from-header' };
    const meta = { traceparent: 'from-meta' };
    expect(parentCarrier(headers, request('ping', { _meta: meta }))).toBe(meta);
    expect(parentCarrier(headers, request('ping', { _meta: { progressToken: 1 } }))).toBe(headers);
    expect(parentCarrier(undefined, request('ping'))).toBeUndefined();
  });
});

describe('startUpstreamSpan and traceContextOf', () => {
  it('makes a CLIENT child whose context is what goes upstream', () => {
    const server = startRequestSpan(tracing, request('tools/call', { name: 'x__echo' }), { traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'a=1' }, origin);
    const upstream = startUpstreamSpan(tracing, server, request('tools/call', { name: 'echo' }), remoteTarget('far', { type: 'http', url: 'https://mcp.example.com/mcp' }))!;
    const context = traceContextOf(tracing, upstream);
    expect(context).toEqual({ traceparent: `00-${TRACE}-${upstream.spanContext().spanId}-01`, tracestate: 'a=1' });
    endSpan(upstream);
    endSpan(server);
    const [up, down] = exporter.getFinishedSpans();
    expect(up?.kind).toBe(SpanKind.CLIENT);
    expect(up?.name).toBe('tools/call echo');
    expect(up?.parentSpanContext?.spanId).toBe(down?.spanContext().spanId);
    expect(up?.attributes).toMatchObject({ 'switchboard.target': 'far', 'server.address': 'mcp.example.com', 'server.port': 443, 'network.transport': 'tcp' });
  });

  it('names a stdio upstream as a pipe', () => {
    const server = startRequestSpan(tracing, request('ping'), undefined, origin);
    endSpan(startUpstreamSpan(tracing, server, request('ping'), stdioTarget('local', { command: 'node' }))!);
    expect(exporter.getFinishedSpans()[0]?.attributes).toMatchObject({ 'network.transport': 'pipe', 'switchboard.upstream.transport': 'stdio' });
  });
});

describe('a request the sampler drops', () => {
  it('records nothing, makes no upstream span, and passes the trace on with its sampled flag off', () => {
    // The client did not sample its trace (flags 00): the parent-based default follows it.
    const server = startRequestSpan(tracing, request('tools/call', { name: 'echo' }), { traceparent: `00-${TRACE}-${PARENT}-00` }, origin);
    expect(server.isRecording()).toBe(false);
    expect(startUpstreamSpan(tracing, server, request('tools/call', { name: 'echo' }), stdioTarget('local', { command: 'node' }))).toBeUndefined();
    expect(traceContextOf(tracing, server)?.traceparent).toBe(`00-${TRACE}-${server.spanContext().spanId}-00`);
    endSpan(server, { code: -32603, message: 'x' });
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});

describe('endSpan', () => {
  it('records the JSON-RPC code, and the GW code as error.type when the gateway raised it', () => {
    endSpan(startRequestSpan(tracing, request('ping'), undefined, origin), { code: -32603, message: 'Upstream timed out', data: { code: 'GW_UPSTREAM_TIMEOUT' } });
    endSpan(startRequestSpan(tracing, request('ping'), undefined, origin), { code: -32602, message: 'Unknown tool', data: { code: 'not ours' } });
    const [timeout, unknown] = exporter.getFinishedSpans();
    expect(timeout?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'Upstream timed out' });
    expect(timeout?.attributes).toMatchObject({ 'error.type': 'GW_UPSTREAM_TIMEOUT', 'switchboard.error.code': 'GW_UPSTREAM_TIMEOUT', 'rpc.response.status_code': '-32603' });
    expect(unknown?.attributes).toMatchObject({ 'error.type': '-32602', 'rpc.response.status_code': '-32602' });
    expect(unknown?.attributes['switchboard.error.code']).toBeUndefined();
  });
});

describe('eraOf', () => {
  it('tells the stateless revisions from the session ones', () => {
    expect(eraOf(undefined)).toBe('2025');
    expect(eraOf('2025-11-25')).toBe('2025');
    expect(eraOf('2026-07-28')).toBe('2026');
  });
});
