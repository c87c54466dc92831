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
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, RequestId, RequestMeta } from '../jsonrpc/types.ts';
import type { TimeoutPolicy } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { SENT, type SendOptions, type Transport } from '../transport/types.ts';
import { armTimer, type CorrelatorState, fail, onProgress, type Pending, type PendingHandler, PendingSend, sendCancel, settleIdle, take } from './correlator-pending.ts';

export type { PendingHandler } from './correlator-pending.ts';

/** What a request carries up besides its text: its own headers and trace context (the signal is the correlator's). */
export type RequestOptions = Pick<SendOptions, 'headers' | 'trace'>;

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

/** Pending requests, their timers and cancellation are in correlator-pending.ts; the per-message paths stay here. */
export function createCorrelator({ transport, target, logger }: CorrelatorOptions): Correlator {
  const s: CorrelatorState = { transport, target, logger, pending: new Map<number, Pending>(), nextId: 1, destroyedWith: undefined, idleWaiters: [] };

  const correlator: Correlator = {
    request<C>(message: JsonRpcRequest, handler: PendingHandler<C>, context: C, timeouts: TimeoutPolicy, options?: RequestOptions) {
      return forward(s, message, handler, context, timeouts, options);
    },

    send(message) {
      if (s.destroyedWith !== undefined) return Promise.reject(s.destroyedWith);
      return transport.send(message);
    },

    cancel(upstreamId, reason = 'Cancelled by the client') {
      const entry = take(s, upstreamId);
      if (entry === undefined) return false;
      sendCancel(s, upstreamId, entry, reason);
      settleIdle(s);
      return true;
    },

    get inflight() {
      return s.pending.size;
    },

    idle() {
      if (s.pending.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => s.idleWaiters.push(resolve));
    },

    destroy(error) {
      if (s.destroyedWith === undefined) s.destroyedWith = error;
      const ids = [...s.pending.keys()];
      for (const id of ids) fail(s, id, error);
      settleIdle(s);
    },
  };

  transport.onmessage = (message) => route(s, correlator, message);
  transport.onundeliverable = (upstreamId, error) => fail(s, upstreamId, error);

  return correlator;
}

/** `request`: a fresh upstream id, the caller's progress token swapped for it, one map entry and one timer. */
function forward<C>(s: CorrelatorState, message: JsonRpcRequest, handler: PendingHandler<C>, context: C, timeouts: TimeoutPolicy, options: RequestOptions | undefined): number {
  const upstreamId = s.nextId++;
  if (s.destroyedWith !== undefined) {
    handler.onerror(s.destroyedWith, context);
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
    send: new PendingSend(options?.headers, options?.trace),
    timer: undefined,
  };
  s.pending.set(upstreamId, entry);
  armTimer(s, upstreamId, entry);
  message.id = upstreamId;
  const sent = s.transport.send(message, entry.send);
  // The shared settled promise (transport/types.ts) cannot fail: no `.catch` for it.
  if (sent === SENT) return upstreamId;
  const { target } = s;
  sent.catch((err: unknown) => {
    fail(
      s,
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
}

/** Each message from upstream: an answer to a pending request, a server->client request, or a notification. */
function route(s: CorrelatorState, correlator: Correlator, message: JsonRpcMessage): void {
  if (isResponse(message)) {
    const id = message.id;
    const entry = typeof id === 'number' ? take(s, id) : undefined;
    if (entry === undefined) {
      s.logger.debug({ id }, 'response for no pending request (late, cancelled or timed out); dropped');
      return;
    }
    message.id = entry.clientId;
    entry.handler.onresponse(message, entry.context);
    settleIdle(s);
    return;
  }
  if (isRequest(message)) {
    if (correlator.onrequest) correlator.onrequest(message);
    else s.logger.warn({ method: message.method }, 'server->client request with nobody to take it');
    return;
  }
  if (message.method === 'notifications/progress') {
    onProgress(s, message);
    return;
  }
  correlator.onnotification?.(message);
}
