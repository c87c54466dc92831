/**
 * Keeping upstream SSE streams alive (MCP basic/transports, "Resumability and Redelivery", and
 * SEP-1699 polling): a stream that drops is reopened with GET + `Last-Event-ID`, after the
 * server's `retry:` delay or a backoff, a bounded number of times in a row.
 *
 * Two uses: the answer stream of one POST (resumed only while its answer is still owed, and only
 * when the server gave event ids), and the standalone GET stream (reopened for as long as the
 * transport lives). How to open a stream is the transport's business (`open`).
 */
import { GatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import { pause, type ReadableBody } from './http-body.ts';
import { toNetworkError } from './http-errors.ts';
import type { SseParser } from './sse-parser.ts';

/** How many failed reconnections in a row end a stream: enough for a restart or a blip. */
export const STREAM_RECONNECT_ATTEMPTS = 5;
/**
 * Reconnect delay when the server sent no `retry:`: 250 ms, doubling to 2 s. A pending request
 * waits through the whole series before it fails (about 6 s when the server is gone for good), so
 * the series is kept short; a server that wants clients to wait longer says so with `retry:`.
 */
const RECONNECT_INITIAL_MS = 250;
const RECONNECT_MAX_MS = 2_000;

const delay = (parser: SseParser, attempt: number) =>
  parser.retryMs ?? Math.min(RECONNECT_MAX_MS, RECONNECT_INITIAL_MS * 2 ** attempt);

/**
 * Opens (or resumes, with `lastEventId`) a stream: its body, or undefined when the server will not
 * give one (405, or the session is gone and the transport is handling that). Throws a
 * GatewayError for a network failure or an HTTP error.
 */
export type StreamOpener = (lastEventId: string | undefined, signal: AbortSignal) => Promise<ReadableBody | undefined>;

export interface StreamOptions {
  readonly parser: SseParser;
  readonly signal: AbortSignal;
  readonly open: StreamOpener;
  readonly target: string;
  readonly logger: Logger;
}

/** Feeds a body to the parser; false when the connection broke rather than ended. */
async function drain(body: ReadableBody, parser: SseParser): Promise<{ ended: boolean; events: boolean }> {
  let events = false;
  try {
    for await (const chunk of body) {
      parser.push(chunk);
      events = true;
    }
    return { ended: true, events };
  } catch {
    return { ended: false, events };
  }
}

/** A first body already fed to the parser as it arrived (http-dispatch.ts): whether it brought any. */
export interface DrainedBody {
  readonly events: boolean;
}

/**
 * Reads a POST's answer stream to its end, resuming it while `owed()` (answers still missing).
 * Throws GW_UPSTREAM_CLOSED when it cannot: no event id to resume from, or too many failures.
 */
export async function readAnswerStream(first: ReadableBody | DrainedBody, owed: () => boolean, options: StreamOptions): Promise<void> {
  const { parser, signal, target, logger } = options;
  // A drained first body starts the count at 0 either way: it was the first connection.
  let body: ReadableBody | undefined = 'dump' in first ? first : undefined;
  let attempt = 0;
  for (;;) {
    if (body !== undefined && (await drain(body, parser)).events) attempt = 0;
    if (!owed() || signal.aborted) return;
    const lastEventId = parser.lastEventId;
    if (lastEventId === undefined || attempt >= STREAM_RECONNECT_ATTEMPTS) {
      const reason =
        lastEventId === undefined ? 'stream ended before the answer and cannot be resumed (no event id)' : 'stream could not be resumed';
      throw new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${target}": response ${reason}`, { target, reason });
    }
    await pause(delay(parser, attempt), signal);
    attempt++;
    if (signal.aborted) return;
    logger.debug({ lastEventId, attempt }, 'resuming an upstream SSE stream');
    body = await options.open(lastEventId, signal).catch((err: unknown) => {
      logger.debug({ code: toNetworkError(target, err).code }, 'resuming an upstream SSE stream failed');
      return undefined;
    });
    if (body !== undefined) parser.reset();
    else if (signal.aborted) return;
  }
}

/**
 * Keeps the standalone GET stream open until `signal` aborts or `open` says there is none.
 * `onlost` is called once when it could not be reopened after too many failures in a row.
 */
export async function keepStreamOpen(options: StreamOptions, onlost: (error: GatewayError) => void): Promise<void> {
  const { parser, signal, target, logger } = options;
  let failures = 0;
  while (!signal.aborted) {
    try {
      const body = await options.open(parser.lastEventId, signal);
      if (body === undefined) return;
      failures = 0;
      parser.reset();
      const { ended } = await drain(body, parser);
      if (!ended && !signal.aborted) failures++;
    } catch (err) {
      if (signal.aborted) return;
      const error = toNetworkError(target, err);
      failures++;
      logger.debug({ failures, code: error.code }, 'upstream GET stream failed; reconnecting');
      if (failures > STREAM_RECONNECT_ATTEMPTS) {
        onlost(
          new GatewayError('GW_UPSTREAM_CLOSED', `The GET stream of upstream "${target}" could not be re-established: ${error.message}`, {
            ...error.details,
            target,
            reason: 'GET stream lost',
          }),
        );
        return;
      }
    }
    await pause(delay(parser, failures), signal);
  }
}
