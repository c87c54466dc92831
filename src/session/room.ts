/**
 * Room for a new session under the store's caps (limits.ts has the policy): ends sessions nobody
 * uses while a cap is reached, or refuses the newcomer at once with GW_SESSION_LIMIT (503 +
 * Retry-After) when every session that could make room is in use. A refusal is logged as a
 * warning at most once per `WARN_EVERY_MS` per cap, with how many were refused meanwhile and what
 * the operator can do: a burst of refusals must not flood the log, and a cap reached once a day
 * must not go unseen.
 */
import type { GatewayConfig, TargetConfig } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonRpcResponse } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { countChildren, countUninitialized, ownsChild, pickVictim, retryAfterSec, type Limited, type Moment, type Room } from './limits.ts';

const WARN_EVERY_MS = 30_000;

/** Which cap refused: `data.kind` of GW_SESSION_LIMIT. */
type Kind = 'sessions' | 'children' | 'target-children';

export interface RoomOptions<S extends Limited> {
  readonly config: GatewayConfig;
  readonly logger: Logger;
  /** The live sessions, in creation order. */
  readonly sessions: () => IterableIterator<S>;
  readonly size: () => number;
  /** Ends `session` now for room. */
  readonly evict: (session: S, why: string) => void;
}

export interface RoomKeeper {
  /** Room for one more session; throws GW_SESSION_LIMIT. */
  forSession(): void;
  /** Room for one more child of `target` (a no-op for targets that own none); throws GW_SESSION_LIMIT. */
  forChild(target: TargetConfig): void;
}

/** What to tell the operator about a cap: the setting to raise, and shared mode for a server's children. */
function advice(kind: Kind, target: string | undefined): string {
  if (kind === 'sessions') return 'raise gateway.limits.maxSessions';
  const shared = target === undefined ? 'upstream.mode: shared' : `servers.${target}.upstream.mode: shared`;
  const setting = kind === 'children' ? 'gateway.session.maxChildren' : 'gateway.session.maxChildrenPerTarget';
  return `raise ${setting}, or set ${shared} if the server keeps no per-client state (one child then serves every session)`;
}

export function createRoomKeeper<S extends Limited>(options: RoomOptions<S>): RoomKeeper {
  const { config, logger, sessions, evict } = options;
  const { maxSessions } = config.limits;
  const { maxUninitialized, maxChildren, maxChildrenPerTarget, evictIdleMs } = config.session;
  /** Per cap (kind and target): when it was last logged and how many refusals since. */
  const warned = new Map<string, { at: number; refused: number }>();

  const moment = (): Moment => ({ now: Date.now(), evictIdleMs });

  const refuse = (kind: Kind, limit: number, room: Room, at: Moment, target?: string): GatewayError => {
    const retry = retryAfterSec(sessions(), room, at, kind === 'target-children' ? target : undefined);
    const key = target === undefined ? kind : `${kind}\u0000${target}`;
    const last = warned.get(key);
    if (last === undefined || at.now - last.at >= WARN_EVERY_MS) {
      const refused = (last?.refused ?? 0) + 1;
      warned.set(key, { at: at.now, refused: 0 });
      logger.warn(
        { kind, limit, target, refused, sessions: options.size(), evictIdleMs, retryAfterSec: retry },
        `${kind === 'sessions' ? 'session' : 'child'} limit reached and no session has been idle long enough to end; refusing new sessions (503): ${advice(kind, target)}`,
      );
    } else {
      last.refused++;
    }
    const details = target === undefined ? { limit, kind, retryAfterSec: retry } : { limit, kind, target, retryAfterSec: retry };
    return new GatewayError('GW_SESSION_LIMIT', `Too many sessions (${kind} limit ${limit}); try again in ${retry} s`, details);
  };

  return {
    forSession() {
      const at = moment();
      while (countUninitialized(sessions()) >= maxUninitialized) {
        const victim = pickVictim(sessions(), 'uninitialized', at);
        if (victim === undefined) break;
        evict(victim, `${maxUninitialized} un-initialized sessions`);
      }
      for (;;) {
        const full = options.size() >= maxSessions;
        if (!full && countChildren(sessions()) < maxChildren) return;
        const room: Room = full ? 'session' : 'children';
        const victim = pickVictim(sessions(), room, at);
        if (victim === undefined) throw full ? refuse('sessions', maxSessions, room, at) : refuse('children', maxChildren, room, at);
        evict(victim, full ? `${maxSessions} sessions` : `${maxChildren} children`);
      }
    },

    forChild(target) {
      if (!ownsChild(target)) return;
      const name = target.name;
      const at = moment();
      for (;;) {
        const perTarget = countChildren(sessions(), name) >= maxChildrenPerTarget;
        if (!perTarget && countChildren(sessions()) < maxChildren) return;
        const victim = pickVictim(sessions(), 'children', at, perTarget ? name : undefined);
        if (victim === undefined) throw perTarget ? refuse('target-children', maxChildrenPerTarget, 'children', at, name) : refuse('children', maxChildren, 'children', at, name);
        evict(victim, perTarget ? `${maxChildrenPerTarget} children of ${name}` : `${maxChildren} children`);
      }
    },
  };
}

/**
 * The refusal inside an initialize answer when the session could not get its child (the child
 * caps, checked when the child starts): the routes answer it as a refusal of the session itself
 * (HTTP 503 + Retry-After, WebSocket 1013), not as an upstream's answer.
 */
export function refusalIn(answer: JsonRpcResponse): GatewayError | undefined {
  const error = (answer as { error?: unknown }).error;
  if (!isObject(error) || typeof error.message !== 'string') return undefined;
  const { message, data } = error;
  if (!isObject(data) || data.code !== 'GW_SESSION_LIMIT') return undefined;
  const { code: _code, ...details } = data;
  return new GatewayError('GW_SESSION_LIMIT', message, details);
}

/** A 2026 caller at `session.stateless.hostsPerCaller` held sessions, all at work: one frees when a call ends. */
export function heldSessionsRefusal(limit: number): GatewayError {
  return new GatewayError('GW_SESSION_LIMIT', `Too many held sessions for this caller (limit ${limit}), all in use; try again in 1 s`, {
    limit,
    kind: 'held-sessions',
    retryAfterSec: 1,
  });
}
