/**
 * The stateless 2026-07-28 HTTP wire (MCP 2026-07-28 basic/transports): every request is one POST
 * that stands alone: no session id, no GET stream, no resumption. The request carries
 * `MCP-Protocol-Version`, `Mcp-Method` and, for tools/call, resources/read and prompts/get,
 * `Mcp-Name` (the `=?base64?...?=` form when the value is not plain ASCII). The answer is one JSON
 * body, or an SSE stream whose related notifications (progress, log lines) come before it.
 * Closing the exchange is how a 2026 client cancels (there is no `notifications/cancelled`), so
 * aborting a POST is the cancel.
 *
 * `subscriptions/listen` is the one request whose answer is meant never to end. Some servers (the
 * conformance repo's reference server) send it as `application/json` with one message per line,
 * written as they happen: such a body is read line by line as it arrives (each line at most
 * `maxMessageBytes`), since collecting it would wait for an end that never comes.
 *
 * This file knows the wire only; what the messages mean (the `_meta` envelope, `resultType`,
 * input rounds) is the bridge's business (upstream/modern-bridge.ts).
 */
import type { Dispatcher } from 'undici';
import type { RemoteTargetConfig } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { idKey, isErrorResponse, isResponse, toMessage } from '../jsonrpc/envelope.ts';
import { headerValueOf, mcpNameOf } from '../jsonrpc/modern.ts';
import { MODERN_PROTOCOL_VERSION } from '../jsonrpc/versions.ts';
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { dispatchExchange, type AbortHandle, type BodyPlan, type DispatchedResponse, type ResponseHead } from './http-dispatch.ts';
import { toHttpError, toNetworkError, toProtocolError } from './http-errors.ts';
import { createLineSplitter, type LineSplitter } from '../jsonrpc/ndjson.ts';
import { createSseMessageReader, toMessages } from './sse-messages.ts';
import type { SseParser } from './sse-parser.ts';

export interface StatelessHttpOptions {
  target: RemoteTargetConfig;
  /** One logger per upstream connection, bound to the session and target. */
  logger: Logger;
  /** The target's pooled agent. */
  agent: Dispatcher;
  /** Configured, forwarded and per-principal headers (upstreamHeaders()); never logged. */
  headers: Readonly<Record<string, string>>;
}

export interface StatelessHttpWire {
  /**
   * POSTs one request; every other message of its answer (progress, log lines) goes to `onmessage`
   * as it arrives. Resolves with the answer; rejects with a GatewayError (network, HTTP status,
   * unusable body, stream cut before the answer, `abort`). `extraHeaders`: the request's own
   * (`Mcp-Param-*`, trace context; SendOptions of the bridge's send).
   */
  post(
    request: JsonRpcRequest,
    onmessage: (message: JsonRpcMessage) => void,
    abort: AbortHandle,
    extraHeaders?: Readonly<Record<string, string>>,
  ): Promise<JsonRpcResponse>;
}

const ACCEPT_POST = 'application/json, text/event-stream';
/** The request whose JSON answer may be a stream of lines (see the header). */
const LISTEN = 'subscriptions/listen';
/** How much of an error body is read to quote the upstream's message. */
const ERROR_BODY_BYTES = 4_096;

/**
 * The headers of one 2026 request (basic/transports, "Request Headers"). `extra`, the request's
 * own (Mcp-Param-*, trace context), never replaces a configured or protocol header.
 */
export function modernRequestHeaders(
  fixed: Readonly<Record<string, string>>,
  request: JsonRpcRequest,
  extra?: Readonly<Record<string, string>>,
): Record<string, string> {
  const headers: Record<string, string> = {
    ...extra,
    ...fixed,
    accept: ACCEPT_POST,
    'content-type': 'application/json',
    'mcp-protocol-version': MODERN_PROTOCOL_VERSION,
    'mcp-method': request.method,
  };
  const name = mcpNameOf(request);
  if (name !== undefined) headers['mcp-name'] = headerValueOf(name);
  return headers;
}

/**
 * A 2026 server refuses a request it cannot take (unknown method: 404 / -32601; bad params,
 * header mismatch, unsupported version: 400) with a JSON-RPC error that echoes the request's id
 * (basic/transports, "Request Validation"). That is the request's answer, not a broken exchange.
 */
function ladderError(text: string, key: string): JsonRpcResponse | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const message = toMessage(value);
  if (typeof message === 'string' || !isErrorResponse(message) || message.id === null || idKey(message.id) !== key) return undefined;
  return message;
}

export function createStatelessHttpWire(options: StatelessHttpOptions): StatelessHttpWire {
  return new StatelessHttp(options);
}

class StatelessHttp implements StatelessHttpWire {
  readonly name: string;
  readonly origin: string;
  readonly path: string;
  readonly target: RemoteTargetConfig;
  readonly logger: Logger;
  readonly agent: Dispatcher;
  readonly headers: Readonly<Record<string, string>>;

  constructor({ target, logger, agent, headers }: StatelessHttpOptions) {
    this.target = target;
    this.logger = logger;
    this.agent = agent;
    this.headers = headers;
    this.name = target.name;
    const { origin, pathname, search } = new URL(target.url);
    this.origin = origin;
    this.path = pathname + search;
  }

  async post(
    request: JsonRpcRequest,
    onmessage: (message: JsonRpcMessage) => void,
    abort: AbortHandle,
    extraHeaders?: Readonly<Record<string, string>>,
  ): Promise<JsonRpcResponse> {
    const exchange = new Exchange(this, request, onmessage);
    let res: DispatchedResponse;
    try {
      res = await dispatchExchange(this.agent, {
        origin: this.origin,
        path: this.path,
        method: 'POST',
        headers: modernRequestHeaders(this.headers, request, extraHeaders),
        body: JSON.stringify(request),
        abort,
        plan: exchange.plan,
      });
    } catch (err) {
      if (abort.aborted) throw closedByAbort(this.name);
      throw toNetworkError(this.name, err);
    }
    return answerOf(exchange, res, abort);
  }
}

function closedByAbort(name: string): GatewayError {
  return new GatewayError('GW_UPSTREAM_CLOSED', `Request to upstream "${name}" was closed`, { target: name, reason: 'aborted' });
}

/** One POST's answer as it is read: the messages before the answer go to `onmessage`. */
class Exchange {
  readonly wire: StatelessHttp;
  readonly request: JsonRpcRequest;
  readonly key: string;
  readonly onmessage: (message: JsonRpcMessage) => void;
  answer: JsonRpcResponse | undefined;
  parser: SseParser | LineSplitter | undefined;
  tooLarge: GatewayError | undefined;

  constructor(wire: StatelessHttp, request: JsonRpcRequest, onmessage: (message: JsonRpcMessage) => void) {
    this.wire = wire;
    this.request = request;
    this.key = idKey(request.id);
    this.onmessage = onmessage;
  }

  /** An arrow field: the body readers call it detached. */
  readonly receive = (message: JsonRpcMessage): void => {
    if (isResponse(message) && message.id !== null && idKey(message.id) === this.key) this.answer = message;
    else this.onmessage(message);
  };

  /** An arrow field: dispatchExchange calls it detached once the head is in. */
  readonly plan = (head: ResponseHead): BodyPlan => {
    const { target, logger } = this.wire;
    if (head.statusCode >= 400) return { mode: 'head', limit: ERROR_BODY_BYTES };
    if (head.contentType === 'text/event-stream') {
      const reader = createSseMessageReader({
        target: this.wire.name,
        maxMessageBytes: target.maxMessageBytes,
        logger,
        onmessage: this.receive,
        onundeliverable: (_id, error) => (this.tooLarge = error),
      });
      this.parser = reader;
      return { mode: 'stream', onchunk: (chunk) => reader.push(chunk) };
    }
    if (head.contentType !== 'application/json') return { mode: 'head', limit: 0 };
    if (this.request.method === LISTEN) {
      const lines = createLineSplitter({
        maxLineBytes: target.maxMessageBytes,
        onLine: (line) => {
          for (const message of toMessages(line, logger)) this.receive(message);
        },
        onOverflow: (_head, bytes) => logger.warn({ bytes, limit: target.maxMessageBytes }, 'over-long line of a listen stream dropped'),
      });
      this.parser = lines;
      return { mode: 'stream', onchunk: (chunk) => lines.push(chunk) };
    }
    return { mode: 'collect', limit: target.maxMessageBytes };
  };
}

/** The exchange's answer once the body is read, or why there is none. */
function answerOf(exchange: Exchange, res: DispatchedResponse, abort: AbortHandle): JsonRpcResponse {
  const { name, target, logger } = exchange.wire;
  const parser = exchange.parser;
  // A listen answer's last line may lack its newline.
  if (parser !== undefined && !('reset' in parser)) parser.end();
  const status = res.statusCode;
  if (status >= 400) {
    const refusal = status === 400 || status === 404 ? ladderError(res.text, exchange.key) : undefined;
    if (refusal !== undefined) return refusal;
    throw toHttpError(name, status, res.text, logger);
  }
  if (parser === undefined) {
    if (res.contentType !== 'application/json') {
      throw toProtocolError(name, status, `expected application/json or text/event-stream, got ${res.contentType || 'no content type'}`);
    }
    if (res.overflow) {
      throw new GatewayError('GW_UPSTREAM_MESSAGE_TOO_LARGE', `Upstream "${name}" answered with more than ${target.maxMessageBytes} bytes`, {
        target: name,
        limit: target.maxMessageBytes,
      });
    }
    for (const message of toMessages(res.text, logger)) exchange.receive(message);
  }
  if (exchange.answer !== undefined) return exchange.answer;
  if (exchange.tooLarge !== undefined) throw exchange.tooLarge;
  if (abort.aborted) throw closedByAbort(name);
  // 2026-07-28 has no resumption: a stream that ends without the answer has lost it.
  if (parser !== undefined) {
    throw new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${name}" ended the stream before the answer`, {
      target: name,
      reason: 'stream ended before the answer',
    });
  }
  throw toProtocolError(name, status, 'the JSON body holds no answer to the request');
}
