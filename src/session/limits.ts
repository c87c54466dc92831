/**
 * The store's policy on what a session may hold and for how long, as pure functions over what
 * each session reports of itself (`SessionUsage`). Kept apart from the session kinds so that any
 * implementation of a session only has to report its usage truthfully.
 *
 * - A session that has not initialized within `initDeadlineMs` ends: a WebSocket upgrade or a
 *   legacy `GET /sse` creates a session at once, and idle ones must not hold slots.
 * - In use means work: a request in flight, an initialize under way. An open standalone stream
 *   (GET, WebSocket, legacy SSE, a held session's own) is not work: a client that vanished behind
 *   one, or stopped reading it, must not hold its slot and child forever. Idle time counts from the
 *   client's last message or the end of the session's last work.
 * - When a new session needs room (the session cap, the cap on un-initialized sessions, or the
 *   caps on live children), the store may end only a session nobody uses: first the oldest one that
 *   never initialized, then the least recently used one idle for at least `evictIdleMs` (minutes:
 *   a client between two calls, or an agent waiting for its model, is not idle). When there is
 *   none, the new session is refused (GW_SESSION_LIMIT, 503 + Retry-After): ending an active
 *   session for a newcomer only moves the failure to a client that was working (whose re-initialize
 *   would then end another: a cascade).
 * - The idle TTL is `idleTtlMs` while the client keeps a standalone stream open, and the shorter
 *   `shortIdleTtlMs` otherwise: clients that never opened one (one session per command, SDK
 *   `close()` without DELETE) and clients whose stream is gone are the ones that leave sessions
 *   behind; a live client reconnects its stream within seconds.
 */
import type { TargetConfig } from '../config/types.ts';

/** What a session tells the store about itself. Read on sweep and on create, never per message. */
export interface SessionUsage {
  /** An initialize (or an upstream restart) is under way. */
  readonly initializing: boolean;
  /** The client has opened a standalone (GET / WebSocket / legacy SSE) stream at least once. */
  readonly streamed: boolean;
  /** A standalone stream is attached and open now. */
  readonly listening: boolean;
  /**
   * The targets of the child processes this session owns now, one entry per child (per-session
   * stdio upstreams; shared leases are the pool's, not its own).
   */
  readonly children: readonly string[];
}

/** The part of a session the policy reads. */
export interface Limited {
  readonly protocolVersion: string | undefined;
  readonly ended: boolean;
  /** Work under way: a request in flight (or its response still owed), an initialize. Not an open standalone stream. */
  readonly busy: boolean;
  readonly lastActivity: number;
  readonly usage: SessionUsage;
}

export interface SessionPolicy {
  readonly idleTtlMs: number;
  readonly shortIdleTtlMs: number;
  readonly initDeadlineMs: number;
  /** A session idle less than this is never ended for room. */
  readonly evictIdleMs: number;
}

/** Why a session should end now, or undefined to keep it. */
export function expiry(session: Limited, createdAt: number, now: number, policy: SessionPolicy): string | undefined {
  const usage = session.usage;
  if (session.protocolVersion === undefined && !usage.initializing) {
    if (now - createdAt >= policy.initDeadlineMs) return `not initialized within ${seconds(policy.initDeadlineMs)}`;
    return undefined;
  }
  if (session.busy || usage.initializing) return undefined;
  const ttl = usage.listening ? policy.idleTtlMs : Math.min(policy.idleTtlMs, policy.shortIdleTtlMs);
  const idle = now - session.lastActivity;
  return idle >= ttl ? `idle for ${seconds(idle)}` : undefined;
}

/** A session that never initialized and is not initializing now: holds a slot for nothing. */
export function isUninitialized(session: Limited): boolean {
  return !session.ended && session.protocolVersion === undefined && !session.usage.initializing;
}

/** What the room is needed for: a session slot for an un-initialized one, any slot, or children. */
export type Room = 'uninitialized' | 'session' | 'children';

/** When the room is needed and which idle time makes a session a candidate. */
export interface Moment {
  readonly now: number;
  readonly evictIdleMs: number;
}

/** An initialized session nobody has used for `evictIdleMs`: it may be ended for room. */
function isEvictable(session: Limited, at: Moment): boolean {
  if (session.ended || session.busy || session.protocolVersion === undefined || session.usage.initializing) return false;
  return at.now - session.lastActivity >= at.evictIdleMs;
}

/**
 * The session to end to make room, or undefined if none may be ended: the oldest un-initialized
 * one, else the least recently used one idle for at least `evictIdleMs`. For children, only
 * sessions that own some (of `target`, if given). `sessions` iterates in creation order (a Map), so
 * the first match is the oldest.
 */
export function pickVictim<S extends Limited>(sessions: Iterable<S>, room: Room, at: Moment, target?: string): S | undefined {
  let lru: S | undefined;
  for (const session of sessions) {
    if (room === 'children' && !ownsSome(session, target)) continue;
    if (isUninitialized(session)) return session;
    if (room === 'uninitialized' || !isEvictable(session, at)) continue;
    if (lru === undefined || session.lastActivity < lru.lastActivity) lru = session;
  }
  return lru;
}

/**
 * Seconds until some session that could make this room becomes a candidate (`Retry-After` of a
 * refusal): the soonest idle one's remaining time to the floor; the whole floor when all are busy.
 * At least 1, at most 30 (a session may also end at any time, which the gateway cannot foresee).
 */
export function retryAfterSec(sessions: Iterable<Limited>, room: Room, at: Moment, target?: string): number {
  let soonest = at.evictIdleMs;
  for (const session of sessions) {
    if (session.ended || session.busy || session.usage.initializing) continue;
    if (room === 'children' && !ownsSome(session, target)) continue;
    soonest = Math.min(soonest, Math.max(0, session.lastActivity + at.evictIdleMs - at.now));
  }
  return Math.min(30, Math.max(1, Math.ceil(soonest / 1000)));
}

function ownsSome(session: Limited, target: string | undefined): boolean {
  const children = session.usage.children;
  return target === undefined ? children.length > 0 : children.includes(target);
}

/** Children owned by live sessions (of `target`, if given). */
export function countChildren(sessions: Iterable<Limited>, target?: string): number {
  let total = 0;
  for (const session of sessions) {
    if (session.ended) continue;
    for (const name of session.usage.children) if (target === undefined || name === target) total++;
  }
  return total;
}

export function countUninitialized(sessions: Iterable<Limited>): number {
  let total = 0;
  for (const session of sessions) if (isUninitialized(session)) total++;
  return total;
}

export function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** A session owns a child for this target only when it is a per-session stdio one (shared leases are the pool's). */
export function ownsChild(target: TargetConfig): boolean {
  return target.type === 'stdio' && target.upstream?.mode !== 'shared';
}
