/**
 * The store's policy on what a session may hold and for how long, as pure functions over what
 * each session reports of itself (`SessionUsage`). Kept apart from the session kinds so that any
 * implementation of a session only has to report its usage truthfully.
 *
 * - A session that has not initialized within `initDeadlineMs` ends: a WebSocket upgrade or a
 *   legacy `GET /sse` creates a session at once, and idle ones must not hold slots.
 * - When a new session needs room (the session cap, the cap on un-initialized sessions, or the
 *   cap on live children), the store ends the session that matters least: first the oldest one
 *   that never initialized, then the least recently used idle one. A session with a request in
 *   flight, an initialize under way or an open stream is never chosen (its client gets 404 on its
 *   next request and re-initializes, as the transport spec intends for an expired session).
 * - A session whose client never opened a GET stream gets the shorter idle TTL: such clients
 *   (one session per command, SDK `close()` without DELETE) are the ones that leave sessions behind.
 */
import type { TargetConfig } from '../config/types.ts';

/** What a session tells the store about itself. Read on sweep and on create, never per message. */
export interface SessionUsage {
  /** An initialize (or an upstream restart) is under way. */
  readonly initializing: boolean;
  /** The client has opened a standalone (GET / WebSocket / legacy SSE) stream at least once. */
  readonly streamed: boolean;
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
  readonly busy: boolean;
  readonly lastActivity: number;
  readonly usage: SessionUsage;
}

export interface SessionPolicy {
  readonly idleTtlMs: number;
  readonly shortIdleTtlMs: number;
  readonly initDeadlineMs: number;
}

/** Why a session should end now, or undefined to keep it. */
export function expiry(session: Limited, createdAt: number, now: number, policy: SessionPolicy): string | undefined {
  const usage = session.usage;
  if (session.protocolVersion === undefined && !usage.initializing) {
    if (now - createdAt >= policy.initDeadlineMs) return `not initialized within ${seconds(policy.initDeadlineMs)}`;
    return undefined;
  }
  if (session.busy || usage.initializing) return undefined;
  const ttl = usage.streamed ? policy.idleTtlMs : Math.min(policy.idleTtlMs, policy.shortIdleTtlMs);
  const idle = now - session.lastActivity;
  return idle >= ttl ? `idle for ${seconds(idle)}` : undefined;
}

/** A session that never initialized and is not initializing now: holds a slot for nothing. */
export function isUninitialized(session: Limited): boolean {
  return !session.ended && session.protocolVersion === undefined && !session.usage.initializing;
}

/** What the room is needed for: a session slot for an un-initialized one, any slot, or children. */
export type Room = 'uninitialized' | 'session' | 'children';

/**
 * The session to end to make room, or undefined if every candidate is in use: the oldest
 * un-initialized one, else the least recently used initialized one with nothing in flight and no
 * open stream. For children, only sessions that own some (of `target`, if given). `sessions` iterates in creation order
 * (a Map), so the first match is the oldest.
 */
export function pickVictim<S extends Limited>(sessions: Iterable<S>, room: Room, target?: string): S | undefined {
  let lru: S | undefined;
  for (const session of sessions) {
    if (room === 'children' && !ownsSome(session, target)) continue;
    if (isUninitialized(session)) return session;
    if (room === 'uninitialized' || session.ended || session.busy || session.protocolVersion === undefined) continue;
    if (lru === undefined || session.lastActivity < lru.lastActivity) lru = session;
  }
  return lru;
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
