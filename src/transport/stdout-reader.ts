/**
 * Turns a stdio child's stdout into messages: NDJSON lines, each parsed once and checked at the
 * envelope only. A line that is not JSON or not a JSON-RPC message is logged (under a budget, as
 * a broken server may write nothing else) and skipped: PROTOCOL.md asks us not to die of it.
 */
import { parseJson, toMessage } from '../jsonrpc/envelope.ts';
import { LARGE_LINE_CHARS, scanLargeResponse } from '../jsonrpc/large-response.ts';
import { JsonTooDeepError, MAX_JSON_DEPTH } from '../jsonrpc/depth.ts';
import { createLineSplitter, DEFAULT_OVERFLOW_HEAD_BYTES, sniffLineHead } from '../jsonrpc/ndjson.ts';
import { keepRawText, RAW_TEXT_MIN_CHARS } from '../jsonrpc/wire-text.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { createLogThrottle } from './log-throttle.ts';

/** Warnings about unusable stdout lines per second. */
const GARBAGE_WARNINGS_PER_SECOND = 5;
/** How much of a too-deep line is sniffed for its id (as the splitter keeps of an over-long one). */
const HEAD_CHARS = DEFAULT_OVERFLOW_HEAD_BYTES;
/** How much of an offending line goes into a log entry. */
const SNIPPET_CHARS = 200;

/**
 * A line the gateway will not read, over-long (`size`) or nested too deep (`depth`, see
 * jsonrpc/depth.ts), classified by what its head shows:
 * - `response`: a response whose top-level id was read; only that request is affected.
 * - `dropped`: a request or notification from the server; nothing on our side waits for it.
 * - `unattributable`: no id could be read; some pending request may never be answered.
 */
export type Overflow = { reason: 'size' | 'depth'; totalBytes: number } & (
  | { kind: 'response'; id: number }
  | { kind: 'dropped' }
  | { kind: 'unattributable' }
);

export interface StdoutReaderOptions {
  maxMessageBytes: number;
  logger: Logger;
  onMessage: (message: JsonRpcMessage) => void;
  onOverflow: (overflow: Overflow) => void;
}

export interface StdoutReader {
  push(chunk: Buffer): void;
  /** EOF: a last line without newline is still read. */
  end(): void;
}

/** What a child printed that was not a message: for a clear start-up error (startup-deadline.ts). */
export interface StdoutGarbage {
  /** Lines skipped so far. */
  lines: number;
  /** The head of the first one (up to the log snippet length), for the log only. */
  first: string | undefined;
}

/**
 * Creates the reader for one child: `onMessage` gets every envelope-valid message in order,
 * `onOverflow` every line longer than `maxMessageBytes` (never accumulated past its head).
 */
export function createStdoutReader(options: StdoutReaderOptions): StdoutReader & { readonly garbage: StdoutGarbage } {
  const { logger, maxMessageBytes: limit } = options;
  const throttle = createLogThrottle(GARBAGE_WARNINGS_PER_SECOND);
  const garbage: StdoutGarbage = { lines: 0, first: undefined };

  function skip(problem: string, line: string): void {
    garbage.lines++;
    garbage.first ??= line.slice(0, SNIPPET_CHARS);
    if (!throttle.take()) return;
    const suppressed = throttle.drainSuppressed();
    logger.warn(
      { problem, line: line.slice(0, SNIPPET_CHARS), ...(suppressed > 0 ? { suppressed } : {}) },
      'upstream wrote a line that is not a JSON-RPC message; skipped',
    );
  }

  function onLine(line: string): void {
    if (line.length >= LARGE_LINE_CHARS) {
      // A very large plain answer is checked at the envelope, not parsed whole (large-response.ts).
      const scanned = scanLargeResponse(line);
      if (scanned !== undefined) {
        options.onMessage(scanned);
        return;
      }
    }
    let value: unknown;
    try {
      value = parseJson(line);
    } catch (err) {
      if (err instanceof JsonTooDeepError) classify(line.slice(0, HEAD_CHARS), Buffer.byteLength(line), 'depth');
      else skip('not JSON', line);
      return;
    }
    const message = toMessage(value);
    if (typeof message === 'string') {
      skip(message, line);
      return;
    }
    // A large answer keeps its line, so that it can be forwarded without a second serialisation.
    if (line.length >= RAW_TEXT_MIN_CHARS) keepRawText(message, line);
    options.onMessage(message);
  }

  function classify(head: string, totalBytes: number, reason: Overflow['reason']): void {
    const sniffed = sniffLineHead(head);
    const what = reason === 'size' ? 'over-long' : 'too deeply nested';
    const context = { head: head.slice(0, SNIPPET_CHARS), bytes: totalBytes, ...(reason === 'size' ? { limit } : { depthLimit: MAX_JSON_DEPTH }) };
    if (!sniffed.hasMethod && sniffed.id !== undefined) {
      logger.warn({ id: sniffed.id, ...context, head: undefined }, `${what} upstream response dropped`);
      options.onOverflow({ kind: 'response', id: sniffed.id, totalBytes, reason });
    } else if (sniffed.hasMethod) {
      // A server request will time out on the server's side; a notification is simply lost.
      logger.warn(context, `${what} upstream request or notification dropped`);
      options.onOverflow({ kind: 'dropped', totalBytes, reason });
    } else {
      logger.error(context, `${what} upstream message without a readable id`);
      options.onOverflow({ kind: 'unattributable', totalBytes, reason });
    }
  }

  return Object.assign(
    createLineSplitter({ maxLineBytes: limit, onLine, onOverflow: (head, totalBytes) => classify(head, totalBytes, 'size') }),
    { garbage },
  );
}
