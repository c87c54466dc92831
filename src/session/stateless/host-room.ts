/**
 * Room and idleness among the held sessions of a pool (hosts.ts): which host ends so that a caller
 * at its `perCaller` bound can open one for another capability set or credential, and which ends
 * for having been idle `idleMs`. Both only ever end a host of no request in flight.
 */
import type { Logger } from '../../log/logger.ts';
import { heldSessionsRefusal } from '../room.ts';
import type { Host } from './host.ts';

/** What of a pool room and idleness read; `retire` ends a host now, its place free at once. */
export interface RoomState {
  readonly ready: ReadonlyMap<string, Host>;
  readonly perCaller: number;
  readonly idleMs: number;
  readonly logger: Logger;
  retire(host: Host, why: string): void;
}

/** Every request in flight on `host` is a call parked for input (and there is one at least). */
function holdsOnlyParked(host: Host): boolean {
  let parked = 0;
  for (const relay of host.askers) if (!relay.finished && relay.parked) parked++;
  return parked > 0 && host.active <= parked;
}

/**
 * Room in `owner`'s hosts for a capability set or credential that has none: its least recently used
 * idle host ends; none idle: a host that only holds calls parked for input (a person's answer
 * awaited, or a caller that never comes back) does not count against `perCaller`, so such calls
 * never lock the owner's other requests out (their number has its own bound, mrtr.ts); else
 * GW_SESSION_LIMIT.
 */
export function makeRoom(pool: RoomState, owner: string, held: number): void {
  let lru: Host | undefined;
  let parkedOnly = 0;
  for (const host of pool.ready.values()) {
    if (host.owner !== owner) continue;
    if (holdsOnlyParked(host)) parkedOnly++;
    if (host.active > 0 || host.askers.size > 0) continue;
    if (lru === undefined || host.lastUsed < lru.lastUsed) lru = host;
  }
  if (lru === undefined && held < pool.perCaller + parkedOnly) return;
  if (lru === undefined) throw heldSessionsRefusal(pool.perCaller);
  pool.logger.debug({ session: lru.id }, 'held session replaced by one for other client capabilities');
  pool.retire(lru, 'replaced by a held session for other client capabilities');
}

/** How often idle hosts are looked for: a quarter of `idleMs`, between 250 ms and 30 s. */
export function sweepPeriod(idleMs: number): number {
  return Math.max(250, Math.min(idleMs / 4, 30_000));
}

/** Ends the hosts idle past `idleMs` at `now`; keeps the held session of one in use active for the store. */
export function sweepIdle(pool: RoomState, now: number): void {
  for (const host of pool.ready.values()) {
    // A listen stream holds its host (active) with no request in flight: still in use.
    if (host.active > 0) host.session.lastActivity = now;
    else if (host.askers.size === 0 && now - host.lastUsed > pool.idleMs) pool.retire(host, 'stateless host idle');
  }
}
