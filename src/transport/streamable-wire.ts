/**
 * What every exchange of one Streamable HTTP upstream session shares (streamable-http.ts is the
 * transport built on it): the target's address and headers (with the exchanged credential, asked
 * before every request), the session's id and version (http-session-state.ts), the reader that
 * turns an answer's SSE events into messages, and the GET that opens or resumes a stream.
 *
 * A GET answered 405 means the server offers no stream (remembered per target, so later sessions
 * do not ask); a 404 for our session id is the lifecycle's to handle (`recover`).
 */
import { request, type Dispatcher } from 'undici';
import type { RemoteTargetConfig } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { idKey, isResponse } from '../jsonrpc/envelope.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { discard, mediaType, readHead, upstreamHeaders, type ReadableBody } from './http-body.ts';
import { toHttpError, toNetworkError, toProtocolError } from './http-errors.ts';
import type { AgentPool } from './http-pool.ts';
import { createHttpSessionState, type HttpSessionState } from './http-session-state.ts';
import { createSseMessageReader } from './sse-messages.ts';
import type { SseParser } from './sse-parser.ts';

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
  /**
   * The bearer token to send as `Authorization`, asked before every request (an exchanged token,
   * RFC 8693, renewed as it nears expiry). Rejects with the GatewayError the request then fails with.
   */
  credential?: (() => Promise<string>) | undefined;
  /** The upstream answered 401 to the credential: forget it, so the next request gets a fresh one. */
  credentialRejected?: (() => void) | undefined;
  /**
   * The upstream answered 403 with this challenge: the error the request fails with instead of
   * GW_UPSTREAM_HTTP_ERROR (a consent for more scopes, `insufficient_scope`); undefined: the usual.
   */
  scopeRefused?: ((challenge: string) => Promise<GatewayError | undefined>) | undefined;
}

/** How much of an error body is read to quote the upstream's message. */
export const ERROR_BODY_BYTES = 4_096;

/** Where an exchange's messages go, and which request answers it still waits for. */
export interface Exchange {
  readonly waiting: Set<string>;
  readonly deliver: (message: JsonRpcMessage) => void;
}

/** What the wire asks of the transport that owns it. */
export interface WireOwner {
  readonly closed: boolean;
  /** A message for the correlator (dropped once closed). */
  deliverUp(message: JsonRpcMessage): void;
  /** An answer too large to deliver, attributed to its request. */
  undeliverable(upstreamId: number, error: GatewayError): void;
  /** A 404 for `usedSession`: re-initialize when nothing would be lost, else end with an error. */
  recover(usedSession: string): Promise<void>;
}

export interface StreamableWire {
  readonly target: RemoteTargetConfig;
  readonly name: string;
  readonly logger: Logger;
  readonly agent: Dispatcher;
  readonly origin: string;
  readonly path: string;
  readonly session: HttpSessionState;
  readonly options: RemoteTransportOptions;
  closedError(): GatewayError;
  /** The fixed headers, the session's, then `extra`'s (a fresh object each time). */
  headersFor(extra: Record<string, string>): Record<string, string>;
  /** Puts the current credential into the fixed headers; undefined without one (no await). */
  authorize(): Promise<void> | undefined;
  /** An exchange whose messages go to the correlator. */
  upstreamExchange(): Exchange;
  /** Every message read from an answer: marks answered requests, learns the negotiated version. */
  receive(message: JsonRpcMessage, exchange: Exchange): void;
  readerFor(exchange: Exchange): SseParser;
  /** GET the session's stream (resuming after `lastEventId`); undefined: none offered, or session lost. */
  openStream(lastEventId: string | undefined, signal: AbortSignal): Promise<ReadableBody | undefined>;
}

export function createStreamableWire(options: RemoteTransportOptions, owner: WireOwner): StreamableWire {
  const { target, logger, agent, agents, credential } = options;
  const name = target.name;
  const { origin, pathname, search } = new URL(target.url);
  const fixedHeaders = upstreamHeaders(target, options.authorization, options.extraHeaders);
  const session = createHttpSessionState();

  const closedError = () => new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${name}" connection is closed`, { target: name });
  const headersFor = (extra: Record<string, string>) => session.headers(fixedHeaders, extra);
  const authorize = credential === undefined ? () => undefined : async () => void (fixedHeaders.authorization = `Bearer ${await credential()}`);

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
        owner.undeliverable(id, error);
      },
    });

  const get = async (headers: Record<string, string>, signal: AbortSignal): Promise<Dispatcher.ResponseData> => {
    try {
      return await request(target.url, { method: 'GET', headers, dispatcher: agent, signal });
    } catch (err) {
      if (signal.aborted || owner.closed) throw closedError();
      throw toNetworkError(name, err);
    }
  };

  const openStream = async (lastEventId: string | undefined, signal: AbortSignal): Promise<ReadableBody | undefined> => {
    await authorize();
    const usedSession = session.sessionId;
    const extra: Record<string, string> = { accept: 'text/event-stream' };
    if (lastEventId !== undefined) extra['last-event-id'] = lastEventId;
    const res = await get(headersFor(extra), signal);
    if (res.statusCode === 405) {
      await discard(res.body);
      agents.noteNoGetStream(target);
      logger.debug('upstream offers no GET stream (405)');
      return undefined;
    }
    if (res.statusCode === 404 && usedSession !== undefined) {
      await discard(res.body);
      await owner.recover(usedSession).catch(() => undefined);
      return undefined;
    }
    if (res.statusCode === 401) options.credentialRejected?.();
    if (res.statusCode >= 400) throw toHttpError(name, res.statusCode, await readHead(res.body, ERROR_BODY_BYTES), logger);
    if (mediaType(res.headers) !== 'text/event-stream') {
      await discard(res.body);
      throw toProtocolError(name, res.statusCode, 'the GET stream is not text/event-stream');
    }
    return res.body;
  };

  return {
    target,
    name,
    logger,
    agent,
    origin,
    path: pathname + search,
    session,
    options,
    closedError,
    headersFor,
    authorize,
    upstreamExchange: () => ({ waiting: new Set(), deliver: owner.deliverUp }),
    receive,
    readerFor,
    openStream,
  };
}
