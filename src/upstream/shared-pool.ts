/**
 * Shared upstream mode: a pool of N children of one stdio target, multiplexed across downstream
 * sessions (`upstream: { mode: shared, children: N }`), so 1,000 sessions do not need 1,000
 * processes. Only for servers that keep no per-client state; see docs/configuration.md for what
 * this mode cannot do.
 *
 * - Each child is started and initialized once, by the first session that lands on it, with that
 *   session's initialize params and the newest protocol version the gateway speaks; every session's
 *   own initialize is answered by the gateway from that handshake (shared-lease.ts).
 * - A session gets the child with the fewest sessions (a child is started when its slot is empty).
 * - Ids never cross: each child's correlator gives every request its own upstream id, whichever
 *   session sent it, and progress and cancellation route by that id.
 * - Broadcasts (list_changed, resources/updated) reach every session on the child; a log message
 *   reaches the one session with requests in flight, or every session when that is ambiguous.
 * - A server->client request (sampling, elicitation, roots) goes to a session only when it is
 *   attributable: the requests in flight on that child all belong to one session. Otherwise the
 *   child gets GW_SERVER_REQUEST_UNATTRIBUTABLE. `ping` is answered by the gateway.
 * - A child lives while sessions use it: when its last session ends it is closed. When it dies,
 *   its sessions are told (each then ends or restarts, per `onExit`) and the slot starts afresh.
 */
import { GatewayError, toErrorResponse } from '../errors/gateway-error.ts';
import { idKey, isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcErrorResponse, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { StdioTargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { createUpstreamConnection, type UpstreamConnection } from './connection.ts';
import type { PendingHandler } from './correlator.ts';
import { createSharedLease, type LeasePool, type SharedHandshake, type SharedLease, type SharedSlot } from './shared-lease.ts';
import type { Principal } from './caller.ts';
import { handshakeTimeouts } from './startup-deadline.ts';

export interface SharedPool extends LeasePool {
  readonly target: StdioTargetConfig;
  /** A connection for one session; its `start()` picks a child, its initialize starts the child if needed. */
  lease(): UpstreamConnection;
  /** Pids of the children alive now (tests, logs). */
  pids(): number[];
  /** Closes every child (the gateway is stopping); its leases see the exit. */
  close(): Promise<void>;
}

/** The shared pools of one gateway (the Runtime makes it), one per target object. */
export interface SharedPools {
  /** The pool of a target: one per target object, shared by every endpoint that serves it. */
  poolFor(options: SharedPoolOptions): SharedPool;
  /** Live children per target name, over every pool (the metrics and the status page). */
  children(): Map<string, number>;
  /** Closes every pool ever made. */
  close(): Promise<void>;
}

export interface SharedPoolOptions {
  target: StdioTargetConfig;
  /** The gateway's logger (not a session's): the pool outlives sessions. */
  logger: Logger;
  /** Protocol versions the gateway speaks, oldest first; the handshake asks for the newest. */
  versions: readonly string[];
  /** Set when the target's children carry per-principal variables: a pool per principal. */
  principal?: Principal | undefined;
}

export function createSharedPools(): SharedPools {
  const pools = new Map<StdioTargetConfig, Map<string, SharedPool>>();
  return {
    poolFor(options) {
      let byPrincipal = pools.get(options.target);
      if (byPrincipal === undefined) pools.set(options.target, (byPrincipal = new Map()));
      const key = options.principal?.id ?? '';
      let pool = byPrincipal.get(key);
      if (pool === undefined) {
        pool = createSharedPool(options);
        byPrincipal.set(key, pool);
      }
      return pool;
    },
    children() {
      const out = new Map<string, number>();
      for (const [target, byPrincipal] of pools) {
        for (const pool of byPrincipal.values()) out.set(target.name, (out.get(target.name) ?? 0) + pool.pids().length);
      }
      return out;
    },
    async close() {
      await Promise.all([...pools.values()].flatMap((byPrincipal) => [...byPrincipal.values()]).map((pool) => pool.close()));
      pools.clear();
    },
  };
}

const handshakeHandler: PendingHandler<(answer: JsonRpcResponse | GatewayError) => void> = {
  onresponse: (response, done) => done(response),
  onerror: (error, done) => done(error),
};

function createSharedPool({ target, logger, versions, principal }: SharedPoolOptions): SharedPool {
  const log = logger.child({ target: target.name, sharedPool: true });
  const slots: SharedSlot[] = Array.from({ length: target.upstream?.children ?? 1 }, (_, index) => ({
    index,
    connection: undefined,
    handshake: undefined,
    leases: new Set<SharedLease>(),
  }));
  const newest = versions[versions.length - 1] as string;
  const known = new Set(versions);
  // The child's handshake has the start-up deadline, as a per-session one (startup-deadline.ts).
  const timeouts = handshakeTimeouts(target);

  /** Leases on the slot with requests in flight, up to two (two means "ambiguous"). */
  const busyLeases = (slot: SharedSlot): SharedLease[] => {
    const busy: SharedLease[] = [];
    for (const lease of slot.leases) {
      if (lease.correlator.inflight > 0 && busy.push(lease) === 2) break;
    }
    return busy;
  };

  const onRequest = (slot: SharedSlot, connection: UpstreamConnection, request: JsonRpcRequest) => {
    if (request.method === 'ping') {
      connection.correlator.send({ jsonrpc: '2.0', id: request.id, result: {} }).catch(() => undefined);
      return;
    }
    const busy = busyLeases(slot);
    if (busy.length === 1) {
      (busy[0] as SharedLease).takeRequest(request);
      return;
    }
    log.warn({ method: request.method, child: slot.index, busySessions: busy.length }, 'server->client request on a shared child cannot be attributed to one session; refused');
    const error = new GatewayError('GW_SERVER_REQUEST_UNATTRIBUTABLE', undefined, { target: target.name, method: request.method });
    connection.correlator.send(toErrorResponse(request.id, error)).catch(() => undefined);
  };

  const onNotification = (slot: SharedSlot, notification: JsonRpcNotification) => {
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
  };

  const onExit = (slot: SharedSlot, connection: UpstreamConnection, reason: GatewayError) => {
    if (slot.connection !== connection) return;
    slot.connection = undefined;
    slot.handshake = undefined;
    const leases = [...slot.leases];
    slot.leases.clear();
    log.warn({ child: slot.index, pid: connection.pid, sessions: leases.length, reason: reason.message }, 'shared upstream child ended');
    for (const lease of leases) lease.exited(reason);
  };

  const start = async (slot: SharedSlot, connection: UpstreamConnection, params: JsonObject | undefined): Promise<SharedHandshake> => {
    await connection.start();
    const answer = await new Promise<JsonRpcResponse | GatewayError>((resolve) => {
      connection.correlator.request({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { ...params, protocolVersion: newest } }, handshakeHandler, resolve, timeouts);
    });
    if (answer instanceof GatewayError) throw answer;
    if ('error' in answer) return { error: (answer as JsonRpcErrorResponse).error };
    const version = answer.result.protocolVersion;
    if (typeof version !== 'string') {
      return { error: new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${target.name}" answered initialize without a protocol version`, { target: target.name }).toJsonRpc() };
    }
    await connection.correlator.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    log.info({ child: slot.index, pid: connection.pid, protocolVersion: version }, 'shared upstream child initialized');
    return { result: answer.result, version };
  };

  const closeSlot = (slot: SharedSlot, reason: string): Promise<void> => {
    const connection = slot.connection;
    slot.connection = undefined;
    slot.handshake = undefined;
    return connection?.close(reason) ?? Promise.resolve();
  };

  const pool: SharedPool = {
    target,
    lease: () => createSharedLease(pool, log, known),
    pids: () => slots.flatMap((s) => (s.connection?.pid === undefined ? [] : [s.connection.pid])),
    close: async () => void (await Promise.all(slots.map((slot) => closeSlot(slot, 'the gateway is stopping')))),

    attach(lease) {
      let best = slots[0] as SharedSlot;
      for (const slot of slots) if (slot.leases.size < best.leases.size) best = slot;
      best.leases.add(lease);
      return best;
    },

    ready(slot, params) {
      if (slot.handshake !== undefined) return slot.handshake;
      const connection = createUpstreamConnection({ target, logger: log.child({ child: slot.index }), caller: principal === undefined ? undefined : { principal, authorization: undefined } });
      connection.correlator.onrequest = (request) => onRequest(slot, connection, request);
      connection.correlator.onnotification = (notification) => onNotification(slot, notification);
      connection.onexit = (reason) => onExit(slot, connection, reason);
      slot.connection = connection;
      const handshake = start(slot, connection, params).then(
        (outcome) => {
          if ('error' in outcome && slot.connection === connection) void closeSlot(slot, 'initialize refused');
          return outcome;
        },
        async (err: unknown) => {
          if (slot.connection === connection) {
            slot.connection = undefined;
            slot.handshake = undefined;
          }
          await connection.close('initialize failed');
          throw err;
        },
      );
      // Nobody may be waiting any more (the last session left during the start): not unhandled.
      handshake.catch(() => undefined);
      slot.handshake = handshake;
      return handshake;
    },

    release(lease, slot) {
      if (!slot.leases.delete(lease) || slot.leases.size > 0) return Promise.resolve();
      return closeSlot(slot, 'no session left');
    },
  };
  return pool;
}
