/**
 * Turns a stdio child's stdout into messages: NDJSON lines, each parsed once and checked at the
 * envelope only. A line that is not JSON or not a JSON-RPC message is logged (under a budget, as
 * a broken server may write nothing else) and skipped: PROTOCOL.md asks us not to die of it.
 */
import { parseJson, toMessage } from '../jsonrpc/envelope.ts';
import { LARGE_LINE_CHARS, scanLargeResponse } from '../jsonrpc/large-response.ts';
import { createLineSplitter, sniffLineHead } from '../jsonrpc/ndjson.ts';
import { keepRawText, RAW_TEXT_MIN_CHARS } from '../jsonrpc/wire-text.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { createLogThrottle } from './log-throttle.ts';

/** Warnings about unusable stdout lines per second. */
const GARBAGE_WARNINGS_PER_SECOND = 5;
/** How much of an offending line goes into a log entry. */
const SNIPPET_CHARS = 200;

/**
 * An over-long line, classified by what its head shows:
 * - `response`: a response whose top-level id was read; only that request is affected.
 * - `dropped`: a request or notification from the server; nothing on our side waits for it.
 * - `unattributable`: no id could be read; some pending request may never be answered.
 */
export type Overflow =
  | { kind: 'response'; id: number; totalBytes: number }
  | { kind: 'dropped'; totalBytes: number }
  | { kind: 'unattributable'; totalBytes: number };

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

/**
 * Creates the reader for one child: `onMessage` gets every envelope-valid message in order,
 * `onOverflow` every line longer than `maxMessageBytes` (never accumulated past its head).
 */
export function createStdoutReader(options: StdoutReaderOptions): StdoutReader {
  const { logger, maxMessageBytes: limit } = options;
  const throttle = createLogThrottle(GARBAGE_WARNINGS_PER_SECOND);

  function skip(problem: string, line: string): void {
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
    } catch {
      skip('not JSON', line);
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

  function onOverflow(head: string, totalBytes: number): void {
    const sniffed = sniffLineHead(head);
    const context = { head: head.slice(0, SNIPPET_CHARS), bytes: totalBytes, limit };
    if (!sniffed.hasMethod && sniffed.id !== undefined) {
      logger.warn({ id: sniffed.id, bytes: totalBytes, limit }, 'over-long upstream response dropped');
      options.onOverflow({ kind: 'response', id: sniffed.id, totalBytes });
    } else if (sniffed.hasMethod) {
      // A server request will time out on the server's side; a notification is simply lost.
      logger.warn(context, 'over-long upstream request or notification dropped');
      options.onOverflow({ kind: 'dropped', totalBytes });
    } else {
      logger.error(context, 'over-long upstream message without a readable id');
      options.onOverflow({ kind: 'unattributable', totalBytes });
    }
  }

  return createLineSplitter({ maxLineBytes: limit, onLine, onOverflow });
}
