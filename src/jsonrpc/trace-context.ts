/**
 * W3C trace context (https://www.w3.org/TR/trace-context/) as it travels with one MCP request.
 *
 * MCP has no standard field for it yet; the OpenTelemetry MCP semantic conventions ("Context
 * propagation") say to carry it in the request's `params._meta` property bag under the W3C header
 * names, `traceparent` and `tracestate`. Over HTTP it also travels as those headers. This file is
 * the `_meta` side: transports without per-message headers (stdio, legacy SSE) write it there.
 */
import type { JsonObject, JsonRpcRequest } from './types.ts';
import { isObject } from './envelope.ts';

/** The two W3C fields; `tracestate` only when there is vendor state to pass on. */
export interface TraceContext {
  readonly traceparent: string;
  readonly tracestate?: string | undefined;
}

/**
 * Sets `params._meta.traceparent` (and `tracestate`) on a request, in place: every other `_meta`
 * key stays as it was, and a request without params or `_meta` gets them (MCP allows `_meta` on
 * every request's params). A stale `tracestate` from the client is dropped with its traceparent,
 * since it belonged to the client's span, not to ours.
 */
export function setTraceMeta(message: JsonRpcRequest, trace: TraceContext): void {
  const params: JsonObject = isObject(message.params) ? message.params : (message.params = {});
  const meta: JsonObject = isObject(params._meta) ? params._meta : (params._meta = {});
  meta.traceparent = trace.traceparent;
  if (trace.tracestate === undefined) delete meta.tracestate;
  else meta.tracestate = trace.tracestate;
}
