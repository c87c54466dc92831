/**
 * Very large upstream answers, checked at the envelope without being parsed whole.
 *
 * A pass-through session needs three things from an upstream response: that it is a JSON-RPC 2.0
 * response with exactly one of result/error, its top-level id (to find the request), and the text
 * to forward (wire-text.ts splices the client's id into it). For a 1 MiB answer `JSON.parse` was
 * the largest single cost and built a result nobody reads. So a line of `LARGE_LINE_CHARS` or more
 * of the plain form `{"jsonrpc":"2.0","id":<integer>,"result":{...}}` (keys in any order, any
 * whitespace) is scanned instead: the top-level keys are read, and the result's structure is
 * checked (strings closed, brackets balanced, values, commas and colons where the grammar puts
 * them; strings are skipped with `indexOf`, so their contents are not checked for control
 * characters or escape validity). Anything else (errors, requests, other or repeated keys, big or
 * fractional ids, escaped keys) returns undefined and takes the ordinary full parse.
 *
 * The message's `result` is a lazy property: code that reads it (aggregation, the gateway's own
 * requests) gets it parsed on first access, so nothing downstream can tell the difference.
 */
import type { JsonObject, JsonRpcResponse } from './types.ts';
import { keepRawSpan } from './wire-text.ts';

/** Lines at least this long take the scan; below it `JSON.parse` is cheap and large lists still parse once. */
export const LARGE_LINE_CHARS = 256 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const INTEGER_ID = /(?:0|[1-9]\d*)(?![\d.eE])/y;

const OBJECT = 0;
const ARRAY = 1;

/**
 * Reads `text` as a JSON-RPC success response without parsing its result. Returns the message
 * (with its text kept for forwarding) or undefined when the line is not of the plain form; the
 * caller then parses it as usual, which also reports anything malformed.
 */
export function scanLargeResponse(text: string): JsonRpcResponse | undefined {
  let i = skipSpaces(text, 0);
  if (text.charCodeAt(i) !== 0x7b /* { */) return undefined;
  let jsonrpc = false;
  let id: number | undefined;
  let idStart = 0;
  let idEnd = 0;
  let hasResult = false;
  i = skipSpaces(text, i + 1);
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const keyEnd = stringEnd(text, i);
    if (keyEnd === -1) return undefined;
    const key = text.slice(i + 1, keyEnd);
    i = skipSpaces(text, keyEnd + 1);
    if (text.charCodeAt(i) !== 0x3a /* : */) return undefined;
    i = skipSpaces(text, i + 1);
    if (key === 'jsonrpc' && !jsonrpc) {
      if (!text.startsWith('"2.0"', i)) return undefined;
      jsonrpc = true;
      i += 5;
    } else if (key === 'id' && id === undefined) {
      INTEGER_ID.lastIndex = i;
      const m = INTEGER_ID.exec(text);
      if (m === null) return undefined;
      const value = Number(m[0]);
      if (!Number.isSafeInteger(value)) return undefined;
      id = value;
      idStart = i;
      idEnd = i + m[0].length;
      i = idEnd;
    } else if (key === 'result' && !hasResult) {
      if (text.charCodeAt(i) !== 0x7b /* { */) return undefined;
      i = skipValue(text, i);
      if (i === -1) return undefined;
      hasResult = true;
    } else {
      return undefined;
    }
    i = skipSpaces(text, i);
    const c = text.charCodeAt(i);
    if (c === 0x2c /* , */) {
      i = skipSpaces(text, i + 1);
      continue;
    }
    if (c !== 0x7d /* } */) return undefined;
    break;
  }
  if (skipSpaces(text, i + 1) !== text.length || !jsonrpc || id === undefined || !hasResult) return undefined;
  const message = { jsonrpc: '2.0', id } as JsonRpcResponse;
  defineLazyResult(message, text);
  keepRawSpan(message, text, idStart, idEnd);
  return message;
}

function defineLazyResult(message: JsonRpcResponse, text: string): void {
  const settle = (value: JsonObject) => {
    Object.defineProperty(message, 'result', { value, enumerable: true, configurable: true, writable: true });
  };
  Object.defineProperty(message, 'result', {
    enumerable: true,
    configurable: true,
    get(): JsonObject {
      // The scan checked the structure; a string with a raw control character or a bad escape
      // is the one thing that can still fail here, and then the result reads as empty.
      let value: JsonObject;
      try {
        value = (JSON.parse(text) as { result: JsonObject }).result;
      } catch {
        value = {};
      }
      settle(value);
      return value;
    },
    set(value: JsonObject) {
      settle(value);
    },
  });
}

/**
 * Index just past the JSON value starting at `start` (after any spaces), or -1 when it is not one.
 * Iterative, so deep nesting cannot overflow the stack.
 */
export function skipValue(text: string, start: number): number {
  const stack: number[] = [];
  let i = start;
  for (;;) {
    // A value is expected at i.
    i = skipSpaces(text, i);
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const close = c === 0x7b ? 0x7d : 0x5d;
      i = skipSpaces(text, i + 1);
      if (text.charCodeAt(i) === close) {
        i++;
      } else {
        stack.push(c === 0x7b ? OBJECT : ARRAY);
        if (c === 0x7b) {
          i = skipKey(text, i);
          if (i === -1) return -1;
        }
        continue;
      }
    } else if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end === -1) return -1;
      i = end + 1;
    } else if (c === 0x74 /* t */ || c === 0x66 /* f */ || c === 0x6e /* n */) {
      const word = c === 0x74 ? 'true' : c === 0x66 ? 'false' : 'null';
      if (!text.startsWith(word, i)) return -1;
      i += word.length;
    } else {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (m === null) return -1;
      i += m[0].length;
    }
    // After a value: close containers or move to the next element.
    for (;;) {
      if (stack.length === 0) return i;
      i = skipSpaces(text, i);
      const d = text.charCodeAt(i);
      const top = stack[stack.length - 1];
      if (d === 0x2c /* , */) {
        i++;
        if (top === OBJECT) {
          i = skipKey(text, skipSpaces(text, i));
          if (i === -1) return -1;
        }
        break;
      }
      if ((d === 0x7d /* } */ && top === OBJECT) || (d === 0x5d /* ] */ && top === ARRAY)) {
        stack.pop();
        i++;
        continue;
      }
      return -1;
    }
  }
}

/** Skips `"key" :` at `i`; returns the index after the colon, or -1. */
function skipKey(text: string, i: number): number {
  if (text.charCodeAt(i) !== QUOTE) return -1;
  const end = stringEnd(text, i);
  if (end === -1) return -1;
  const j = skipSpaces(text, end + 1);
  return text.charCodeAt(j) === 0x3a /* : */ ? j + 1 : -1;
}

/** Index of the quote closing the string that opens at `start`, or -1 if it is not closed. */
export function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q === -1) return -1;
    // The quote is escaped when an odd number of backslashes precede it.
    let k = q - 1;
    while (text.charCodeAt(k) === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q;
    from = q + 1;
  }
}

function skipSpaces(text: string, from: number): number {
  let i = from;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}
