/**
 * Correlator: one per upstream connection. Owns the upstream id space.
 *
 * Every request that goes up (the downstream's, and the gateway's own) gets a fresh integer id from
 * this connection's counter, so nothing collides however many sessions or callers share the wire.
 * The caller's id is restored on the answer exactly as it was (string, number or raw big number).
 * A request's `_meta.progressToken` is rewritten to the upstream id too (unique by construction),
 * so a progress notification finds its request with one map lookup and gets the caller's token back.
 *
 * Hot path: a request costs one map entry and one timer; handlers are plain objects (no closure per
 * message); messages are mutated in place, never copied.
 */
import { GatewayError } from '../errors/gateway-error.ts';
import { isObject, isRequest, isResponse } from '../jsonrpc/envelope.ts';
import type {
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  RequestId,
  RequestMeta,
} from '../jsonrpc/types.ts';
import type { TimeoutPolicy } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { SENT, type SendOptions, type Transport } from '../transport/types.ts';

/** What a request carries up besides its text: its own headers and trace context (the signal is the correlator's). */
export type RequestOptions = Pick<SendOptions, 'headers' | 'trace'>;

/**
 * Receives the outcome of forwarded requests. Exactly one of onresponse/onerror is called, once per
 * request, with the context given to `request`. One handler can serve many requests (a session
 * passes itself and a per-request record), so no closure is made per message.
 */
export interface PendingHandler<C> {
  /** The upstream's answer with the caller's id restored. */
  onresponse(response: JsonRpcResponse, context: C): void;
  /** The request failed at the gateway: timeout, upstream gone, undeliverable answer. */
  onerror(error: GatewayError, context: C): void;
  /** A `notifications/progress` for this request, token already restored. */
  onprogress?(notification: JsonRpcNotification, context: C): void;
}

interface Pending {
  readonly handler: PendingHandler<unknown>;
  readonly context: unknown;
  readonly clientId: RequestId;
  readonly clientToken: RequestId | undefined;
  readonly method: string;
  readonly startedAt: number;
  readonly timeouts: TimeoutPolicy;
  /** Aborted when the request is withdrawn (cancel, timeout): the transport's send signal. */
  readonly abort: AbortController;
  timer: NodeJS.Timeout | undefined;
}

export interface Correlator {
  /**
   * Sends a request upstream under a fresh id. Mutates `message` (id, progress token). Returns the
   * upstream id, which `cancel` takes. The handler is told the outcome; a send failure reaches it too.
   * `options`: the request's own headers and the W3C context of the gateway's upstream span
   * (tracing on), handed to the transport with the signal `cancel` and a timeout abort.
   */
  request<C>(message: JsonRpcRequest, handler: PendingHandler<C>, context: C, timeouts: TimeoutPolicy, options?: RequestOptions): number;
  /** Forwards a notification or a response (to a server->client request) as it is. */
  send(message: JsonRpcMessage): Promise<void>;
  /**
   * Withdraws a request: its send's signal is aborted (a wire with one exchange per request ends
   * it) and `notifications/cancelled` goes upstream unless the transport took the request back
   * before the peer saw it. The handler is not called.
   */
  cancel(upstreamId: number, reason?: string): boolean;
  /** Requests still waiting for an answer. */
  readonly inflight: number;
  /** Resolves when nothing is in flight (immediately if nothing is). */
  idle(): Promise<void>;
  /** Fails everything pending with `error`, now. Later requests fail with it too. */
  destroy(error: GatewayError): void;
  /** Upstream-initiated requests (sampling, elicitation, roots, ping): ids are the upstream's own. */
  onrequest?: (request: JsonRpcRequest) => void;
  /** Upstream notifications other than progress for a pending request. */
  onnotification?: (notification: JsonRpcNotification) => void;
}

export interface CorrelatorOptions {
  transport: Transport;
  /** Target name, for error data. */
  target: string;
  logger: Logger;
}

export function createCorrelator({ transport, target, logger }: CorrelatorOptions): Correlator {
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let destroyedWith: GatewayError | undefined;
  let idleWaiters: Array<() => void> = [];

  const settleIdle = () => {
    if (pending.size !== 0 || idleWaiters.length === 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  const take = (upstreamId: number): Pending | undefined => {
    const entry = pending.get(upstreamId);
    if (entry === undefined) return undefined;
    pending.delete(upstreamId);
    if (entry.timer !== undefined) clearTimeout(entry.timer);
    return entry;
  };

  const fail = (upstreamId: number, error: GatewayError) => {
    const entry = take(upstreamId);
    if (entry === undefined) return;
    entry.handler.onerror(error, entry.context);
    settleIdle();
  };

  const sendCancel = (upstreamId: number, entry: Pending, reason: string) => {
    // Still queued for a child that is not reading: take it back; the upstream never saw it.
    if (transport.withdraw?.(upstreamId) === true) return entry.abort.abort();
    const note: JsonRpcNotification = {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: upstreamId, reason },
    };
    transport.send(note).catch((err: unknown) => logger.debug({ err }, 'could not send notifications/cancelled upstream'));
    // After the note is on its way: a wire with one exchange per request ends the request's own.
    entry.abort.abort();
  };

  const onTimeout = (upstreamId: number) => {
    const entry = pending.get(upstreamId);
    if (entry === undefined) return;
    const elapsedMs = Date.now() - entry.startedAt;
    logger.warn({ upstreamId, method: entry.method, elapsedMs }, 'upstream request timed out; cancelling it upstream');
    sendCancel(upstreamId, entry, `Timed out after ${elapsedMs} ms at the gateway`);
    fail(
      upstreamId,
      new GatewayError('GW_UPSTREAM_TIMEOUT', `Upstream "${target}" did not answer ${entry.method} within ${elapsedMs} ms`, {
        target,
        method: entry.method,
        timeoutMs: entry.timeouts.requestMs,
      }),
    );
  };

  const armTimer = (upstreamId: number, entry: Pending) => {
    const { requestMs, maxTotalMs } = entry.timeouts;
    let delay = requestMs;
    if (maxTotalMs > 0) delay = Math.min(delay, Math.max(0, entry.startedAt + maxTotalMs - Date.now()));
    entry.timer = setTimeout(onTimeout, delay, upstreamId);
    entry.timer.unref();
  };

  const onProgress = (notification: JsonRpcNotification) => {
    const params = notification.params;
    const token = params?.progressToken;
    const upstreamId = typeof token === 'number' ? token : typeof token === 'string' ? Number(token) : NaN;
    const entry = pending.get(upstreamId);
    if (entry === undefined || entry.clientToken === undefined || params === undefined) {
      logger.debug({ token }, 'progress for no pending request; dropped');
      return;
    }
    params.progressToken = entry.clientToken;
    if (entry.timeouts.resetOnProgress && entry.timer !== undefined) {
      clearTimeout(entry.timer);
      armTimer(upstreamId, entry);
    }
    entry.handler.onprogress?.(notification, entry.context);
  };

  const correlator: Correlator = {
    request<C>(message: JsonRpcRequest, handler: PendingHandler<C>, context: C, timeouts: TimeoutPolicy, options?: RequestOptions) {
      const upstreamId = nextId++;
      if (destroyedWith !== undefined) {
        handler.onerror(destroyedWith, context);
        return upstreamId;
      }
      const clientId = message.id;
      let clientToken: RequestId | undefined;
      const meta = message.params?._meta;
      if (isObject(meta) && (meta as RequestMeta).progressToken !== undefined) {
        clientToken = (meta as RequestMeta).progressToken;
        (meta as RequestMeta).progressToken = upstreamId;
      }
      const entry: Pending = {
        handler: handler as PendingHandler<unknown>,
        context,
        clientId,
        clientToken,
        method: message.method,
        startedAt: Date.now(),
        timeouts,
        abort: new AbortController(),
        timer: undefined,
      };
      pending.set(upstreamId, entry);
      armTimer(upstreamId, entry);
      message.id = upstreamId;
      const sendOptions: SendOptions =
        options === undefined ? { signal: entry.abort.signal } : { signal: entry.abort.signal, headers: options.headers, trace: options.trace };
      const sent = transport.send(message, sendOptions);
      // The shared settled promise (transport/types.ts) cannot fail: no `.catch` for it.
      if (sent === SENT) return upstreamId;
      sent.catch((err: unknown) => {
        fail(
          upstreamId,
          err instanceof GatewayError
            ? err
            : new GatewayError('GW_UPSTREAM_CLOSED', `Could not write to upstream "${target}"`, {
                target,
                reason: (err as NodeJS.ErrnoException | undefined)?.code ?? 'write failed',
              }),
        );
      });
      return upstreamId;
    },

    send(message) {
      if (destroyedWith !== undefined) return Promise.reject(destroyedWith);
      return transport.send(message);
    },

    cancel(upstreamId, reason = 'Cancelled by the client') {
      const entry = take(upstreamId);
      if (entry === undefined) return false;
      sendCancel(upstreamId, entry, reason);
      settleIdle();
      return true;
    },

    get inflight() {
      return pending.size;
    },

    idle() {
      if (pending.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },

    destroy(error) {
      if (destroyedWith === undefined) destroyedWith = error;
      const ids = [...pending.keys()];
      for (const id of ids) fail(id, error);
      settleIdle();
    },
  };

  transport.onmessage = (message) => {
    if (isResponse(message)) {
      const id = message.id;
      const entry = typeof id === 'number' ? take(id) : undefined;
      if (entry === undefined) {
        logger.debug({ id }, 'response for no pending request (late, cancelled or timed out); dropped');
        return;
      }
      message.id = entry.clientId;
      entry.handler.onresponse(message, entry.context);
      settleIdle();
      return;
    }
    if (isRequest(message)) {
      if (correlator.onrequest) correlator.onrequest(message);
      else logger.warn({ method: message.method }, 'server->client request with nobody to take it');
      return;
    }
    if (message.method === 'notifications/progress') {
      onProgress(message);
      return;
    }
    correlator.onnotification?.(message);
  };

  transport.onundeliverable = (upstreamId, error) => fail(upstreamId, error);

  return correlator;
}
