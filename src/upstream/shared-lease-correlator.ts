/**
 * The correlator of one session's lease on a shared child (shared-lease.ts): it forwards to the
 * child's correlator but counts, idles and withdraws only this session's requests, and answers the
 * session's `initialize` from the pool's handshake. The lease's types live here too, so that this
 * file and shared-lease.ts do not import each other (shared-lease.ts re-exports them).
 */
import { GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import { idKey, isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcErrorObject, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { TargetConfig } from '../config/types.ts';
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
  readonly lease: LeaseCorrelator;
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

// One handler object for every lease's requests; the per-request record is the context.
const relay: PendingHandler<Own> = {
  onresponse(response, rec) {
    rec.settled = true;
    rec.lease.own.delete(rec.id);
    rec.handler.onresponse(response, rec.context);
    rec.lease.settleIdle();
  },
  onerror(error, rec) {
    rec.settled = true;
    rec.lease.own.delete(rec.id);
    rec.handler.onerror(error, rec.context);
    rec.lease.settleIdle();
  },
  onprogress(notification, rec) {
    rec.handler.onprogress?.(notification, rec.context);
  },
};

/** A lease's correlator and the state the lease shares with it (its slot, why it closed, its server requests). */
export class LeaseCorrelator implements Correlator {
  readonly pool: LeasePool;
  readonly known: ReadonlySet<string>;
  readonly own = new Map<number, Own>();
  /** The child's server->client requests this session was given and has not answered (id keys). */
  readonly serverRequests = new Set<string>();
  slot: SharedSlot | undefined;
  closedWith: GatewayError | undefined;
  idleWaiters: Array<() => void> = [];
  onrequest?: (request: JsonRpcRequest) => void;
  onnotification?: (notification: JsonRpcNotification) => void;

  /** `known`: the protocol versions the gateway speaks. */
  constructor(pool: LeasePool, known: ReadonlySet<string>) {
    this.pool = pool;
    this.known = known;
  }

  settleIdle(): void {
    if (this.own.size !== 0 || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  closedError(): GatewayError {
    const target = this.pool.target;
    return this.closedWith ?? new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${target.name}" is not connected`, { target: target.name });
  }

  request<C>(message: JsonRpcRequest, handler: PendingHandler<C>, context: C, timeouts: Parameters<Correlator['request']>[3], options?: RequestOptions): number {
    const shared = this.slot?.connection?.correlator;
    if (this.closedWith !== undefined || shared === undefined) {
      if (message.method === 'initialize' && this.closedWith === undefined) {
        initializeLocally(this, message, handler as PendingHandler<unknown>, context);
      } else {
        handler.onerror(this.closedError(), context);
      }
      return 0;
    }
    if (message.method === 'initialize') {
      initializeLocally(this, message, handler as PendingHandler<unknown>, context);
      return 0;
    }
    const rec: Own = { lease: this, handler: handler as PendingHandler<unknown>, context, id: 0, settled: false };
    rec.id = shared.request(message, relay, rec, timeouts, options);
    if (!rec.settled) this.own.set(rec.id, rec);
    return rec.id;
  }

  send(message: JsonRpcMessage): Promise<void> {
    if (this.closedWith !== undefined) return Promise.reject(this.closedWith);
    const shared = this.slot?.connection?.correlator;
    if (shared === undefined) return Promise.reject(this.closedError());
    if ('method' in message) {
      // The child was initialized once, by the pool.
      if (message.method === 'notifications/initialized') return Promise.resolve();
      // A session that ends cancels its calls this way: withdraw them from the shared child here,
      // so the note goes once and the lease's close (destroy) finds nothing left to cancel again.
      const params: unknown = message.params;
      if (message.method === 'notifications/cancelled' && isObject(params) && typeof params.requestId === 'number' && this.own.has(params.requestId)) {
        shared.cancel(params.requestId, typeof params.reason === 'string' ? params.reason : undefined);
        return Promise.resolve();
      }
    } else if ('id' in message && message.id !== null) {
      this.serverRequests.delete(idKey(message.id)); // this session answered one of the child's requests
    }
    return shared.send(message);
  }

  cancel(upstreamId: number, reason?: string): boolean {
    if (!this.own.delete(upstreamId)) return false;
    const done = this.slot?.connection?.correlator.cancel(upstreamId, reason) ?? false;
    this.settleIdle();
    return done;
  }

  get inflight(): number {
    return this.own.size;
  }

  idle(): Promise<void> {
    if (this.own.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  destroy(error: GatewayError): void {
    this.closedWith ??= error;
    const shared = this.slot?.connection?.correlator;
    const recs = [...this.own.values()];
    this.own.clear();
    for (const rec of recs) {
      // Withdraw it upstream: the child is shared, its other sessions carry on.
      shared?.cancel(rec.id, error.message);
      rec.settled = true;
      rec.handler.onerror(error, rec.context);
    }
    this.settleIdle();
  }
}

/** The session's initialize, answered from the child's handshake with this session's version. */
function initializeLocally(lease: LeaseCorrelator, request: JsonRpcRequest, handler: PendingHandler<unknown>, context: unknown): void {
  if (lease.slot === undefined) {
    handler.onerror(lease.closedError(), context);
    return;
  }
  const requested = request.params?.protocolVersion;
  lease.pool.ready(lease.slot, request.params).then(
    (handshake) => {
      const answer: JsonRpcResponse =
        'error' in handshake
          ? { jsonrpc: '2.0', id: request.id, error: handshake.error }
          : { jsonrpc: '2.0', id: request.id, result: { ...handshake.result, protocolVersion: negotiate(requested, handshake.version, lease.known) } };
      handler.onresponse(answer, context);
    },
    (err: unknown) => handler.onerror(toGatewayError(err), context),
  );
}
