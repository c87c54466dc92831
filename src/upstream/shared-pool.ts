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
import type { JsonObject } from '../jsonrpc/types.ts';
import type { StdioTargetConfig, TimeoutPolicy } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { createUpstreamConnection, type UpstreamConnection } from './connection.ts';
import { createSharedLease, type LeasePool, type SharedHandshake, type SharedLease, type SharedSlot } from './shared-lease.ts';
import { closeSlot, onExit, onNotification, onRequest, startChild, type ChildPool } from './shared-child.ts';
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

function createSharedPool(options: SharedPoolOptions): SharedPool {
  return new ChildrenPool(options);
}

/** The pool's state: its slots; each child's start, messages and exit are in shared-child.ts. */
class ChildrenPool implements SharedPool, ChildPool {
  readonly target: StdioTargetConfig;
  readonly log: Logger;
  readonly newest: string;
  readonly timeouts: TimeoutPolicy;
  readonly principal: Principal | undefined;
  readonly known: ReadonlySet<string>;
  readonly slots: SharedSlot[];

  constructor({ target, logger, versions, principal }: SharedPoolOptions) {
    this.target = target;
    this.log = logger.child({ target: target.name, sharedPool: true });
    this.principal = principal;
    this.slots = Array.from({ length: target.upstream?.children ?? 1 }, (_, index) => ({
      index,
      connection: undefined,
      handshake: undefined,
      leases: new Set<SharedLease>(),
    }));
    this.newest = versions[versions.length - 1] as string;
    this.known = new Set(versions);
    // The child's handshake has the start-up deadline, as a per-session one (startup-deadline.ts).
    this.timeouts = handshakeTimeouts(target);
  }

  lease(): UpstreamConnection {
    return createSharedLease(this, this.log, this.known);
  }

  pids(): number[] {
    return this.slots.flatMap((s) => (s.connection?.pid === undefined ? [] : [s.connection.pid]));
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((slot) => closeSlot(slot, 'the gateway is stopping')));
  }

  attach(lease: SharedLease): SharedSlot {
    let best = this.slots[0] as SharedSlot;
    for (const slot of this.slots) if (slot.leases.size < best.leases.size) best = slot;
    best.leases.add(lease);
    return best;
  }

  ready(slot: SharedSlot, params: JsonObject | undefined): Promise<SharedHandshake> {
    if (slot.handshake !== undefined) return slot.handshake;
    const principal = this.principal;
    const connection = createUpstreamConnection({ target: this.target, logger: this.log.child({ child: slot.index }), caller: principal === undefined ? undefined : { principal, authorization: undefined } });
    connection.correlator.onrequest = (request) => onRequest(this, slot, connection, request);
    connection.correlator.onnotification = (notification) => onNotification(slot, notification);
    connection.onexit = (reason) => onExit(this, slot, connection, reason);
    slot.connection = connection;
    const handshake = startChild(this, slot, connection, params).then(
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
  }

  release(lease: SharedLease, slot: SharedSlot): Promise<void> {
    if (!slot.leases.delete(lease) || slot.leases.size > 0) return Promise.resolve();
    return closeSlot(slot, 'no session left');
  }
}
