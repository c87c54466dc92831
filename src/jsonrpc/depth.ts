/**
 * How deep a message may nest. Nothing in MCP nests deep (a JSON Schema of tool input, the deepest
 * thing in practice, is a few tens of levels), while a message nested thousands of levels deep makes
 * every recursive walk of it (serialisation, cloning) overflow the stack. Messages are checked where
 * they come in, on every downstream and from every upstream (`parseJson`), so nothing deeper ever
 * reaches the code that walks them.
 */

/** 128 levels: many times any real schema's depth, far below what overflows a stack. */
export const MAX_JSON_DEPTH = 128;

/** Thrown by `parseJson` for a message nested deeper than `MAX_JSON_DEPTH`. */
export class JsonTooDeepError extends Error {
  readonly limit = MAX_JSON_DEPTH;
  constructor() {
    super(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    this.name = 'JsonTooDeepError';
  }
}

/**
 * Does `text` open more than `limit` objects or arrays at once? One pass, skipping strings with
 * `indexOf` (most of a large message is string content). Malformed text is left to JSON.parse.
 * A text shorter than 2 x limit cannot nest that deep: callers skip the scan for those.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  // Nesting never goes deeper than the text has openers, and most messages have a handful (a
  // 2026 request's envelope alone makes it long enough to be scanned): counted natively first.
  if (fewOpeners(text, limit)) return false;
  let depth = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = closingQuote(text, i);
      if (i === -1) return false;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/** True when `text` has at most `limit` `{` and `[` in all (inside strings too: an upper bound). */
function fewOpeners(text: string, limit: number): boolean {
  let count = 0;
  for (let at = text.indexOf('{'); at !== -1; at = text.indexOf('{', at + 1)) if (++count > limit) return false;
  for (let at = text.indexOf('['); at !== -1; at = text.indexOf('[', at + 1)) if (++count > limit) return false;
  return true;
}

/** Index of the quote that closes the string opened at `open`, or -1. */
function closingQuote(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at === -1) return -1;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === 0x5c) backslashes++;
    if ((backslashes & 1) === 0) return at;
  }
}
