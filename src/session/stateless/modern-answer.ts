/**
 * A held session's answer in the 2026-07-28 shape (relay.ts writes it): `resultType` on results,
 * cache hints on cacheable ones (SEP-2549), the 2026 error codes and the HTTP status an error
 * answering the whole response carries (exchange.ts). Pure: objects in, text out, serialized once.
 */
import { JsonRpcCode } from '../../jsonrpc/codes.ts';
import { isObject } from '../../jsonrpc/envelope.ts';
import { isCacheable } from '../../jsonrpc/methods.ts';
import type { JsonObject, RequestId } from '../../jsonrpc/types.ts';
import { hasRawText, toWireText } from '../../jsonrpc/wire-text.ts';
import { statusOfError } from './exchange.ts';

const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** True when a log line of `level` passes a request that asked for `wanted` (undefined: none). */
export function passesLogLevel(level: unknown, wanted: string | undefined): boolean {
  if (wanted === undefined) return false;
  const at = LEVELS.indexOf(typeof level === 'string' ? level : '');
  const min = LEVELS.indexOf(wanted);
  return at >= (min < 0 ? 0 : min);
}

/**
 * The start of a large answer's own line (wire-text.ts keeps it, the client's id already spliced
 * in): `{"jsonrpc":"2.0","id":<id>,"result":{` (jsonrpc before or after the id, any spacing). Only
 * `jsonrpc` and `id` may come before `result`, so nothing earlier can hold a look-alike of these keys.
 */
const PLAIN_HEAD = /^\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(?:"(?:[^"\\]|\\.)*"|[-+.\deE]+)\s*,\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"result"\s*:\s*\{/;

/**
 * A large plain result (one the reader kept the line of) in the 2026 shape without serializing it
 * again: `resultType` spliced into its text. Undefined when the text is not of that plain form.
 */
export function spliceComplete(body: string): string | undefined {
  const head = PLAIN_HEAD.exec(body);
  if (head === null || body.includes('"resultType"')) return undefined;
  const rest = body.slice(head[0].length);
  const empty = /^\s*\}/.test(rest);
  return `${head[0]}"resultType":"complete"${empty ? '' : ','}${rest}`;
}

/** A host's answer in the 2026 shape, for the client's `id`; with the HTTP status if it is the whole response. */
export function toModernAnswer(message: JsonObject, id: RequestId, method: string, uri?: string): { status: number; body: string } {
  message.id = id as JsonObject[string];
  const error = message.error;
  if (isObject(error)) {
    // SEP-2164 (2026): an unknown resource is -32602, not the 2025 -32002, and names the URI.
    if (error.code === JsonRpcCode.ResourceNotFound) error.code = JsonRpcCode.InvalidParams;
    const data = isObject(error.data) ? error.data : {};
    if (uri !== undefined && error.code === JsonRpcCode.InvalidParams && data.uri === undefined) error.data = { ...data, uri };
    return { status: statusOfError(error.code), body: JSON.stringify(message) };
  }
  const result = message.result;
  if (isObject(result)) {
    if (result.resultType === undefined) result.resultType = 'complete';
    // Results a client may cache (SEP-2549): the gateway says for how long, and only for this caller.
    if (isCacheable(method)) {
      if (typeof result.ttlMs !== 'number') result.ttlMs = 0;
      // The gateway's answers depend on who asks (policy, upstream identity): never shared caches.
      result.cacheScope = 'private';
    }
  }
  return { status: 200, body: JSON.stringify(message) };
}

/** The answer's text: a large plain result's own line with `resultType` spliced in, else shaped and serialized once. */
export function answerOf(message: JsonObject, id: RequestId, method: string, uri: string | undefined): { status: number; body: string } {
  if (hasRawText(message) && message.id === id && isObject(message.result) && !isCacheable(method)) {
    const body = spliceComplete(toWireText(message as never));
    if (body !== undefined) return { status: 200, body };
  }
  return toModernAnswer(message, id, method, uri);
}
