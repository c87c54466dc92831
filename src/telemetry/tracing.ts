/**
 * Traces of what the gateway serves, on `@opentelemetry/api` alone: the SDK (provider, sampler,
 * exporter) is set up by the composition root (telemetry/sdk.ts, called by main.ts) and handed
 * down as a `Tracing`. With tracing off there is no `Tracing` at all: callers test for undefined
 * and make no span, context or attribute object.
 *
 * Shapes follow the OpenTelemetry semantic conventions for MCP (status: development; gen-ai/mcp):
 * a SERVER span per downstream request named `{mcp.method.name} {target}` (the tool or prompt
 * name when there is one; never a resource URI, whose cardinality is unbounded), a CLIENT child per
 * upstream call, `mcp.*`, `jsonrpc.*` and `gen_ai.*` attributes, and on failure `error.type` and
 * `rpc.response.status_code` with the JSON-RPC code. Contexts are passed explicitly (no context
 * manager, no global provider), so two gateways in one process keep their traces apart.
 */
import {
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import type { TargetConfig } from '../config/types.ts';
import { eraOf } from '../jsonrpc/versions.ts';
import { idText, isObject } from '../jsonrpc/envelope.ts';
import { namedBy, subjectOf } from '../jsonrpc/methods.ts';
import type { TraceContext } from '../jsonrpc/trace-context.ts';
import type { JsonRpcErrorObject, JsonRpcRequest, RequestId } from '../jsonrpc/types.ts';

export type { Span } from '@opentelemetry/api';

/** One gateway's tracer and the W3C propagator it reads and writes trace context with. */
export interface Tracing {
  readonly tracer: Tracer;
  readonly propagator: TextMapPropagator;
}

/** The downstream wire a session came in on. */
import type { DownstreamTransport } from '../log/observer.ts';
export type { DownstreamTransport } from '../log/observer.ts';

/** What the server span says of the session a request belongs to. */
export interface RequestOrigin {
  /** Undefined for a request that belongs to no session of the client's (2026). */
  readonly sessionId: string | undefined;
  /** The negotiated revision; undefined before initialize. */
  readonly protocolVersion: string | undefined;
  readonly transport: DownstreamTransport | undefined;
}

/**
 * What a span says of a request whose revision is its own (a 2026 request, StreamOptions
 * .protocolVersion): that revision, and no session id (the session serving it upstream is the
 * gateway's, not the client's). One object per revision in `cache` (per session), made on first use.
 */
export function ownOrigin(session: RequestOrigin, version: string, cache: Map<string, RequestOrigin>): RequestOrigin {
  let origin = cache.get(version);
  if (origin === undefined) cache.set(version, (origin = Object.freeze({ sessionId: undefined, protocolVersion: version, transport: session.transport })));
  return origin;
}

/** Where a request's parent context may be: HTTP headers (lower-case names) or `params._meta`. */
export type TraceCarrier = Readonly<Record<string, unknown>>;

/** Attribute names (semantic conventions, and ours under `switchboard.`). */
export const ATTR = {
  method: 'mcp.method.name',
  sessionId: 'mcp.session.id',
  protocolVersion: 'mcp.protocol.version',
  resourceUri: 'mcp.resource.uri',
  requestId: 'jsonrpc.request.id',
  jsonrpcVersion: 'jsonrpc.protocol.version',
  toolName: 'gen_ai.tool.name',
  promptName: 'gen_ai.prompt.name',
  operationName: 'gen_ai.operation.name',
  errorType: 'error.type',
  statusCode: 'rpc.response.status_code',
  networkTransport: 'network.transport',
  networkProtocol: 'network.protocol.name',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  target: 'switchboard.target',
  era: 'switchboard.era',
  downstream: 'switchboard.downstream.transport',
  upstream: 'switchboard.upstream.transport',
  gatewayCode: 'switchboard.error.code',
} as const;

const PROTOCOL: Readonly<Record<DownstreamTransport, string>> = { 'streamable-http': 'http', websocket: 'websocket', sse: 'http' };

/** `2026` for the stateless revisions (2026-07-28 on), `2025` for the initialize-and-session ones. */
export { eraOf };

/**
 * Where a request's parent context is read from: its own `params._meta` when that names a
 * `traceparent` (per message: what MCP instrumentations write, and the only place on WebSocket
 * and legacy SSE), else the HTTP request's headers, which cover every message of a POST.
 */
export function parentCarrier(headers: TraceCarrier | undefined, request: JsonRpcRequest): TraceCarrier | undefined {
  const meta = request.params?._meta;
  if (isObject(meta) && meta.traceparent !== undefined) return meta;
  return headers;
}

/** `{method} {target}`, the target being the tool or prompt name: low cardinality, unlike a URI. */
function spanName(request: JsonRpcRequest): string {
  const name = subjectOf(request.method)?.field === 'name' ? namedBy(request.method, request.params) : undefined;
  return name === undefined ? request.method : `${request.method} ${name}`;
}

/** What the request names (jsonrpc/methods.ts): its tool, prompt or resource. */
function nameAttributes(request: JsonRpcRequest, attributes: Attributes): Attributes {
  const kind = subjectOf(request.method)?.kind;
  const name = kind === undefined ? undefined : namedBy(request.method, request.params);
  if (name === undefined) return attributes;
  if (kind === 'tool') {
    attributes[ATTR.toolName] = name;
    attributes[ATTR.operationName] = 'execute_tool';
  } else if (kind === 'prompt') {
    attributes[ATTR.promptName] = name;
  } else {
    attributes[ATTR.resourceUri] = name;
  }
  return attributes;
}

/*
 * Attributes are set once the span exists, and only on a span that records: a sampled-out request
 * then costs no attribute object. The samplers offered (parent-based, trace-id ratio, on, off)
 * decide without reading attributes, so nothing is lost by not passing them to startSpan.
 */

/**
 * The SERVER span of one downstream request, child of the client's context when `carrier` holds a
 * valid `traceparent` (a new trace otherwise). Call before anything rewrites the request's names.
 */
export function startRequestSpan(tracing: Tracing, request: JsonRpcRequest, carrier: TraceCarrier | undefined, origin: RequestOrigin): Span {
  const parent = carrier === undefined ? ROOT_CONTEXT : tracing.propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
  const span = tracing.tracer.startSpan(spanName(request), { kind: SpanKind.SERVER }, parent);
  if (!span.isRecording()) return span;
  const attributes: Attributes = {
    [ATTR.method]: request.method,
    [ATTR.requestId]: idText(request.id),
    [ATTR.jsonrpcVersion]: '2.0',
    [ATTR.era]: eraOf(origin.protocolVersion),
  };
  if (origin.sessionId !== undefined) attributes[ATTR.sessionId] = origin.sessionId;
  if (origin.protocolVersion !== undefined) attributes[ATTR.protocolVersion] = origin.protocolVersion;
  if (origin.transport !== undefined) {
    attributes[ATTR.downstream] = origin.transport;
    attributes[ATTR.networkProtocol] = PROTOCOL[origin.transport];
  }
  span.setAttributes(nameAttributes(request, attributes));
  return span;
}

/** Attributes every call to one target shares, made once per target object. */
const targetAttributes = new WeakMap<TargetConfig, Attributes>();

function attributesOf(target: TargetConfig): Attributes {
  let attributes = targetAttributes.get(target);
  if (attributes !== undefined) return attributes;
  attributes = { [ATTR.target]: target.name, [ATTR.upstream]: target.type };
  if (target.type === 'stdio') attributes[ATTR.networkTransport] = 'pipe';
  else {
    const url = new URL(target.url);
    attributes[ATTR.networkTransport] = 'tcp';
    attributes[ATTR.networkProtocol] = 'http';
    attributes[ATTR.serverAddress] = url.hostname;
    attributes[ATTR.serverPort] = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  }
  targetAttributes.set(target, Object.freeze(attributes));
  return attributes;
}

/**
 * The CLIENT span of a request forwarded to `target`, child of its server span; `request` as it
 * goes upstream (names already rewritten for the target). Undefined when the server span does not
 * record: every sampler offered would drop its child too (same trace id, parent not sampled), so
 * none is made and the server span's own context goes upstream, its sampled flag off.
 */
export function startUpstreamSpan(tracing: Tracing, parent: Span, request: JsonRpcRequest, target: TargetConfig): Span | undefined {
  if (!parent.isRecording()) return undefined;
  const span = tracing.tracer.startSpan(spanName(request), { kind: SpanKind.CLIENT }, trace.setSpan(ROOT_CONTEXT, parent));
  if (span.isRecording()) span.setAttributes(nameAttributes(request, { ...attributesOf(target), [ATTR.method]: request.method, [ATTR.jsonrpcVersion]: '2.0' }));
  return span;
}

/** The W3C fields naming `span` as the parent, for the upstream; undefined if it has no valid context. */
export function traceContextOf(tracing: Tracing, span: Span): TraceContext | undefined {
  const carrier: { traceparent?: string; tracestate?: string } = {};
  tracing.propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
  if (carrier.traceparent === undefined) return undefined;
  return carrier.tracestate === undefined ? { traceparent: carrier.traceparent } : { traceparent: carrier.traceparent, tracestate: carrier.tracestate };
}

/** Names the target that serves a request (known once it is routed). */
export function setSpanTarget(span: Span, target: string): void {
  span.setAttribute(ATTR.target, target);
}

/**
 * Ends a span. `error`: the JSON-RPC error the request ended with (its `data.code` names the
 * gateway's GW_* cause when there is one); `toolError`: a tools/call result with `isError: true`
 * (semconv: `error.type` `tool_error`).
 */
export function endSpan(span: Span, error?: JsonRpcErrorObject, toolError = false): void {
  if (error !== undefined) {
    const code = String(error.code);
    const data = error.data as { code?: unknown } | undefined;
    const gateway = typeof data?.code === 'string' && data.code.startsWith('GW_') ? data.code : undefined;
    span.setAttribute(ATTR.statusCode, code);
    span.setAttribute(ATTR.errorType, gateway ?? code);
    if (gateway !== undefined) span.setAttribute(ATTR.gatewayCode, gateway);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  } else if (toolError) {
    span.setAttribute(ATTR.errorType, 'tool_error');
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}
