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
import { discard } from './http-body.ts';
import { createAbortHandle, type AbortHandle } from './http-dispatch.ts';
import { boundPost, postTimeout, toNetworkError } from './http-errors.ts';
import { negotiatedVersion } from './http-session-state.ts';
import { keepStreamOpen } from './sse-resume.ts';
import { postExchange } from './streamable-post.ts';
import { createStreamableWire, type Exchange, type RemoteTransportOptions, type WireOwner } from './streamable-wire.ts';
import type { SendOptions, Transport } from './types.ts';

/** DELETE on close must not hold a session's end (or the gateway's shutdown) up for long. */
const DELETE_TIMEOUT_MS = 5_000;

/** What closing the transport aborts. */
interface Abortable {
  abort(): void;
}

export function createStreamableHttpTransport(options: RemoteTransportOptions): Transport {
  const { target, logger, agents } = options;
  const name = target.name;
  let closed = false;
  let closing: Promise<void> | undefined;
  let reinitializing: Promise<void> | undefined;
  let reinitCount = 0;
  let getStream: Abortable | undefined;
  /** Every open exchange, so closing aborts them all. */
  const open = new Set<Abortable>();
  const live = () => !closed;

  const owner: WireOwner = {
    get closed() {
      return closed;
    },
    deliverUp: (message) => {
      if (!closed) transport.onmessage?.(message);
    },
    undeliverable: (id, error) => transport.onundeliverable?.(id, error),
    recover: (usedSession) => recover(usedSession),
  };
  const wire = createStreamableWire(options, owner);
  const { session, closedError } = wire;

  const post = (body: string, exchange: Exchange, abort: AbortHandle, initialize: boolean, send?: SendOptions) =>
    postExchange(wire, body, { exchange, abort, initialize, send, live });

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
      deliver: (message) => (isResponse(message) && message.id === id ? (answer = message) : owner.deliverUp(message)),
    };
    try {
      await post(session.replay(id), exchange, controller, true);
      if (answer === undefined || !('result' in answer)) throw new Error('initialize was refused');
      session.protocolVersion = negotiatedVersion(answer) ?? session.protocolVersion;
      await post('{"jsonrpc":"2.0","method":"notifications/initialized"}', wire.upstreamExchange(), controller, false);
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
    const streamOptions = { parser: wire.readerFor(wire.upstreamExchange()), signal: controller.signal, open: wire.openStream, target: name, logger };
    void keepStreamOpen(streamOptions, fail).finally(() => untrack(controller));
  };

  const sendDelete = async () => {
    if (session.sessionId === undefined) return;
    try {
      const res = await request(target.url, {
        method: 'DELETE',
        dispatcher: wire.agent,
        headers: wire.headersFor({}),
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

  const exchangeOnce = async (text: string, exchange: Exchange, abort: AbortHandle, initialize: boolean, send?: SendOptions): Promise<void> => {
    // postExchange reads the session id before its first await, so this is the one the 404 was for.
    const usedSession = session.sessionId;
    try {
      await post(text, exchange, abort, initialize, send);
    } catch (err) {
      if (!(err instanceof GatewayError) || err.code !== 'GW_UPSTREAM_SESSION_EXPIRED' || usedSession === undefined || closed) throw err;
      await recover(usedSession);
      if (abort.aborted || closed) throw closedError();
      try {
        await post(text, exchange, abort, false, send);
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

    async send(message, sendOptions) {
      if (closed) throw closedError();
      const text = JSON.stringify(message);
      const exchange = wire.upstreamExchange();
      const controller = track(createAbortHandle());
      const asks = isRequest(message);
      if (asks) exchange.waiting.add(idKey(message.id));
      // A cancelled request's POST would otherwise stay open: servers send no answer to it.
      const signal = sendOptions?.signal;
      const cancel = signal === undefined ? undefined : () => controller.abort();
      if (signal?.aborted) controller.abort();
      else if (cancel !== undefined) signal!.addEventListener('abort', cancel, { once: true });
      session.sent(message);
      if (reinitializing !== undefined) await reinitializing.catch(() => undefined);
      const timer = asks ? undefined : boundPost(controller, target.timeouts.requestMs);
      try {
        await exchangeOnce(text, exchange, controller, asks && message.method === 'initialize', sendOptions);
      } catch (err) {
        throw timer !== undefined && controller.aborted && !closed ? postTimeout(name, message, target.timeouts.requestMs) : err;
      } finally {
        clearTimeout(timer);
        untrack(controller);
        if (cancel !== undefined) signal!.removeEventListener('abort', cancel);
      }
      if (!asks && !isResponse(message) && message.method === 'notifications/initialized' && getStream === undefined) openGetStream();
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
