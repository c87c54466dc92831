/**
 * The Streamable HTTP upstream wire (MCP basic/transports, "Streamable HTTP", 2025-03-26 onwards)
 * over the target's pooled undici Agent. Three files, one per job: this one is the transport's
 * life (send, the GET stream, re-initializing, DELETE, close); streamable-post.ts is one POST and
 * its answer; streamable-wire.ts is what they share (headers, session state, SSE reading, GET).
 *
 * - Each message is one POST; `send` covers the whole exchange, so any failure rejects it and the
 *   correlator fails just that request. The send's `signal` ends a request's POST (a cancel or a
 *   timeout: servers send no answer to a cancelled request); its `headers` and `trace` go on the POST.
 * - `Mcp-Session-Id` from the initialize answer and `MCP-Protocol-Version` from its result go on
 *   every later request ("Session Management", "Protocol Version Header").
 * - After `notifications/initialized` the GET stream is opened for server-initiated messages
 *   (405 = the server offers none). A dropped SSE stream is resumed with `Last-Event-ID` (sse-resume.ts).
 * - 404 for our session id: re-initialize transparently (replay initialize + initialized, retry
 *   the request) only when the session holds no upstream state (http-session-state.ts). Otherwise
 *   GW_UPSTREAM_SESSION_EXPIRED, and the transport closes so the downstream session ends.
 * - `close()` sends DELETE for the session (405 tolerated).
 */
import { request } from 'undici';
import { GatewayError } from '../errors/gateway-error.ts';
import { idKey, isRequest, isResponse } from '../jsonrpc/envelope.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';
import type { HttpSessionState } from './http-session-state.ts';
import { discard } from './http-body.ts';
import { createAbortHandle, type AbortHandle } from './http-dispatch.ts';
import { boundPost, postTimeout, toNetworkError } from './http-errors.ts';
import { negotiatedVersion } from './http-session-state.ts';
import { keepStreamOpen } from './sse-resume.ts';
import { postExchange } from './streamable-post.ts';
import { createStreamableWire, type Exchange, type RemoteTransportOptions, type StreamableWire, type WireOwner } from './streamable-wire.ts';
import type { SendOptions, Transport } from './types.ts';

/** DELETE on close must not hold a session's end (or the gateway's shutdown) up for long. */
const DELETE_TIMEOUT_MS = 5_000;

/** What closing the transport aborts. */
interface Abortable {
  abort(): void;
}

export function createStreamableHttpTransport(options: RemoteTransportOptions): Transport {
  return new StreamableHttpTransport(options);
}

/**
 * The transport is its own state and the wire's owner (WireOwner): open exchanges, the GET stream,
 * a re-initialization under way; its methods are on the class, one copy for every transport.
 */
class StreamableHttpTransport implements Transport, WireOwner {
  private readonly options: RemoteTransportOptions;
  private readonly name: string;
  private readonly logger: RemoteTransportOptions['logger'];
  private readonly wire: StreamableWire;
  private readonly session: HttpSessionState;
  closed = false;
  private closing: Promise<void> | undefined = undefined;
  private reinitializing: Promise<void> | undefined = undefined;
  private reinitCount = 0;
  private getStream: Abortable | undefined = undefined;
  /** Every open exchange, so closing aborts them all. */
  private readonly exchanges = new Set<Abortable>();
  private readonly live = () => !this.closed;
  onmessage?: (message: JsonRpcMessage) => void;
  onclose?: (reason?: GatewayError) => void;
  onundeliverable?: (upstreamId: number, error: GatewayError) => void;

  constructor(options: RemoteTransportOptions) {
    this.options = options;
    this.name = options.target.name;
    this.logger = options.logger;
    this.wire = createStreamableWire(options, this);
    this.session = this.wire.session;
  }

  /** A field, not a method: the wire hands it on as every upstream exchange's `deliver`. */
  readonly deliverUp = (message: JsonRpcMessage): void => {
    if (!this.closed) this.onmessage?.(message);
  };

  undeliverable(id: number, error: GatewayError): void {
    this.onundeliverable?.(id, error);
  }

  private post(body: string, exchange: Exchange, abort: AbortHandle, initialize: boolean, send?: SendOptions): Promise<void> {
    return postExchange(this.wire, body, { exchange, abort, initialize, send, live: this.live });
  }

  /** A 404 for `usedSession`: re-initialize when nothing would be lost, else end with an error. */
  recover(usedSession: string): Promise<void> {
    const { name } = this;
    if (this.session.sessionId !== usedSession) return this.reinitializing ?? Promise.resolve(); // already re-initialized
    if (!this.session.replayable) {
      const error = new GatewayError(
        'GW_UPSTREAM_SESSION_EXPIRED',
        `Upstream "${name}" ended its session, which held state (subscriptions, log level or tasks) a new one would lose; initialize a new session`,
        { target: name, status: 404 },
      );
      this.fail(error);
      return Promise.reject(error);
    }
    this.reinitializing ??= this.reinitialize().finally(() => (this.reinitializing = undefined));
    return this.reinitializing;
  }

  private async reinitialize(): Promise<void> {
    const { session, wire, name, logger } = this;
    const reinitCount = ++this.reinitCount;
    logger.warn({ reinitCount }, 'upstream session expired (404); re-initializing it transparently');
    session.sessionId = undefined;
    this.getStream?.abort();
    const controller = this.track(createAbortHandle());
    const id = `switchboard-reinit-${reinitCount}`;
    let answer: JsonRpcMessage | undefined;
    const exchange: Exchange = {
      waiting: new Set([idKey(id)]),
      deliver: (message) => (isResponse(message) && message.id === id ? (answer = message) : this.deliverUp(message)),
    };
    try {
      await this.post(session.replay(id), exchange, controller, true);
      if (answer === undefined || !('result' in answer)) throw new Error('initialize was refused');
      session.protocolVersion = negotiatedVersion(answer) ?? session.protocolVersion;
      await this.post('{"jsonrpc":"2.0","method":"notifications/initialized"}', wire.upstreamExchange(), controller, false);
    } catch (err) {
      const error = new GatewayError('GW_UPSTREAM_SESSION_EXPIRED', `Upstream "${name}" ended its session and re-initializing failed`, {
        target: name,
        reason: err instanceof GatewayError ? err.code : 'initialize was refused',
      });
      logger.warn({ err }, 'upstream session expired and re-initializing failed');
      this.fail(error);
      throw error;
    } finally {
      this.exchanges.delete(controller);
    }
    this.openGetStream();
  }

  private track<T extends Abortable>(controller: T): T {
    this.exchanges.add(controller);
    return controller;
  }

  /** The standalone GET stream: reopened while the transport lives, within a bound of failures. */
  private openGetStream(): void {
    const { wire, name, logger } = this;
    if (this.closed || !this.options.agents.offersGetStream(this.options.target)) return;
    const controller = this.track(new AbortController());
    this.getStream = controller;
    const streamOptions = { parser: wire.readerFor(wire.upstreamExchange()), signal: controller.signal, open: wire.openStream, target: name, logger };
    void keepStreamOpen(streamOptions, (reason) => this.fail(reason)).finally(() => this.exchanges.delete(controller));
  }

  private async sendDelete(): Promise<void> {
    const { wire, logger } = this;
    if (this.session.sessionId === undefined) return;
    try {
      const res = await request(this.options.target.url, {
        method: 'DELETE',
        dispatcher: wire.agent,
        headers: wire.headersFor({}),
        signal: AbortSignal.timeout(DELETE_TIMEOUT_MS),
      });
      await discard(res.body);
      if (res.statusCode >= 400 && res.statusCode !== 405 && res.statusCode !== 404) logger.debug({ status: res.statusCode }, 'upstream refused DELETE');
    } catch (err) {
      logger.debug({ code: toNetworkError(this.name, err).code }, 'could not DELETE the upstream session');
    }
  }

  private abortAll(): void {
    for (const controller of this.exchanges) controller.abort();
    this.exchanges.clear();
  }

  /** The wire is lost for good: abort everything and tell the owner why. */
  private fail(reason: GatewayError): void {
    if (this.closed) return;
    this.closed = true;
    this.abortAll();
    this.logger.warn({ code: reason.code, reason: reason.message }, 'upstream connection lost');
    if (reason.code !== 'GW_UPSTREAM_SESSION_EXPIRED') void this.sendDelete();
    this.onclose?.(reason);
  }

  private async exchangeOnce(text: string, exchange: Exchange, abort: AbortHandle, initialize: boolean, send?: SendOptions): Promise<void> {
    // postExchange reads the session id before its first await, so this is the one the 404 was for.
    const usedSession = this.session.sessionId;
    try {
      await this.post(text, exchange, abort, initialize, send);
    } catch (err) {
      if (!(err instanceof GatewayError) || err.code !== 'GW_UPSTREAM_SESSION_EXPIRED' || usedSession === undefined || this.closed) throw err;
      await this.recover(usedSession);
      if (abort.aborted || this.closed) throw this.wire.closedError();
      try {
        await this.post(text, exchange, abort, false, send);
      } catch (again) {
        if (again instanceof GatewayError && again.code === 'GW_UPSTREAM_SESSION_EXPIRED') {
          const error = new GatewayError('GW_UPSTREAM_SESSION_EXPIRED', `Upstream "${this.name}" lost its new session at once`, { target: this.name, status: 404 });
          this.fail(error);
          throw error;
        }
        throw again;
      }
    }
  }

  start(): Promise<void> {
    return this.closed ? Promise.reject(this.wire.closedError()) : Promise.resolve();
  }

  async send(message: JsonRpcMessage, sendOptions?: SendOptions): Promise<void> {
    if (this.closed) throw this.wire.closedError();
    const { wire, name } = this;
    const requestMs = this.options.target.timeouts.requestMs;
    const text = JSON.stringify(message);
    const exchange = wire.upstreamExchange();
    const controller = this.track(createAbortHandle());
    const asks = isRequest(message);
    if (asks) exchange.waiting.add(idKey(message.id));
    // A cancelled request's POST would otherwise stay open: servers send no answer to it.
    const signal = sendOptions?.signal;
    const cancel = signal === undefined ? undefined : () => controller.abort();
    if (signal?.aborted) controller.abort();
    else if (cancel !== undefined) signal!.addEventListener('abort', cancel, { once: true });
    this.session.sent(message);
    if (this.reinitializing !== undefined) await this.reinitializing.catch(() => undefined);
    const timer = asks ? undefined : boundPost(controller, requestMs);
    try {
      await this.exchangeOnce(text, exchange, controller, asks && message.method === 'initialize', sendOptions);
    } catch (err) {
      throw timer !== undefined && controller.aborted && !this.closed ? postTimeout(name, message, requestMs) : err;
    } finally {
      clearTimeout(timer);
      this.exchanges.delete(controller);
      if (cancel !== undefined) signal!.removeEventListener('abort', cancel);
    }
    if (!asks && !isResponse(message) && message.method === 'notifications/initialized' && this.getStream === undefined) this.openGetStream();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.closed) return;
      this.closed = true;
      this.abortAll();
      await this.sendDelete();
      this.onclose?.();
    })();
    return this.closing;
  }
}
