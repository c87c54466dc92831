/**
 * Ending the spans of a downstream request (requests.ts; tracing on only): the CLIENT span of its
 * upstream call first, then its SERVER span, once, with how it ended (telemetry/tracing.ts).
 */
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonRpcErrorObject, JsonRpcErrorResponse, JsonRpcResponse } from '../jsonrpc/types.ts';
import { endSpan } from '../telemetry/tracing.ts';
import type { Pending } from './flavour.ts';

/** Ends a request's spans, once: the upstream call's first, then the request's. */
export function endSpans(rec: Pending, error: JsonRpcErrorObject | undefined, toolError = false): void {
  if (rec.upstreamSpan !== undefined) endSpan(rec.upstreamSpan, error, toolError);
  if (rec.span !== undefined) endSpan(rec.span, error, toolError);
  rec.upstreamSpan = rec.span = undefined;
}

/**
 * Ends them with the answer a member gave: its error, or a tools/call result that reports a failed
 * tool (`isError: true`: the call worked, the tool did not).
 */
export function endSpansWith(rec: Pending, response: JsonRpcResponse): void {
  const error = 'error' in response ? (response as JsonRpcErrorResponse).error : undefined;
  endSpans(rec, error, isObject(response.result) && response.result.isError === true);
}
