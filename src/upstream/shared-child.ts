/**
 * One child of a shared pool (shared-pool.ts): its start and handshake, what it sends the sessions
 * on it (server->client requests, notifications), its exit and its close. Module functions over the
 * pool's state, so the pool's per-child hooks call them without a closure per message.
 */
import { GatewayError, toErrorResponse } from '../errors/gateway-error.ts';
import { idKey, isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcErrorResponse, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { StdioTargetConfig, TimeoutPolicy } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { UpstreamConnection } from './connection.ts';
import type { PendingHandler } from './correlator.ts';
import type { SharedHandshake, SharedLease, SharedSlot } from './shared-lease.ts';

/** What a child needs of its pool. */
export interface ChildPool {
  readonly target: StdioTargetConfig;
  readonly log: Logger;
  /** The protocol version the handshake asks for: the newest the gateway speaks. */
  readonly newest: string;
  /** The child's handshake has the start-up deadline, as a per-session one (startup-deadline.ts). */
  readonly timeouts: TimeoutPolicy;
}

const handshakeHandler: PendingHandler<(answer: JsonRpcResponse | GatewayError) => void> = {
  onresponse: (response, done) => done(response),
  onerror: (error, done) => done(error),
};

/** Leases on the slot with requests in flight, up to two (two means "ambiguous"). */
function busyLeases(slot: SharedSlot): SharedLease[] {
  const busy: SharedLease[] = [];
  for (const lease of slot.leases) {
    if (lease.correlator.inflight > 0 && busy.push(lease) === 2) break;
  }
  return busy;
}

export function onRequest(pool: ChildPool, slot: SharedSlot, connection: UpstreamConnection, request: JsonRpcRequest): void {
  if (request.method === 'ping') {
    connection.correlator.send({ jsonrpc: '2.0', id: request.id, result: {} }).catch(() => undefined);
    return;
  }
  const busy = busyLeases(slot);
  if (busy.length === 1) {
    (busy[0] as SharedLease).takeRequest(request);
    return;
  }
  pool.log.warn({ method: request.method, child: slot.index, busySessions: busy.length }, 'server->client request on a shared child cannot be attributed to one session; refused');
  const error = new GatewayError('GW_SERVER_REQUEST_UNATTRIBUTABLE', undefined, { target: pool.target.name, method: request.method });
  connection.correlator.send(toErrorResponse(request.id, error)).catch(() => undefined);
}

export function onNotification(slot: SharedSlot, notification: JsonRpcNotification): void {
  if (notification.method === 'notifications/cancelled') {
    // The child withdraws one of its server->client requests: only its session knew it.
    const requestId = isObject(notification.params) ? notification.params.requestId : undefined;
    if (requestId === undefined) return;
    const key = idKey(requestId as JsonRpcRequest['id']);
    for (const lease of slot.leases) {
      if (lease.ownsRequest(key)) {
        lease.takeNotification(notification);
        return;
      }
    }
    return;
  }
  if (notification.method === 'notifications/message') {
    const busy = busyLeases(slot);
    if (busy.length === 1) {
      (busy[0] as SharedLease).takeNotification(notification);
      return;
    }
  }
  // Sessions only serialise what they get (none mutates a broadcast), so one object serves all.
  for (const lease of slot.leases) lease.takeNotification(notification);
}

export function onExit(pool: ChildPool, slot: SharedSlot, connection: UpstreamConnection, reason: GatewayError): void {
  if (slot.connection !== connection) return;
  slot.connection = undefined;
  slot.handshake = undefined;
  const leases = [...slot.leases];
  slot.leases.clear();
  pool.log.warn({ child: slot.index, pid: connection.pid, sessions: leases.length, reason: reason.message }, 'shared upstream child ended');
  for (const lease of leases) lease.exited(reason);
}

/** Starts the child and does its one handshake. */
export async function startChild(pool: ChildPool, slot: SharedSlot, connection: UpstreamConnection, params: JsonObject | undefined): Promise<SharedHandshake> {
  const target = pool.target;
  await connection.start();
  const answer = await new Promise<JsonRpcResponse | GatewayError>((resolve) => {
    connection.correlator.request({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { ...params, protocolVersion: pool.newest } }, handshakeHandler, resolve, pool.timeouts);
  });
  if (answer instanceof GatewayError) throw answer;
  if ('error' in answer) return { error: (answer as JsonRpcErrorResponse).error };
  const version = answer.result.protocolVersion;
  if (typeof version !== 'string') {
    return { error: new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${target.name}" answered initialize without a protocol version`, { target: target.name }).toJsonRpc() };
  }
  await connection.correlator.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  pool.log.info({ child: slot.index, pid: connection.pid, protocolVersion: version }, 'shared upstream child initialized');
  return { result: answer.result, version };
}

export function closeSlot(slot: SharedSlot, reason: string): Promise<void> {
  const connection = slot.connection;
  slot.connection = undefined;
  slot.handshake = undefined;
  return connection?.close(reason) ?? Promise.resolve();
}
