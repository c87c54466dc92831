/**
 * Where a stdio child's stderr goes: split into lines, passed to the gateway's log under a
 * per-second budget (PROTOCOL.md: pipe it to the logger, never inherit), and the last lines kept so
 * that an exit error can say why the child died.
 */
import { createLineSplitter } from '../jsonrpc/ndjson.ts';
import type { Logger } from '../log/logger.ts';
import { createLogThrottle } from './log-throttle.ts';

/** Lines kept for the `data` of an exit error: enough to show why, small enough to send. */
export const STDERR_TAIL_LINES = 20;
/** Stderr is free text; a longer line is cut to its head. */
const STDERR_MAX_LINE_BYTES = 16 * 1024;

export interface StderrSink {
  push(chunk: Buffer): void;
  /** The stream ended (or is abandoned): delivers a last unterminated line, reports suppressed lines. */
  end(): void;
  /** The last lines (up to 20), oldest first; a copy. */
  tail(): string[];
}

/** Creates the sink for one child; `logger` is the upstream's own child logger. */
export function createStderrSink(options: { logger: Logger; linesPerSecond: number }): StderrSink {
  const { logger } = options;
  const lines: string[] = [];
  const throttle = createLogThrottle(options.linesPerSecond);

  function reportSuppressed(): void {
    const suppressed = throttle.drainSuppressed();
    if (suppressed > 0) logger.warn({ suppressed }, 'upstream stderr lines suppressed (rate limit)');
  }

  function onLine(line: string): void {
    lines.push(line);
    if (lines.length > STDERR_TAIL_LINES) lines.shift();
    if (!throttle.take()) return;
    reportSuppressed();
    logger.info({ stderr: line }, 'upstream stderr');
  }

  const splitter = createLineSplitter({
    maxLineBytes: STDERR_MAX_LINE_BYTES,
    onLine,
    onOverflow: (head) => onLine(head + '… [line cut]'),
  });

  return {
    push: (chunk) => splitter.push(chunk),
    end() {
      splitter.end();
      reportSuppressed();
    },
    tail: () => [...lines],
  };
}
