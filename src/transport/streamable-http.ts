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
 *   (405 = the server offers none; remembered per target, so later sessions do not ask). A dropped
 *   SSE stream is resumed with `Last-Event-ID` (sse-resume.ts).
 * - 404 for our session id: re-initialize transparently (replay initialize + initialized, retry
 *   the request) only when the session holds no upstream state (http-session-state.ts). Otherwise
 *   GW_UPSTREAM_SESSION_EXPIRED, and the transport closes so the downstream session ends.
 * - `close()` sends DELETE for the session (405 tolerated).
 */
import { request, type Dispatcher } from 'undici';
import type { RemoteTargetConfig } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { idKey, isObject, isRequest, isResponse } from '../jsonrpc/envelope.ts';
import type { TraceContext } from '../jsonrpc/trace-context.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { discard, mediaType, readHead, upstreamHeaders, type ReadableBody } from './http-body.ts';
import { createAbortHandle, dispatchExchange, type AbortHandle, type BodyPlan, type DispatchedResponse, type ResponseHead } from './http-dispatch.ts';
import { boundPost, postTimeout, toHttpError, toNetworkError, toProtocolError } from './http-errors.ts';
import type { AgentPool } from './http-pool.ts';
import { createHttpSessionState, negotiatedVersion } from './http-session-state.ts';
import { createSseMessageReader, toMessages } from './sse-messages.ts';
import type { SseParser } from './sse-parser.ts';
import { keepStreamOpen, readAnswerStream } from './sse-resume.ts';
import type { Transport } from './types.ts';

export interface RemoteTransportOptions {
  target: RemoteTargetConfig;
  /** One logger per upstream, already bound to the session and target. */
  logger: Logger;
  /** The downstream's own Authorization; sent only when the target sets `forwardAuthorization`. */
  authorization?: string | undefined;
  /** The target's pooled agent (acquired by the connection) and what the pool knows of its endpoint. */
  agent: Dispatcher;
  agents: Pick<AgentPool, 'offersGetStream' | 'noteNoGetStream'>;
  /** Headers on top of the target's own (per-principal identity); never logged. */
  extraHeaders?: Readonly<Record<string, string>> | undefined;
}

const ACCEPT_POST = 'application/json, text/event-stream';
/** DELETE on close must not hold a session's end (or the gateway's shutdown) up for long. */
const DELETE_TIMEOUT_MS = 5_000;
/** How much of an error body is read to quote the upstream's message. */
const ERROR_BODY_BYTES = 4_096;

/** Where an exchange's messages go, and which request answers it still waits for. */
interface Exchange {
  readonly waiting: Set<string>;
  readonly deliver: (message: JsonRpcMessage) => void;
}

/** What closing the transport (or cancelling a request) aborts. */
interface Abortable {
  abort(): void;
}

interface CallOptions {
  method: 'GET' | 'POST' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
}

export function createStreamableHttpTransport(options: RemoteTransportOptions): Transport {
  const { target, logger, agent, agents } = options;
  const name = target.name;
  const { origin, pathname, search } = new URL(target.url);
  const path = pathname + search;
  const fixedHeaders = upstreamHeaders(target, options.authorization, options.extraHeaders);
  const session = createHttpSessionState();
  let closed = false;
  let closing: Promise<void> | undefined;
  let reinitializing: Promise<void> | undefined;
  let reinitCount = 0;
  let getStream: Abortable | undefined;
  /** Every open exchange, so closing aborts them all; requests also by id, so a cancel ends its POST. */
  const open = new Set<Abortable>();
  const byRequest = new Map<string, Abortable>();

  const headersFor = (extra: Record<string, string>) => session.headers(fixedHeaders, extra);

  const closedError = () => new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${name}" connection is closed`, { target: name });

  const deliverUp = (message: JsonRpcMessage) => {
    if (!closed) transport.onmessage?.(message);
  };
  const upstreamExchange = (): Exchange => ({ waiting: new Set(), deliver: deliverUp });

  /** Every message read from an answer: marks answered requests, learns the negotiated version. */
  const receive = (message: JsonRpcMessage, exchange: Exchange) => {
    if (isResponse(message) && message.id !== null) exchange.waiting.delete(idKey(message.id));
    session.received(message);
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

  /**
   * GET the session's stream (resuming after `lastEventId`). Undefined: the server offers none
   * (405), or it forgot the session, which `recover` then handles (re-initializing reopens it).
   */
  const openStream = async (lastEventId: string | undefined, signal: AbortSignal): Promise<ReadableBody | undefined> => {
    const usedSession = session.sessionId;
    const extra: Record<string, string> = { accept: 'text/event-stream' };
    if (lastEventId !== undefined) extra['last-event-id'] = lastEventId;
    const res = await call({ method: 'GET', headers: headersFor(extra) }, signal);
    if (res.statusCode === 405) {
      await discard(res.body);
      agents.noteNoGetStream(target);
      logger.debug('upstream offers no GET stream (405)');
      return undefined;
    }
    if (res.statusCode === 404 && usedSession !== undefined) {
      await discard(res.body);
      await recover(usedSession).catch(() => undefined);
      return undefined;
    }
    if (res.statusCode >= 400) throw toHttpError(name, res.statusCode, await readHead(res.body, ERROR_BODY_BYTES), logger);
    if (mediaType(res.headers) !== 'text/event-stream') {
      await discard(res.body);
      throw toProtocolError(name, res.statusCode, 'the GET stream is not text/event-stream');
    }
    return res.body;
  };

  /** One POST and its whole answer. Throws GW_UPSTREAM_SESSION_EXPIRED (status 404) for a lost session. */
  const post = async (body: string, exchange: Exchange, abort: AbortHandle, initialize: boolean, trace?: TraceContext): Promise<void> => {
    const usedSession = session.sessionId;
    const headers = headersFor({ accept: ACCEPT_POST, 'content-type': 'application/json' });
    // Each request is its own POST, so its trace context goes as the W3C headers (trace-context.ts).
    if (trace !== undefined) {
      headers.traceparent = trace.traceparent;
      if (trace.tracestate !== undefined) headers.tracestate = trace.tracestate;
    }
    // The version header belongs to requests after initialize (2025-06-18, "Protocol Version Header").
    if (initialize) delete headers['mcp-protocol-version'];
    let parser: SseParser | undefined;
    // The body's fate is decided from the head, before any of it is read (http-dispatch.ts).
    const plan = (head: ResponseHead): BodyPlan => {
      const status = head.statusCode;
      if (status >= 400) return { mode: 'head', limit: ERROR_BODY_BYTES };
      // Before the body: an SSE answer delivers the initialize result while it streams, and the
      // client's next request must already carry the session id.
      if (initialize) session.sessionId = head.sessionId ?? session.sessionId;
      if (exchange.waiting.size === 0) return { mode: 'head', limit: 0 };
      if (head.contentType === 'text/event-stream') {
        const reader = readerFor(exchange);
        parser = reader;
        return { mode: 'stream', onchunk: (chunk) => reader.push(chunk) };
      }
      if (head.contentType !== 'application/json') return { mode: 'head', limit: 0 };
      return { mode: 'collect', limit: target.maxMessageBytes };
    };
    let res: DispatchedResponse;
    try {
      res = await dispatchExchange(agent, { origin, path, method: 'POST', headers, body, abort, plan });
    } catch (err) {
      if (abort.aborted || closed) throw closedError();
      throw toNetworkError(name, err);
    }
    const status = res.statusCode;
    if (status === 404 && usedSession !== undefined) {
      throw new GatewayError('GW_UPSTREAM_SESSION_EXPIRED', `Upstream "${name}" no longer knows its session`, { target: name, status });
    }
    if (status >= 400) throw toHttpError(name, status, res.text, logger);
    if (exchange.waiting.size === 0 && parser === undefined) return; // 202 for notifications and responses
    if (parser !== undefined) {
      const options = { parser, signal: abort.signal, open: openStream, target: name, logger };
      return readAnswerStream({ events: res.streamed }, () => exchange.waiting.size > 0 && !closed, options);
    }
    const type = res.contentType;
    if (type !== 'application/json') {
      throw toProtocolError(name, status, `expected application/json or text/event-stream, got ${type || 'no content type'}`);
    }
    if (res.overflow) {
      throw new GatewayError('GW_UPSTREAM_MESSAGE_TOO_LARGE', `Upstream "${name}" answered with more than ${target.maxMessageBytes} bytes`, {
        target: name,
        limit: target.maxMessageBytes,
      });
    }
    for (const message of toMessages(res.text, logger)) receive(message, exchange);
    if (exchange.waiting.size > 0) throw toProtocolError(name, status, 'the JSON body holds no answer to the request');
  };

  /** A 404 for `usedSession`: re-initialize when nothing would be lost, else end with an error. */
  const recover = (usedSession: string): Promise<void> => {
    if (session.sessionId !== usedSession) return reinitializing ?? Promise.resolve(); // already re-initialized
    if (!session.replayable) {
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
    session.sessionId = undefined;
    getStream?.abort();
    const controller = track(createAbortHandle());
    const id = `switchboard-reinit-${reinitCount}`;
    let answer: JsonRpcMessage | undefined;
    const exchange: Exchange = {
      waiting: new Set([idKey(id)]),
      deliver: (message) => (isResponse(message) && message.id === id ? (answer = message) : deliverUp(message)),
    };
    try {
      await post(session.replay(id), exchange, controller, true);
      if (answer === undefined || !('result' in answer)) throw new Error('initialize was refused');
      session.protocolVersion = negotiatedVersion(answer) ?? session.protocolVersion;
      await post('{"jsonrpc":"2.0","method":"notifications/initialized"}', upstreamExchange(), controller, false);
    } catch (err) {
      const error = new GatewayError('GW_UPSTREAM_SESSION_EXPIRED', `Upstream "${name}" ended its session and re-initializing failed`, {
        target: name,
        reason: err instanceof GatewayError ? err.code : 'initialize was refused',
      });
      logger.warn({ err }, 'upstream session expired and re-initializing failed');
      fail(error);
      throw error;
    } finally {
      untrack(controller);
    }
    openGetStream();
  };

  const track = <T extends Abortable>(controller: T): T => {
    open.add(controller);
    return controller;
  };
  const untrack = (controller: Abortable) => open.delete(controller);

  /** The standalone GET stream: reopened while the transport lives, within a bound of failures. */
  const openGetStream = () => {
    if (closed || !agents.offersGetStream(target)) return;
    const controller = track(new AbortController());
    getStream = controller;
    const options = { parser: readerFor(upstreamExchange()), signal: controller.signal, open: openStream, target: name, logger };
    void keepStreamOpen(options, fail).finally(() => untrack(controller));
  };

  const sendDelete = async () => {
    if (session.sessionId === undefined) return;
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

  const exchangeOnce = async (text: string, exchange: Exchange, abort: AbortHandle, initialize: boolean, trace?: TraceContext): Promise<void> => {
    // post() reads the session id before its first await, so this is the one the 404 was for.
    const usedSession = session.sessionId;
    try {
      await post(text, exchange, abort, initialize, trace);
    } catch (err) {
      if (!(err instanceof GatewayError) || err.code !== 'GW_UPSTREAM_SESSION_EXPIRED' || usedSession === undefined || closed) throw err;
      await recover(usedSession);
      if (abort.aborted || closed) throw closedError();
      try {
        await post(text, exchange, abort, false, trace);
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

    async send(message, trace) {
      if (closed) throw closedError();
      const text = JSON.stringify(message);
      const exchange = upstreamExchange();
      const controller = track(createAbortHandle());
      let key: string | undefined;
      let initialize = false;
      if (isRequest(message)) {
        key = idKey(message.id);
        exchange.waiting.add(key);
        byRequest.set(key, controller);
        initialize = message.method === 'initialize';
      }
      session.sent(message);
      if (reinitializing !== undefined) await reinitializing.catch(() => undefined);
      const timer = key === undefined ? boundPost(controller, target.timeouts.requestMs) : undefined;
      try {
        await exchangeOnce(text, exchange, controller, initialize, trace);
      } catch (err) {
        throw timer !== undefined && controller.aborted && !closed ? postTimeout(name, message, target.timeouts.requestMs) : err;
      } finally {
        clearTimeout(timer);
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
