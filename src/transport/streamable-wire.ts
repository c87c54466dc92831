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
  return new Wire(options, owner);
}

class Wire implements StreamableWire {
  readonly target: RemoteTargetConfig;
  readonly name: string;
  readonly logger: Logger;
  readonly agent: Dispatcher;
  readonly origin: string;
  readonly path: string;
  readonly session: HttpSessionState = createHttpSessionState();
  readonly options: RemoteTransportOptions;
  readonly owner: WireOwner;
  readonly fixedHeaders: Record<string, string>;

  constructor(options: RemoteTransportOptions, owner: WireOwner) {
    const { target, logger, agent } = options;
    this.options = options;
    this.owner = owner;
    this.target = target;
    this.name = target.name;
    this.logger = logger;
    this.agent = agent;
    const { origin, pathname, search } = new URL(target.url);
    this.origin = origin;
    this.path = pathname + search;
    this.fixedHeaders = upstreamHeaders(target, options.authorization, options.extraHeaders);
  }

  closedError(): GatewayError {
    return new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${this.name}" connection is closed`, { target: this.name });
  }

  headersFor(extra: Record<string, string>): Record<string, string> {
    return this.session.headers(this.fixedHeaders, extra);
  }

  authorize(): Promise<void> | undefined {
    const credential = this.options.credential;
    return credential === undefined ? undefined : authorizeWith(this.fixedHeaders, credential);
  }

  upstreamExchange(): Exchange {
    return { waiting: new Set(), deliver: this.owner.deliverUp };
  }

  receive(message: JsonRpcMessage, exchange: Exchange): void {
    if (isResponse(message) && message.id !== null) exchange.waiting.delete(idKey(message.id));
    this.session.received(message);
    exchange.deliver(message);
  }

  readerFor(exchange: Exchange): SseParser {
    return createSseMessageReader({
      target: this.name,
      maxMessageBytes: this.target.maxMessageBytes,
      logger: this.logger,
      onmessage: (message) => this.receive(message, exchange),
      onundeliverable: (id, error) => {
        exchange.waiting.delete(idKey(id));
        this.owner.undeliverable(id, error);
      },
    });
  }

  /** An arrow field: the stream readers take it detached (`open`). */
  readonly openStream = (lastEventId: string | undefined, signal: AbortSignal): Promise<ReadableBody | undefined> => openStream(this, lastEventId, signal);
}

async function authorizeWith(fixedHeaders: Record<string, string>, credential: () => Promise<string>): Promise<void> {
  fixedHeaders.authorization = `Bearer ${await credential()}`;
}

async function get(wire: Wire, headers: Record<string, string>, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
  try {
    return await request(wire.target.url, { method: 'GET', headers, dispatcher: wire.agent, signal });
  } catch (err) {
    if (signal.aborted || wire.owner.closed) throw wire.closedError();
    throw toNetworkError(wire.name, err);
  }
}

async function openStream(wire: Wire, lastEventId: string | undefined, signal: AbortSignal): Promise<ReadableBody | undefined> {
  const { target, name, logger, session, owner, options } = wire;
  await wire.authorize();
  const usedSession = session.sessionId;
  const extra: Record<string, string> = { accept: 'text/event-stream' };
  if (lastEventId !== undefined) extra['last-event-id'] = lastEventId;
  const res = await get(wire, wire.headersFor(extra), signal);
  if (res.statusCode === 405) {
    await discard(res.body);
    options.agents.noteNoGetStream(target);
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
}
