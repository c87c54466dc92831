/**
 * NDJSON framing for stdio upstreams: one UTF-8 JSON message per `\n`-terminated line.
 *
 * The splitter works on bytes, not strings: `\n` (0x0A) never occurs inside a multi-byte UTF-8
 * sequence, so cutting on it and decoding each whole line is UTF-8 safe however the pipe chunks
 * the stream. Chunks of a line are kept in a list and joined once per line, so a line delivered in
 * many small chunks costs linear, not quadratic, time.
 */
import type { JsonRpcMessage } from './types.ts';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** How much of an over-long line is kept: enough to read its envelope and id, small enough to log. */
export const DEFAULT_OVERFLOW_HEAD_BYTES = 512;

export interface LineSplitterOptions {
  /**
   * Longest line accepted, in bytes, not counting the `\n` (a trailing `\r` counts). Longer lines
   * are not accumulated: only their head is kept and `onOverflow` reports them.
   */
  maxLineBytes: number;
  /** Called with each complete, non-blank line (trailing `\r` removed). */
  onLine: (line: string) => void;
  /**
   * Called once per over-long line when its end is seen (or at `end()`), with its head decoded as
   * UTF-8 (a character cut at the edge becomes U+FFFD) and its total size. The head is the line's
   * first `headBytes` bytes, or fewer if fewer had arrived by the chunk that crossed the limit
   * (only when `maxLineBytes` is below `headBytes`).
   */
  onOverflow: (head: string, totalBytes: number) => void;
  /** Bytes of an over-long line kept for `onOverflow`; defaults to 512. */
  headBytes?: number;
}

export interface LineSplitter {
  /** Feeds the next chunk of the stream. */
  push(chunk: Buffer): void;
  /** The stream ended: a last line without a trailing newline is still delivered. */
  end(): void;
}

/**
 * Creates a byte-level line splitter with a maximum line size.
 */
export function createLineSplitter(options: LineSplitterOptions): LineSplitter {
  const { maxLineBytes, onLine, onOverflow } = options;
  const headBytes = options.headBytes ?? DEFAULT_OVERFLOW_HEAD_BYTES;
  let parts: Buffer[] = [];
  let size = 0;
  // Set while discarding the rest of an over-long line.
  let overflowHead: Buffer | undefined;

  function append(piece: Buffer): void {
    if (piece.length === 0) return;
    if (overflowHead !== undefined) {
      size += piece.length;
      return;
    }
    if (size + piece.length > maxLineBytes) {
      // Keep only the head, copied (concat with a total length copies just that much) so the
      // possibly huge chunks it came from can be collected.
      overflowHead = Buffer.concat([...parts, piece], Math.min(headBytes, size + piece.length));
      parts = [];
      size += piece.length;
      return;
    }
    parts.push(piece);
    size += piece.length;
  }

  function finishLine(): void {
    if (overflowHead !== undefined) {
      const head = overflowHead.toString('utf8');
      const total = size;
      overflowHead = undefined;
      size = 0;
      onOverflow(head, total);
      return;
    }
    if (size === 0) return;
    let line = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, size);
    parts = [];
    size = 0;
    if (line[line.length - 1] === CARRIAGE_RETURN) line = line.subarray(0, line.length - 1);
    const text = line.toString('utf8');
    if (isBlank(text)) return;
    onLine(text);
  }

  return {
    push(chunk) {
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(NEWLINE, start);
        if (nl === -1) {
          // A fresh copy is not needed: the chunk is ours (pipes hand out new Buffers).
          append(start === 0 ? chunk : chunk.subarray(start));
          return;
        }
        append(chunk.subarray(start, nl));
        finishLine();
        start = nl + 1;
      }
    },
    end() {
      finishLine();
    },
  };
}

function isBlank(text: string): boolean {
  if (text.length === 0) return true;
  // Cheap path first: almost every line starts with `{`.
  const first = text.charCodeAt(0);
  if (first !== 0x20 && first !== 0x09 && first !== 0x0d && first !== 0x0b && first !== 0x0c) return false;
  return text.trim().length === 0;
}

/** One message as an NDJSON line. `JSON.stringify` never emits a raw newline, so this is one line. */
export function serializeMessage(message: JsonRpcMessage): string {
  return JSON.stringify(message) + '\n';
}

/** What the head of an over-long line says about the message it starts. */
export interface LineHead {
  /** The top-level `id` when it is a non-negative integer seen within the head. */
  id: number | undefined;
  /** Whether a top-level `method` key was seen: the line is a request or notification, not a response. */
  hasMethod: boolean;
}

/**
 * Reads the top-level keys of a truncated JSON object, looking for `"id": <integer>` and `"method"`.
 *
 * A regex over the head would also match an `"id"` nested inside params or a result (a huge log
 * notification whose data carries an `id`), and would then fail an unrelated pending request; so
 * this tracks string and nesting state and only looks at depth 1.
 */
export function sniffLineHead(head: string): LineHead {
  const result: LineHead = { id: undefined, hasMethod: false };
  let depth = 0;
  let i = 0;
  const n = head.length;
  while (i < n) {
    const c = head.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const end = scanString(head, i);
      if (end === -1) return result;
      if (depth === 1) {
        const key = head.slice(i + 1, end);
        let j = skipSpaces(head, end + 1);
        if (head.charCodeAt(j) === 0x3a /* : */) {
          j = skipSpaces(head, j + 1);
          if (key === 'method') result.hasMethod = true;
          if (key === 'id') {
            const m = /^\d+/.exec(head.slice(j, j + 32));
            // The digits must end at a delimiter inside the head, or the number may be cut short.
            const after = m === null ? undefined : head[j + m[0].length];
            if (m !== null && after !== undefined && /[\s,}]/.test(after)) {
              const id = Number(m[0]);
              if (Number.isSafeInteger(id)) result.id = id;
            }
          }
          i = j;
          continue;
        }
      }
      i = end + 1;
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) depth++;
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
    i++;
  }
  return result;
}

/** Index of the closing quote of the string opening at `start`, or -1 when the head cuts it. */
function scanString(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* \ */) i++;
    else if (c === 0x22) return i;
  }
  return -1;
}

function skipSpaces(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i] as string)) i++;
  return i;
}
