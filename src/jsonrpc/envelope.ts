/**
 * Envelope guards and the one place where peer text becomes messages.
 *
 * No zod here: this is the forwarding hot path. Each guard checks only what routing needs; every
 * other field is left exactly as the peer sent it.
 */
import { JsonTooDeepError, MAX_JSON_DEPTH, nestsDeeperThan } from './depth.ts';
import type {
  JsonObject,
  JsonRpcErrorResponse,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  RawJsonId,
  RequestId,
} from './types.ts';

// JSON.rawJSON / JSON.isRawJSON arrived in V8 11.4 (Node >= 21); typed here because lib.es2023 lacks them.
interface JsonWithRaw {
  rawJSON(text: string): RawJsonId;
  isRawJSON(value: unknown): value is RawJsonId;
  parse(text: string, reviver: (this: unknown, key: string, value: unknown, context: { source?: string }) => unknown): unknown;
}
const JSONX = JSON as unknown as JsonWithRaw;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A valid MCP request id: a string, a finite number, or a raw numeric id. Never null. */
export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) || JSONX.isRawJSON(value);
}

/**
 * The request a `notifications/cancelled` withdraws, or undefined when its params carry no usable
 * id (absent, null, an object...). Such a notification is dropped by its receiver: notifications
 * get no answer, so a malformed one can only be logged (2025-11-25 basic/utilities/cancellation).
 */
export function cancelledRequestId(params: unknown): RequestId | undefined {
  if (!isObject(params)) return undefined;
  return isRequestId(params.requestId) ? params.requestId : undefined;
}

export function isRequest(msg: JsonRpcMessage): msg is JsonRpcRequest {
  return typeof (msg as JsonRpcRequest).method === 'string' && (msg as JsonRpcRequest).id !== undefined;
}

export function isNotification(msg: JsonRpcMessage): msg is JsonRpcNotification {
  return typeof (msg as JsonRpcNotification).method === 'string' && (msg as { id?: unknown }).id === undefined;
}

export function isResponse(msg: JsonRpcMessage): msg is JsonRpcResponse {
  return (msg as { method?: unknown }).method === undefined;
}

export function isErrorResponse(msg: JsonRpcMessage): msg is JsonRpcErrorResponse {
  return (msg as JsonRpcErrorResponse).error !== undefined && isResponse(msg);
}

/** Why `toMessage` refused a value; the caller maps it to -32600. */
export type EnvelopeProblem = string;

/**
 * Checks that a parsed value is a JSON-RPC 2.0 message the gateway can route. Returns the message
 * (same object, not copied) or a sentence naming what is wrong.
 */
export function toMessage(value: unknown): JsonRpcMessage | EnvelopeProblem {
  if (!isObject(value)) return 'a JSON-RPC message must be a JSON object';
  if (value.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  const { id, method } = value;
  if (method !== undefined) {
    if (typeof method !== 'string' || method.length === 0) return 'method must be a non-empty string';
    if (value.params !== undefined && !isObject(value.params)) return 'params must be an object';
    if (id !== undefined && !isRequestId(id)) return 'id must be a string or an integer (MCP forbids null)';
    return value as unknown as JsonRpcMessage;
  }
  if (id === undefined) return 'a message needs a method (request or notification) or an id (response)';
  if (id !== null && !isRequestId(id)) return 'id must be a string or an integer';
  const hasResult = value.result !== undefined;
  const hasError = value.error !== undefined;
  if (hasResult === hasError) return 'a response needs exactly one of result and error';
  if (hasError) {
    const err = value.error;
    if (!isObject(err) || typeof err.code !== 'number' || typeof err.message !== 'string') {
      return 'error must be an object with a numeric code and a string message';
    }
  } else if (!isObject(value.result)) {
    return 'result must be an object';
  }
  return value as unknown as JsonRpcMessage;
}

/**
 * Parses peer text into a value, keeping the exact source text of a top-level numeric `id` that a
 * double cannot represent (big integers, or forms like `1e3`). The reviver pass runs only in that
 * rare case, so ordinary messages are parsed exactly once.
 *
 * @throws SyntaxError on malformed JSON, JsonTooDeepError past MAX_JSON_DEPTH levels (depth.ts).
 */
export function parseJson(text: string): unknown {
  if (text.length > 2 * MAX_JSON_DEPTH && nestsDeeperThan(text, MAX_JSON_DEPTH)) throw new JsonTooDeepError();
  const value: unknown = JSON.parse(text);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (needsRawId(value[i], text)) return reparseKeepingIds(text);
    }
  } else if (needsRawId(value, text)) {
    return reparseKeepingIds(text);
  }
  return value;
}

/** Keys whose numeric value is an id the gateway hands back: kept as the exact text sent. */
const ID_KEYS = new Set(['id', 'requestId', 'progressToken']);

/**
 * A numeric id is kept as its own text when writing the number back would change it: past 2^53
 * (precision), or written in a form that is not the canonical one (`-0`, `1.0`, `1E2`). That holds
 * for a message's id, a cancel's requestId and a progress token alike.
 */
function needsRawId(value: unknown, text: string): boolean {
  if (!isObject(value)) return false;
  if (typeof value.id === 'number' && isInexact(value.id, '"id"', text)) return true;
  const params = value.params;
  if (!isObject(params)) return false;
  if (typeof params.requestId === 'number' && isInexact(params.requestId, '"requestId"', text)) return true;
  const token = isObject(params._meta) ? params._meta.progressToken : params.progressToken;
  return typeof token === 'number' && isInexact(token, '"progressToken"', text);
}

function isInexact(value: number, quotedKey: string, text: string): boolean {
  return !Number.isSafeInteger(value) || hasNonCanonicalNumber(quotedKey, text);
}

/**
 * Is any `"<key>": <number>` in `text` written other than as `String(number)` would write it?
 * Which occurrence is the one that matters is left to the reparse; any other kept raw serialises
 * the same.
 */
function hasNonCanonicalNumber(quotedKey: string, text: string): boolean {
  for (let at = text.indexOf(quotedKey); at !== -1; at = text.indexOf(quotedKey, at + quotedKey.length)) {
    let i = at + quotedKey.length;
    while (isJsonSpace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== 0x3a) continue; // not a key
    i++;
    while (isJsonSpace(text.charCodeAt(i))) i++;
    const start = i;
    // Digits alone, no leading zero, at most 15 of them: exact and written as String() writes it.
    // No slice and no Number/String round trip for the ids of ordinary messages (issue 34).
    let plain = true;
    for (let c = text.charCodeAt(i); isNumberChar(c); c = text.charCodeAt(++i)) if (c < 0x30 || c > 0x39) plain = false;
    if (i === start) continue; // not a number
    if (plain && i - start <= 15 && (i - start === 1 || text.charCodeAt(start) !== 0x30)) continue;
    const literal = text.slice(start, i);
    if (String(Number(literal)) !== literal) return true;
  }
  return false;
}

function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Digits, sign, decimal point and exponent. */
function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

function reparseKeepingIds(text: string): unknown {
  // `context.source` is the exact text of a primitive (JSON.parse source text access, V8 >= 11.4).
  return JSONX.parse(text, function (this: unknown, key, value, context) {
    if (typeof value === 'number' && ID_KEYS.has(key) && context.source !== undefined && String(value) !== context.source) {
      // Only the envelope's ids matter, but a nested one kept raw serialises identically anyway.
      return JSONX.rawJSON(context.source);
    }
    return value;
  });
}

/**
 * A stable map key for an id that keeps strings and numbers apart ("1" and 1 are different ids).
 */
export function idKey(id: RequestId): string {
  if (typeof id === 'string') return 's' + id;
  if (typeof id === 'number') return 'n' + id;
  return 'n' + id.rawJSON;
}

/**
 * The id as plain text: a string as it is, a number (or a raw big integer) as the digits the peer
 * sent. For span attributes, log lines and ids derived from it; the id as JSON is `JSON.stringify`,
 * which writes a raw id's own text too.
 */
export function idText(id: RequestId): string {
  return typeof id === 'object' ? id.rawJSON : String(id);
}
