/**
 * One session's view of a shared child (shared-pool.ts): an UpstreamConnection whose correlator
 * forwards to the child's correlator but keeps the session's own requests apart, so the session
 * code is the same in both modes.
 *
 * - `initialize` never reaches the child: the pool did the handshake once; the answer is the
 *   child's result with the protocol version negotiated for this session (see `negotiate`).
 * - `notifications/initialized` from the session is dropped (the child had one already).
 * - `inflight`, `idle()` and `destroy()` count only this session's requests; destroying withdraws
 *   them upstream (notifications/cancelled) and leaves the other sessions' requests alone.
 * - `close()` releases the child; the pool closes it when no session is left on it.
 */
import { GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import { idKey, isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcErrorObject, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { UpstreamConnection } from './connection.ts';
import type { Correlator, PendingHandler, RequestOptions } from './correlator.ts';

/** The child's initialize answer: its result, or the error it refused with. */
export type SharedHandshake = { readonly result: JsonObject; readonly version: string } | { readonly error: JsonRpcErrorObject };

/** One child of the pool. */
export interface SharedSlot {
  readonly index: number;
  connection: UpstreamConnection | undefined;
  handshake: Promise<SharedHandshake> | undefined;
  readonly leases: Set<SharedLease>;
}

/** What a lease needs of its pool (shared-pool.ts implements it; the import goes one way). */
export interface LeasePool {
  readonly target: TargetConfig;
  /** Binds a lease to the least-used child. */
  attach(lease: SharedLease): SharedSlot;
  /** The child's handshake, started with these initialize params if it is not yet. */
  ready(slot: SharedSlot, params: JsonObject | undefined): Promise<SharedHandshake>;
  /** The lease is done with its child; the child closes when no lease is left. */
  release(lease: SharedLease, slot: SharedSlot): Promise<void>;
}

/** What the pool needs of a lease besides the UpstreamConnection. */
export interface SharedLease extends UpstreamConnection {
  /** A server->client request attributed to this session. */
  takeRequest(request: JsonRpcRequest): void;
  /** A notification for this session (broadcast or attributed). */
  takeNotification(notification: JsonRpcNotification): void;
  /** True when this session was given the server->client request with this id key. */
  ownsRequest(key: string): boolean;
  /** The child died: pending requests have failed already; tell the session. */
  exited(reason: GatewayError): void;
}

/** Per request of this session in flight on the shared child. */
interface Own {
  readonly handler: PendingHandler<unknown>;
  readonly context: unknown;
  id: number;
  settled: boolean;
}

/**
 * The version this session gets: its own when the gateway knows it and it is not newer than what
 * the child speaks (date-named versions compare as strings), else the child's. The spec lets a
 * server answer with another version than the one asked (basic/lifecycle, "Version Negotiation").
 */
export function negotiate(requested: unknown, child: string, known: ReadonlySet<string>): string {
  return typeof requested === 'string' && known.has(requested) && requested <= child ? requested : child;
}

/** `known`: the protocol versions the gateway speaks. */
export function createSharedLease(pool: LeasePool, logger: Logger, known: ReadonlySet<string>): SharedLease {
  const target = pool.target;
  const own = new Map<number, Own>();
  const serverRequests = new Set<string>();
  let slot: SharedSlot | undefined;
  let closedWith: GatewayError | undefined;
  let closing: Promise<void> | undefined;
  let idleWaiters: Array<() => void> = [];

  const settleIdle = () => {
    if (own.size !== 0 || idleWaiters.length === 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  // One handler object for all of this session's requests; the per-request record is the context.
  const relay: PendingHandler<Own> = {
    onresponse(response, rec) {
      rec.settled = true;
      own.delete(rec.id);
      rec.handler.onresponse(response, rec.context);
      settleIdle();
    },
    onerror(error, rec) {
      rec.settled = true;
      own.delete(rec.id);
      rec.handler.onerror(error, rec.context);
      settleIdle();
    },
    onprogress(notification, rec) {
      rec.handler.onprogress?.(notification, rec.context);
    },
  };

  const closedError = () => closedWith ?? new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${target.name}" is not connected`, { target: target.name });

  const initializeLocally = (request: JsonRpcRequest, handler: PendingHandler<unknown>, context: unknown) => {
    if (slot === undefined) {
      handler.onerror(closedError(), context);
      return;
    }
    const requested = request.params?.protocolVersion;
    pool.ready(slot, request.params).then(
      (handshake) => {
        const answer: JsonRpcResponse =
          'error' in handshake
            ? { jsonrpc: '2.0', id: request.id, error: handshake.error }
            : { jsonrpc: '2.0', id: request.id, result: { ...handshake.result, protocolVersion: negotiate(requested, handshake.version, known) } };
        handler.onresponse(answer, context);
      },
      (err: unknown) => handler.onerror(toGatewayError(err), context),
    );
  };

  const correlator: Correlator = {
    request<C>(message: JsonRpcRequest, handler: PendingHandler<C>, context: C, timeouts: Parameters<Correlator['request']>[3], options?: RequestOptions) {
      const shared = slot?.connection?.correlator;
      if (closedWith !== undefined || shared === undefined) {
        if (message.method === 'initialize' && closedWith === undefined) {
          initializeLocally(message, handler as PendingHandler<unknown>, context);
        } else {
          handler.onerror(closedError(), context);
        }
        return 0;
      }
      if (message.method === 'initialize') {
        initializeLocally(message, handler as PendingHandler<unknown>, context);
        return 0;
      }
      const rec: Own = { handler: handler as PendingHandler<unknown>, context, id: 0, settled: false };
      rec.id = shared.request(message, relay, rec, timeouts, options);
      if (!rec.settled) own.set(rec.id, rec);
      return rec.id;
    },

    send(message: JsonRpcMessage) {
      if (closedWith !== undefined) return Promise.reject(closedWith);
      const shared = slot?.connection?.correlator;
      if (shared === undefined) return Promise.reject(closedError());
      if ('method' in message) {
        // The child was initialized once, by the pool.
        if (message.method === 'notifications/initialized') return Promise.resolve();
        // A session that ends cancels its calls this way: withdraw them from the shared child here,
        // so the note goes once and the lease's close (destroy) finds nothing left to cancel again.
        const params: unknown = message.params;
        if (message.method === 'notifications/cancelled' && isObject(params) && typeof params.requestId === 'number' && own.has(params.requestId)) {
          shared.cancel(params.requestId, typeof params.reason === 'string' ? params.reason : undefined);
          return Promise.resolve();
        }
      } else if ('id' in message && message.id !== null) {
        serverRequests.delete(idKey(message.id)); // this session answered one of the child's requests
      }
      return shared.send(message);
    },

    cancel(upstreamId, reason) {
      if (!own.delete(upstreamId)) return false;
      const done = slot?.connection?.correlator.cancel(upstreamId, reason) ?? false;
      settleIdle();
      return done;
    },

    get inflight() {
      return own.size;
    },

    idle() {
      if (own.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },

    destroy(error) {
      closedWith ??= error;
      const shared = slot?.connection?.correlator;
      const recs = [...own.values()];
      own.clear();
      for (const rec of recs) {
        // Withdraw it upstream: the child is shared, its other sessions carry on.
        shared?.cancel(rec.id, error.message);
        rec.settled = true;
        rec.handler.onerror(error, rec.context);
      }
      settleIdle();
    },
  };

  const lease: SharedLease = {
    target,
    correlator,
    get pid() {
      return slot?.connection?.pid;
    },
    start() {
      if (closedWith !== undefined) return Promise.reject(closedWith);
      slot ??= pool.attach(lease);
      return Promise.resolve();
    },
    close(reason = 'Session ended') {
      if (closing) return closing;
      correlator.destroy(new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${target.name}" was closed: ${reason}`, { target: target.name, reason }));
      serverRequests.clear();
      closing = slot === undefined ? Promise.resolve() : pool.release(lease, slot);
      return closing;
    },
    takeRequest(request) {
      serverRequests.add(idKey(request.id));
      if (correlator.onrequest) correlator.onrequest(request);
      else logger.warn({ method: request.method }, 'server->client request with nobody to take it');
    },
    takeNotification(notification) {
      if (notification.method === 'notifications/cancelled') {
        const id = notification.params?.requestId;
        if (id !== undefined) serverRequests.delete(idKey(id as JsonRpcRequest['id']));
      }
      correlator.onnotification?.(notification);
    },
    ownsRequest: (key) => serverRequests.has(key),
    exited(reason) {
      if (closedWith !== undefined) return;
      closedWith = reason;
      own.clear(); // the child's correlator failed them all already (relay.onerror)
      settleIdle();
      closing = Promise.resolve(); // nothing left to release: the pool dropped this lease
      lease.onexit?.(reason);
    },
  };
  return lease;
}
