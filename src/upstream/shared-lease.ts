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
import { GatewayError } from '../errors/gateway-error.ts';
import { idKey } from '../jsonrpc/envelope.ts';
import type { JsonRpcNotification, JsonRpcRequest } from '../jsonrpc/types.ts';
import type { TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { LeaseCorrelator, type LeasePool, type SharedLease } from './shared-lease-correlator.ts';

export { negotiate, type LeasePool, type SharedHandshake, type SharedLease, type SharedSlot } from './shared-lease-correlator.ts';

/** `known`: the protocol versions the gateway speaks. */
export function createSharedLease(pool: LeasePool, logger: Logger, known: ReadonlySet<string>): SharedLease {
  return new Lease(pool, logger, known);
}

/** One session's lease; its correlator (shared-lease-correlator.ts) holds the state both use. */
class Lease implements SharedLease {
  readonly target: TargetConfig;
  readonly correlator: LeaseCorrelator;
  readonly pool: LeasePool;
  readonly logger: Logger;
  closing: Promise<void> | undefined;
  onexit?: (reason: GatewayError) => void;

  constructor(pool: LeasePool, logger: Logger, known: ReadonlySet<string>) {
    this.pool = pool;
    this.target = pool.target;
    this.logger = logger;
    this.correlator = new LeaseCorrelator(pool, known);
  }

  get pid(): number | undefined {
    return this.correlator.slot?.connection?.pid;
  }

  start(): Promise<void> {
    const c = this.correlator;
    if (c.closedWith !== undefined) return Promise.reject(c.closedWith);
    c.slot ??= this.pool.attach(this);
    return Promise.resolve();
  }

  close(reason = 'Session ended'): Promise<void> {
    if (this.closing) return this.closing;
    const c = this.correlator;
    const target = this.target;
    c.destroy(new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${target.name}" was closed: ${reason}`, { target: target.name, reason }));
    c.serverRequests.clear();
    this.closing = c.slot === undefined ? Promise.resolve() : this.pool.release(this, c.slot);
    return this.closing;
  }

  takeRequest(request: JsonRpcRequest): void {
    const c = this.correlator;
    c.serverRequests.add(idKey(request.id));
    if (c.onrequest) c.onrequest(request);
    else this.logger.warn({ method: request.method }, 'server->client request with nobody to take it');
  }

  takeNotification(notification: JsonRpcNotification): void {
    if (notification.method === 'notifications/cancelled') {
      const id = notification.params?.requestId;
      if (id !== undefined) this.correlator.serverRequests.delete(idKey(id as JsonRpcRequest['id']));
    }
    this.correlator.onnotification?.(notification);
  }

  ownsRequest(key: string): boolean {
    return this.correlator.serverRequests.has(key);
  }

  exited(reason: GatewayError): void {
    const c = this.correlator;
    if (c.closedWith !== undefined) return;
    c.closedWith = reason;
    c.own.clear(); // the child's correlator failed them all already (relay.onerror)
    c.settleIdle();
    this.closing = Promise.resolve(); // nothing left to release: the pool dropped this lease
    this.onexit?.(reason);
  }
}
