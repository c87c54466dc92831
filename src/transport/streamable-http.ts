/**
 * The Streamable HTTP upstream wire (MCP basic/transports, "Streamable HTTP", 2025-03-26 onwards)
 * over the target's pooled undici Agent.
 *
 * - Each message is one POST (`Accept: application/json, text/event-stream`). Notifications and
 *   responses get 202; a request's answer comes as one JSON body or as an SSE stream that may carry
 *   progress and server->client requests first. `send` covers the whole exchange, so any failure
 *   rejects it and the correlator fails just that request.
 * - `Mcp-Session-Id` from the initialize answer and `MCP-Protocol-Version` from its result go on
 *   every later request ("Session Management", "Protocol Version Header").
 * - After `notifications/initialized` the GET stream is opened for server-initiated messages
 *   (405 = the server offers none). A dropped SSE stream is resumed with `Last-Event-ID` after the
 *   server's `retry:` ("Resumability and Redelivery"), a bounded number of times.
 * - 404 for our session id: re-initialize transparently (replay initialize + initialized, retry
 *   the request) only when the session holds no upstream state (`isStateBearing`). Otherwise
 *   GW_UPSTREAM_SESSION_EXPIRED, and the transport closes so the downstream session ends.
 * - `close()` sends DELETE for the session (405 tolerated).
 */
import { request, type Dispatcher } from 'undici';
import type { RemoteTargetConfig } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { idKey, isObject, isRequest, isResponse } from '../jsonrpc/envelope.ts';
import type { JsonRpcMessage, JsonRpcRequest } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { discard, headerValue, mediaType, pause, readBounded, readHead, upstreamHeaders, type ReadableBody } from './http-body.ts';
import { toHttpError, toNetworkError, toProtocolError } from './http-errors.ts';
import { agentFor } from './http-pool.ts';
import { createSseMessageReader, toMessages } from './sse-messages.ts';
import type { SseParser } from './sse-parser.ts';
import type { Transport } from './types.ts';

export interface RemoteTransportOptions {
  target: RemoteTargetConfig;
  /** One logger per upstream, already bound to the session and target. */
  logger: Logger;
  /** The downstream's own Authorization; sent only when the target sets `forwardAuthorization`. */
  authorization?: string | undefined;
}

const ACCEPT_POST = 'application/json, text/event-stream';
/** How many times in a row a dropped SSE stream is reconnected before giving up. */
export const STREAM_RECONNECT_ATTEMPTS = 5;
/** Reconnect delay when the server sent no `retry:`: 500 ms, doubling to 10 s. */
const RECONNECT_INITIAL_MS = 500;
const RECONNECT_MAX_MS = 10_000;
/** DELETE on close must not hold a session's end (or the gateway's shutdown) up for long. */
const DELETE_TIMEOUT_MS = 5_000;
/** How much of an error body is read to quote the upstream's message. */
const ERROR_BODY_BYTES = 4_096;

/**
 * Requests after which the upstream session holds state a fresh session would not have, so a
 * transparent re-initialize would lose it silently: subscriptions (basic/resources), the log level
 * (server/logging), and tasks (2025-11-25 tasks: task-augmented requests and tasks/*).
 */
const STATE_BEARING_METHODS = new Set(['resources/subscribe', 'logging/setLevel']);
export function isStateBearing(request: JsonRpcRequest): boolean {
  return STATE_BEARING_METHODS.has(request.method) || request.method.startsWith('tasks/') || isObject(request.params?.task);
}

/** Where an exchange's messages go, and which request answers it still waits for. */
interface Exchange {
  readonly waiting: Set<string>;
  readonly deliver: (message: JsonRpcMessage) => void;
}

interface CallOptions {
  method: 'GET' | 'POST' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
}

/** `result.protocolVersion` of an initialize answer. */
function negotiatedVersion(message: JsonRpcMessage): string | undefined {
  const result = 'result' in message ? message.result : undefined;
  return isObject(result) && typeof result.protocolVersion === 'string' ? result.protocolVersion : undefined;
}

const backoff = (attempt: number) => Math.min(RECONNECT_MAX_MS, RECONNECT_INITIAL_MS * 2 ** attempt);

export function createStreamableHttpTransport(options: RemoteTransportOptions): Transport {
  const { target, logger } = options;
  const name = target.name;
  const agent = agentFor(target);
  const fixedHeaders = upstreamHeaders(target, options.authorization);
  let sessionId: string | undefined;
  let protocolVersion: string | undefined;
  let initParams: string | undefined;
  let initId: unknown;
  let stateful = false;
  let closed = false;
  let closing: Promise<void> | undefined;
  let reinitializing: Promise<void> | undefined;
  let reinitCount = 0;
  let getStream: AbortController | undefined;
  /** Every open exchange, so closing aborts them all; requests also by id, so a cancel ends its POST. */
  const open = new Set<AbortController>();
  const byRequest = new Map<string, AbortController>();

  const headersFor = (extra: Record<string, string>): Record<string, string> => {
    const headers: Record<string, string> = { ...fixedHeaders, ...extra };
    if (sessionId !== undefined) headers['mcp-session-id'] = sessionId;
    if (protocolVersion !== undefined) headers['mcp-protocol-version'] = protocolVersion;
    return headers;
  };

  const closedError = () => new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${name}" connection is closed`, { target: name });

  const deliverUp = (message: JsonRpcMessage) => {
    if (!closed) transport.onmessage?.(message);
  };
  const upstreamExchange = (): Exchange => ({ waiting: new Set(), deliver: deliverUp });

  /** Every message read from an answer: marks answered requests, learns the negotiated version. */
  const receive = (message: JsonRpcMessage, exchange: Exchange) => {
    if (isResponse(message) && message.id !== null) {
      exchange.waiting.delete(idKey(message.id));
      if (message.id === initId) protocolVersion = negotiatedVersion(message) ?? protocolVersion;
    }
    exchange.deliver(message);
  };

  const readerFor = (exchange: Exchange): SseParser =>
    createSseMessageReader({
      target: name,
      maxMessageBytes: target.maxMessageBytes,
      logger,
      onmessage: (message) => receive(message, exchange),
      onundeliverable: (id, error) => {
        exchange.waiting.delete(idKey(id));
        transport.onundeliverable?.(id, error);
      },
    });

  const call = async (options: CallOptions, signal: AbortSignal): Promise<Dispatcher.ResponseData> => {
    try {
      return await request(target.url, { ...options, dispatcher: agent, signal });
    } catch (err) {
      if (signal.aborted || closed) throw closedError();
      throw toNetworkError(name, err);
    }
  };

  /** Reads an SSE answer to its end, resuming with GET + Last-Event-ID while answers are owed. */
  const readStream = async (first: ReadableBody, exchange: Exchange, signal: AbortSignal): Promise<void> => {
    const parser = readerFor(exchange);
    let body = first;
    let attempt = 0;
    for (;;) {
      let progressed = false;
      try {
        for await (const chunk of body) {
          parser.push(chunk);
          progressed = true;
        }
      } catch {
        // The connection broke; resumption below decides whether that loses anything.
      }
      if (exchange.waiting.size === 0 || signal.aborted || closed) return;
      if (progressed) attempt = 0;
      const lastEventId = parser.lastEventId;
      if (lastEventId === undefined || attempt >= STREAM_RECONNECT_ATTEMPTS) {
        const reason = lastEventId === undefined ? 'stream ended before the answer and cannot be resumed (no event id)' : 'stream could not be resumed';
        throw new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${name}": response ${reason}`, { target: name, reason });
      }
      await pause(parser.retryMs ?? backoff(attempt), signal);
      attempt++;
      if (signal.aborted || closed) return;
      logger.debug({ lastEventId, attempt }, 'resuming an upstream SSE stream');
      try {
        const res = await call({ method: 'GET', headers: headersFor({ accept: 'text/event-stream', 'last-event-id': lastEventId }) }, signal);
        if (res.statusCode !== 200 || mediaType(res.headers) !== 'text/event-stream') {
          await discard(res.body);
          continue;
        }
        parser.reset();
        body = res.body;
      } catch (err) {
        if (signal.aborted || closed) return;
        logger.debug({ err }, 'resuming an upstream SSE stream failed');
      }
    }
  };

  /** One POST and its whole answer. Throws GW_UPSTREAM_SESSION_EXPIRED (status 404) for a lost session. */
  const post = async (body: string, exchange: Exchange, signal: AbortSignal, initialize: boolean): Promise<void> => {
    const usedSession = sessionId;
    const res = await call({ method: 'POST', headers: headersFor({ accept: ACCEPT_POST, 'content-type': 'application/json' }), body }, signal);
    const status = res.statusCode;
    if (status === 404 && usedSession !== undefined) {
      await discard(res.body);
      throw new GatewayError('GW_UPSTREAM_SESSION_EXPIRED', `Upstream "${name}" no longer knows its session`, { target: name, status, usedSession });
    }
    if (status >= 400) throw toHttpError(name, status, await readHead(res.body, ERROR_BODY_BYTES));
    if (initialize) sessionId = headerValue(res.headers, 'mcp-session-id') ?? sessionId;
    const type = mediaType(res.headers);
    if (exchange.waiting.size === 0) {
      await discard(res.body); // 202 for notifications and responses
      return;
    }
    if (type === 'text/event-stream') return readStream(res.body, exchange, signal);
    if (type !== 'application/json') {
      await discard(res.body);
      throw toProtocolError(name, status, `expected application/json or text/event-stream, got ${type || 'no content type'}`);
    }
    const text = await readBounded(res.body, target.maxMessageBytes);
    if (text === undefined) {
      throw new GatewayError('GW_UPSTREAM_MESSAGE_TOO_LARGE', `Upstream "${name}" answered with more than ${target.maxMessageBytes} bytes`, {
        target: name,
        limit: target.maxMessageBytes,
      });
    }
    for (const message of toMessages(text, logger)) receive(message, exchange);
    if (exchange.waiting.size > 0) throw toProtocolError(name, status, 'the JSON body holds no answer to the request');
  };

  /** A 404 for `usedSession`: re-initialize when nothing would be lost, else end with an error. */
  const recover = (usedSession: string): Promise<void> => {
    if (sessionId !== usedSession) return reinitializing ?? Promise.resolve(); // already re-initialized
    if (stateful || initParams === undefined) {
      const error = new GatewayError(
        'GW_UPSTREAM_SESSION_EXPIRED',
        `Upstream "${name}" ended its session, which held state (subscriptions, log level or tasks) a new one would lose; initialize a new session`,
        { target: name, status: 404 },
      );
      fail(error);
      return Promise.reject(error);
    }
    reinitializing ??= reinitialize().finally(() => (reinitializing = undefined));
    return reinitializing;
  };

  const reinitialize = async (): Promise<void> => {
    reinitCount++;
    logger.warn({ reinitCount }, 'upstream session expired (404); re-initializing it transparently');
    sessionId = undefined;
    getStream?.abort();
    const controller = track(new AbortController());
    const id = `switchboard-reinit-${reinitCount}`;
    let answer: JsonRpcMessage | undefined;
    const exchange: Exchange = {
      waiting: new Set([idKey(id)]),
      deliver: (message) => (isResponse(message) && message.id === id ? (answer = message) : deliverUp(message)),
    };
    try {
      await post(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"initialize","params":${initParams}}`, exchange, controller.signal, true);
      if (answer === undefined || !('result' in answer)) throw new Error('initialize was refused');
      protocolVersion = negotiatedVersion(answer) ?? protocolVersion;
      await post('{"jsonrpc":"2.0","method":"notifications/initialized"}', upstreamExchange(), controller.signal, false);
    } catch (err) {
      const error = new GatewayError('GW_UPSTREAM_SESSION_EXPIRED', `Upstream "${name}" ended its session and re-initializing failed`, {
        target: name,
        reason: err instanceof GatewayError ? err.message : String(err),
      });
      fail(error);
      throw error;
    } finally {
      untrack(controller);
    }
    openGetStream();
  };

  const track = (controller: AbortController) => {
    open.add(controller);
    return controller;
  };
  const untrack = (controller: AbortController) => open.delete(controller);

  /** The standalone GET stream: reconnected while the transport lives, within a bound of failures. */
  const openGetStream = () => {
    if (closed) return;
    const controller = track(new AbortController());
    getStream = controller;
    const { signal } = controller;
    const parser = readerFor(upstreamExchange());
    void (async () => {
      let failures = 0;
      let lastError: GatewayError | undefined;
      while (!signal.aborted && !closed) {
        const usedSession = sessionId;
        const lastEventId = parser.lastEventId;
        try {
          const extra: Record<string, string> = { accept: 'text/event-stream' };
          if (lastEventId !== undefined) extra['last-event-id'] = lastEventId;
          const res = await call({ method: 'GET', headers: headersFor(extra) }, signal);
          if (res.statusCode === 405) {
            await discard(res.body);
            logger.debug('upstream offers no GET stream (405)');
            return;
          }
          if (res.statusCode === 404 && usedSession !== undefined) {
            await discard(res.body);
            await recover(usedSession).catch(() => undefined); // reopens the stream itself on success
            return;
          }
          if (res.statusCode >= 400) throw toHttpError(name, res.statusCode, await readHead(res.body, ERROR_BODY_BYTES));
          if (mediaType(res.headers) !== 'text/event-stream') {
            await discard(res.body);
            throw toProtocolError(name, res.statusCode, 'GET stream is not text/event-stream');
          }
          failures = 0;
          parser.reset();
          for await (const chunk of res.body) parser.push(chunk);
        } catch (err) {
          if (signal.aborted || closed) return;
          lastError = toNetworkError(name, err);
          failures++;
          if (failures > STREAM_RECONNECT_ATTEMPTS) {
            fail(
              new GatewayError('GW_UPSTREAM_CLOSED', `The GET stream of upstream "${name}" could not be re-established: ${lastError.message}`, {
                ...lastError.details,
                target: name,
                reason: 'GET stream lost',
              }),
            );
            return;
          }
          logger.debug({ failures, code: lastError.code }, 'upstream GET stream failed; reconnecting');
        }
        await pause(parser.retryMs ?? backoff(failures), signal);
      }
    })().finally(() => untrack(controller));
  };

  const sendDelete = async () => {
    if (sessionId === undefined) return;
    try {
      const res = await request(target.url, {
        method: 'DELETE',
        dispatcher: agent,
        headers: headersFor({}),
        signal: AbortSignal.timeout(DELETE_TIMEOUT_MS),
      });
      await discard(res.body);
      if (res.statusCode >= 400 && res.statusCode !== 405 && res.statusCode !== 404) logger.debug({ status: res.statusCode }, 'upstream refused DELETE');
    } catch (err) {
      logger.debug({ code: toNetworkError(name, err).code }, 'could not DELETE the upstream session');
    }
  };

  const abortAll = () => {
    for (const controller of open) controller.abort();
    open.clear();
    byRequest.clear();
  };

  /** The wire is lost for good: abort everything and tell the owner why. */
  const fail = (reason: GatewayError) => {
    if (closed) return;
    closed = true;
    abortAll();
    logger.warn({ code: reason.code, reason: reason.message }, 'upstream connection lost');
    if (reason.code !== 'GW_UPSTREAM_SESSION_EXPIRED') void sendDelete();
    transport.onclose?.(reason);
  };

  const exchangeOnce = async (text: string, exchange: Exchange, signal: AbortSignal, initialize: boolean): Promise<void> => {
    try {
      await post(text, exchange, signal, initialize);
    } catch (err) {
      if (!(err instanceof GatewayError) || err.code !== 'GW_UPSTREAM_SESSION_EXPIRED' || initialize || closed) throw err;
      await recover(err.details.usedSession as string);
      if (signal.aborted || closed) throw closedError();
      try {
        await post(text, exchange, signal, false);
      } catch (again) {
        if (again instanceof GatewayError && again.code === 'GW_UPSTREAM_SESSION_EXPIRED') {
          const error = new GatewayError('GW_UPSTREAM_SESSION_EXPIRED', `Upstream "${name}" lost its new session at once`, { target: name, status: 404 });
          fail(error);
          throw error;
        }
        throw again;
      }
    }
  };

  const transport: Transport = {
    start: () => (closed ? Promise.reject(closedError()) : Promise.resolve()),

    async send(message) {
      if (closed) throw closedError();
      const text = JSON.stringify(message);
      const exchange = upstreamExchange();
      const controller = track(new AbortController());
      let key: string | undefined;
      let initialize = false;
      if (isRequest(message)) {
        key = idKey(message.id);
        exchange.waiting.add(key);
        byRequest.set(key, controller);
        if (message.method === 'initialize') {
          initialize = true;
          initId = message.id;
          initParams = JSON.stringify(message.params ?? {});
        } else if (isStateBearing(message)) {
          stateful = true;
        }
      }
      if (reinitializing !== undefined) await reinitializing.catch(() => undefined);
      try {
        await exchangeOnce(text, exchange, controller.signal, initialize);
      } finally {
        untrack(controller);
        if (key !== undefined) byRequest.delete(key);
      }
      if (!isRequest(message) && !isResponse(message)) {
        if (message.method === 'notifications/initialized' && getStream === undefined) openGetStream();
        // A cancelled request's POST would otherwise stay open: servers send no answer to it.
        if (message.method === 'notifications/cancelled' && isObject(message.params)) {
          const requestId = message.params.requestId;
          if (typeof requestId === 'number' || typeof requestId === 'string') byRequest.get(idKey(requestId))?.abort();
        }
      }
    },

    close() {
      closing ??= (async () => {
        if (closed) return;
        closed = true;
        abortAll();
        await sendDelete();
        transport.onclose?.();
      })();
      return closing;
    },
  };
  return transport;
}
