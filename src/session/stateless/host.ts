/**
 * One held session of a pool (hosts.ts) and the one call a question it asks belongs to. Its own
 * module so that the pool's parts (host-slots.ts, host-room.ts) read it without importing the pool.
 */
import type { JsonObject } from '../../jsonrpc/types.ts';
import type { Session } from '../session.ts';
import type { Relay } from './relay.ts';

export interface Host {
  readonly id: string;
  readonly session: Session;
  readonly key: string;
  /** Endpoint, principal and credential: who may resume its calls and hear its notifications. */
  readonly scope: string;
  /** Endpoint and principal (HostIdentity.owner): whose `perCaller` it counts toward. */
  readonly owner: string;
  /** The upstream side's initialize result (serverInfo, capabilities, instructions). */
  readonly init: JsonObject;
  /** Calls in flight on it that may ask the client for input. */
  readonly askers: Set<Relay>;
  /** Requests in flight on it. */
  active: number;
  lastUsed: number;
  /** Ids the host knows requests by: unique in the host, whatever ids clients chose. */
  nextCall: number;
}

/** The one call a question of `host` belongs to; undefined when none or several could have asked. */
export function askerOf(host: Host): Relay | undefined {
  let running: Relay | undefined;
  let parked: Relay | undefined;
  let runs = 0;
  let parks = 0;
  for (const relay of host.askers) {
    if (relay.finished) continue;
    if (relay.parked) {
      parks++;
      parked = relay;
    } else {
      runs++;
      running = relay;
    }
  }
  // A call waiting for its answers is blocked upstream: a new question is the running one's.
  if (runs === 1) return running;
  return runs === 0 && parks === 1 ? parked : undefined;
}
