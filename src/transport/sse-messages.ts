/**
 * From SSE events to JSON-RPC messages, for both remote transports: `message` events carry one
 * JSON-RPC message each (MCP basic/transports); other event types are left to the caller. An
 * over-long event that is a response with a readable id fails just that request (through the
 * transport's `onundeliverable`); anything else over-long is dropped with a warning.
 */
import { JsonTooDeepError } from '../jsonrpc/depth.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { parseJson, toMessage } from '../jsonrpc/envelope.ts';
import { sniffLineHead } from '../jsonrpc/ndjson.ts';
import { keepRawText, RAW_TEXT_MIN_CHARS } from '../jsonrpc/wire-text.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { createSseParser, type SseEvent, type SseParser } from './sse-parser.ts';

export interface SseMessageReaderOptions {
  target: string;
  maxMessageBytes: number;
  logger: Logger;
  onmessage(message: JsonRpcMessage): void;
  /** An event that is not `message` (legacy `endpoint`, for instance). */
  onother?(event: SseEvent): void;
  onundeliverable(upstreamId: number, error: GatewayError): void;
}

/** How much of an unusable event goes into a log line. */
const SNIPPET_CHARS = 200;

/**
 * Parses one JSON-RPC body (an object, or an array of them) into messages; logs what is not one.
 * A large single message keeps `text` as its wire text (jsonrpc/wire-text.ts).
 */
export function toMessages(text: string, logger: Logger): JsonRpcMessage[] {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (err) {
    const lines = err instanceof JsonTooDeepError ? undefined : asLines(text);
    if (lines !== undefined) {
      logger.debug({ messages: lines.length }, 'upstream sent several JSON-RPC messages in one JSON body, one per line; read them in order');
      return lines.flatMap((line) => toMessages(line, logger));
    }
    // The request it answered fails as one whose body holds no answer (streamable-http.ts).
    const problem = err instanceof JsonTooDeepError ? err.message : 'not JSON';
    logger.warn({ problem, data: text.slice(0, SNIPPET_CHARS) }, 'upstream sent data that is not a JSON-RPC message; skipped');
    return [];
  }
  const out: JsonRpcMessage[] = [];
  for (const item of Array.isArray(value) ? value : [value]) {
    const message = toMessage(item);
    if (typeof message === 'string') logger.warn({ problem: message }, 'upstream sent something that is not a JSON-RPC message; skipped');
    else out.push(message);
  }
  // A large answer that is the whole text keeps it, to be forwarded without a second
  // serialisation (wire-text.ts); as the stdio reader does with its lines.
  if (out.length === 1 && !Array.isArray(value) && text.length >= RAW_TEXT_MIN_CHARS) keepRawText(out[0]!, text);
  return out;
}

/**
 * A body that is not one JSON value but newline-separated JSON values (each line parses): some
 * servers stream a JSON answer's notifications before it that way (the conformance repo's
 * reference server does). Read as what it plainly means, in order; anything else stays unusable.
 * Only reached once a body failed to parse, so well-formed traffic never pays for it.
 */
function asLines(text: string): string[] | undefined {
  if (!text.includes('\n')) return undefined;
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  if (lines.length < 2) return undefined;
  for (const line of lines) {
    try {
      JSON.parse(line);
    } catch {
      return undefined;
    }
  }
  return lines;
}

export function createSseMessageReader(options: SseMessageReaderOptions): SseParser {
  const { logger, maxMessageBytes: limit, target } = options;
  return createSseParser({
    maxEventBytes: limit,
    onevent(event) {
      if (event.event !== 'message') {
        options.onother?.(event);
        return;
      }
      // A priming event (2025-11-25, SEP-1699: an id and empty data) gives a resume point and
      // carries no message: normal traffic, nothing to read or warn about.
      if (event.data === '') return;
      for (const message of toMessages(event.data, logger)) options.onmessage(message);
    },
    onoverflow(head, bytes) {
      const sniffed = sniffLineHead(head);
      if (!sniffed.hasMethod && sniffed.id !== undefined) {
        logger.warn({ id: sniffed.id, bytes, limit }, 'over-long upstream response dropped');
        options.onundeliverable(
          sniffed.id,
          new GatewayError('GW_UPSTREAM_MESSAGE_TOO_LARGE', `Upstream "${target}" answered with more than ${limit} bytes`, { target, limit }),
        );
        return;
      }
      logger.warn({ head: head.slice(0, SNIPPET_CHARS), bytes, limit }, 'over-long upstream event dropped');
    },
  });
}
