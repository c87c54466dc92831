/**
 * Forwarding an upstream answer without serialising it again.
 *
 * A response is parsed once (to check its envelope and find its request), and normally
 * re-serialised after its id is restored. That second pass costs about as much as the parse and
 * another string of the answer's size. Instead the reader keeps the line it parsed, with the
 * position of the top-level id, and `toWireText` splices the restored id into it.
 *
 * Only the top-level id may change between `keepRawText` and `toWireText`: code that rewrites
 * anything else in a response (names, results) must call `dropRawText` first, or serialise it itself.
 */
import type { JsonRpcMessage, RequestId } from './types.ts';

/**
 * Below this many characters a response is simply re-serialised. Measured (issue 34, third round):
 * keeping the line (the id scan and the hidden property) costs 0.3-1 µs whatever the size, about
 * what JSON.stringify takes for a line of 200-500 characters; from 500 on, the splice wins
 * (1 KB: 1-2 µs against 3-5; 2 KB: 0.4-1.2 against 5-6).
 */
export const RAW_TEXT_MIN_CHARS = 512;

const RAW = Symbol('switchboard.rawText');

interface RawText {
  readonly text: string;
  /** Span of the top-level id's value in `text`. */
  readonly start: number;
  readonly end: number;
}

type WithRaw = { [RAW]?: RawText };

/** How far into the line a leading top-level id is looked for. */
const HEAD_CHARS = 256;
/** `..., "id": 123 }` at the very end: where serialisers that write the id last put it. */
const TAIL = /,\s*"id"\s*:\s*(\d+)\s*\}\s*$/;

/**
 * Remembers `text` (the exact line `message` was parsed from) when it is large and its top-level
 * id, an integer, can be located; otherwise does nothing and the message is serialised as usual.
 */
export function keepRawText(message: JsonRpcMessage, text: string): void {
  if (text.length < RAW_TEXT_MIN_CHARS || typeof message.id !== 'number') return;
  const span = leadingId(text) ?? trailingId(text);
  if (span === undefined || text.slice(span.start, span.end) !== String(message.id)) return;
  Object.defineProperty(message, RAW, { value: { text, start: span.start, end: span.end }, enumerable: false, configurable: true, writable: false });
}

/**
 * Remembers `text` with the top-level id at `start`..`end`, located by the caller (the large-line
 * scanner, which has just read it): the same as `keepRawText` without searching again.
 */
export function keepRawSpan(message: JsonRpcMessage, text: string, start: number, end: number): void {
  Object.defineProperty(message, RAW, { value: { text, start, end }, enumerable: false, configurable: true, writable: false });
}

/** Forgets the kept line: the message was changed beyond its id. */
export function dropRawText(message: JsonRpcMessage): void {
  delete (message as WithRaw)[RAW];
}

/** True when `message` still carries the line it was parsed from (a large answer, see keepRawText). */
export function hasRawText(message: object): boolean {
  return (message as WithRaw)[RAW] !== undefined;
}

/** The message as JSON text: the kept line with the current id spliced in, or JSON.stringify. */
export function toWireText(message: JsonRpcMessage): string {
  const raw = (message as WithRaw)[RAW];
  const id = (message as { id?: RequestId | null }).id;
  if (raw === undefined || id === undefined || id === null) return JSON.stringify(message);
  return raw.text.slice(0, raw.start) + JSON.stringify(id) + raw.text.slice(raw.end);
}

function trailingId(text: string): { start: number; end: number } | undefined {
  const tailStart = Math.max(0, text.length - 64);
  const m = TAIL.exec(text.slice(tailStart));
  if (m === null || m[1] === undefined) return undefined;
  const start = tailStart + m.index + m[0].lastIndexOf(m[1]);
  return { start, end: start + m[1].length };
}

/** A top-level `"id": <digits>` within the head, tracking strings and nesting so nested ids do not count. */
function leadingId(text: string): { start: number; end: number } | undefined {
  const n = Math.min(text.length, HEAD_CHARS);
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      while (j < n && text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c /* \ */ ? 2 : 1;
      if (j >= n) return undefined;
      if (depth === 1 && j === i + 3 && text.charCodeAt(i + 1) === 0x69 /* i */ && text.charCodeAt(i + 2) === 0x64 /* d */) {
        let k = j + 1;
        while (k < n && isSpace(text.charCodeAt(k))) k++;
        if (text.charCodeAt(k) === 0x3a /* : */) {
          k++;
          while (k < n && isSpace(text.charCodeAt(k))) k++;
          const start = k;
          while (k < n && text.charCodeAt(k) >= 0x30 && text.charCodeAt(k) <= 0x39) k++;
          return k > start && k < n ? { start, end: k } : undefined;
        }
      }
      i = j;
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) depth++;
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return undefined;
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
