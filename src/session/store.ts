/**
 * The session store: sessions by id, caps on how many may exist (all, un-initialized, and the
 * children they own), idle reaping, and drain on shutdown. Reaping and eviction are what keep
 * abandoned sessions (clients that vanish without DELETE) from leaking children; the policy is in
 * limits.ts.
 */
import { randomUUID } from 'node:crypto';
import { GatewayError } from '../errors/gateway-error.ts';
import type { GatewayConfig, TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { SessionCloseCause } from '../log/observer.ts';
import type { Caller, Principal } from '../upstream/caller.ts';
import type { PinGate } from '../governance/pin-gate.ts';
import type { ChainGates } from './chain/gates.ts';
import type { SessionServices } from './services.ts';
import type { Session, SessionCore } from './session.ts';
import { countChildren, expiry, pickVictim, type SessionPolicy } from './limits.ts';
import { createRoomKeeper } from './room.ts';

/** What the store hands a session factory: the parts every kind of session needs. */
export interface SessionSeed {
  readonly id: string;
  readonly limits: GatewayConfig['limits'];
  readonly logger: Logger;
  /** The session must call this once when it has ended, whatever ended it. */
  readonly onended: (session: SessionCore) => void;
  /** Who the session serves (upstream/caller.ts): the store's own record, passed on by reference. */
  readonly caller: Caller;
  /**
   * Called before the session starts a child for `target` (a no-op for targets that start none):
   * makes room under the child caps by ending idle sessions, or throws GW_SESSION_LIMIT.
   */
  readonly reserveChild: (target: TargetConfig) => void;
  /** What every session shares (services.ts): the Runtime's, by reference. */
  readonly services: SessionServices;
  /** Where the session's audit lines go (logging.audit); undefined: none. */
  readonly audit?: Logger | undefined;
  /** The chain's gates (chain/gates.ts): the rate limit bound to the session's principal, step-up, hooks; absent: none. */
  readonly gates?: ChainGates | undefined;
  /** A target's pinning gate (governance/pin-gate.ts), undefined for a target with pinning off; absent: pinning off everywhere. */
  readonly pins?: ((target: TargetConfig) => PinGate | undefined) | undefined;
}

/** A caller without credentials (no gateway.auth, no Authorization). */
const NOBODY: Caller = Object.freeze({ principal: undefined, authorization: undefined });

/** The store's record of a session's caller: only `noteAuthorization` writes it. */
type CallerRecord = { -readonly [K in keyof Caller]: Caller[K] };

/** What every kind of session passes on to its core from what its factory got. */
export interface CoreSource extends Pick<SessionSeed, 'id' | 'limits' | 'onended' | 'audit' | 'services' | 'gates' | 'caller'> {
  readonly endpoint: string;
}

/** The session-core options every kind of session shares, with its own `logger`. */
export function coreOptionsOf(options: CoreSource, logger: Logger) {
  const { id, endpoint, limits, onended, audit, services, gates, caller } = options;
  return { id, endpoint, limits, logger, onended, audit, services, gates, caller };
}

/**
 * Builds one kind of session (one target's pass-through session, an aggregate over many targets,
 * ...). Each downstream endpoint owns its factory; the store only assigns ids and keeps count.
 */
export type SessionFactory = (seed: SessionSeed) => Session;

export interface SessionStore {
  /** A new, empty session built by `factory`. Throws GW_SESSION_LIMIT or GW_SHUTTING_DOWN. */
  create(factory: SessionFactory, caller?: Caller): Session;
  /** The session `id` if it exists and belongs to `principal` (undefined when auth is off). Changes nothing. */
  get(id: string, principal: Principal | undefined): Session | undefined;
  /**
   * Session `id` was used by its own principal with `authorization` (the request's header): it
   * becomes the caller's latest, which a later token exchange presents. Nothing without a principal
   * or a header, or for another principal.
   */
  noteAuthorization(id: string, principal: Principal | undefined, authorization: string | undefined): void;
  readonly size: number;
  /** Requests in flight in all sessions now (limits.maxInflight caps it). */
  readonly inflight: number;
  /** The live sessions (the status page, the children census); do not end them while iterating. */
  live(): IterableIterator<Session>;
  /** Ends sessions idle past their TTL or not initialized in time; returns how many. Runs on a timer too. */
  sweep(now?: number): number;
  /**
   * Refuses new sessions, waits up to `graceMs` for in-flight requests, then ends every session
   * (killing their children), each at a moment it has none (still within `graceMs`).
   */
  close(graceMs: number): Promise<void>;
}

export interface SessionStoreOptions {
  config: GatewayConfig;
  logger: Logger;
  /** What every session shares (services.ts): the observer hears of every session's life, spares are ended for room first. */
  services: SessionServices;
  /** gateway.rateLimits.perTool keyed by principal id, target and tool (auth/rate-limit.ts); absent: none. */
  limitTool?: ((principal: string, target: string, tool: string) => Promise<void> | undefined) | undefined;
  /**
   * Names a new session bound to `principal` (its id, '' without one); default: a random UUID.
   * A cluster seals the owner and principal into it (cluster/sealed-id.ts).
   */
  newId?: ((principal: string) => string) | undefined;
  /** See SessionSeed.pins (the Runtime's). */
  pins?: ((target: TargetConfig) => PinGate | undefined) | undefined;
  /** Step-up and the targets' guardrails (chain/gates.ts; the per-tool limit is `limitTool`, bound here per principal); absent: none. */
  gates?: Omit<ChainGates, 'limitTool'> | undefined;
}

export function createSessionStore({ config, logger, services, limitTool, newId, pins, gates }: SessionStoreOptions): SessionStore {
  const { inflight, observer, spares } = services;
  const sessions = new Map<string, Session>();
  /** The principal each session is bound to (only when auth is on). */
  const owners = new Map<string, string>();
  /** Sessions the gateway holds for 2026 clients: never found by id. */
  const held = new Set<string>();
  /** Creation time per session id: the start of its initialize deadline. */
  const created = new Map<string, number>();
  /** The caller of each session with a principal, kept current (`noteAuthorization`). */
  const callers = new Map<string, CallerRecord>();
  const audit = config.logging.audit === true;
  const { maxChildren, evictIdleMs } = config.session;
  const policy: SessionPolicy = config.session;
  let closing = false;

  /** Why a session is being ended by the store, until it has (for the observer). */
  const causes = new Map<string, SessionCloseCause>();
  const onended = (session: SessionCore) => {
    const known = sessions.get(session.id);
    if (known === undefined) return;
    sessions.delete(session.id);
    created.delete(session.id);
    owners.delete(session.id);
    held.delete(session.id);
    observer.sessionClosed(known, causes.get(session.id) ?? 'ended');
    causes.delete(session.id);
    callers.delete(session.id);
    // Room for a child may have come free.
    spares?.fill();
  };

  /** Ends `session` now for room: it leaves the map at once, its children stop in the background. */
  const evict = (session: Session, why: string) => {
    causes.set(session.id, 'evicted');
    onended(session);
    logger.info({ session: session.id, why }, 'ending a session to make room for a new one');
    void session.end(`ended to make room (${why})`);
  };

  const room = createRoomKeeper({ config, logger, sessions: () => sessions.values(), size: () => sessions.size, evict });
  const reserveChild = room.forChild;
  // A spare is what nobody uses yet: spares go before any session is ended for a child's room.
  const reserve = spares === undefined ? reserveChild : (target: TargetConfig) => (spares.makeRoom(target), reserveChild(target));

  const store: SessionStore = {
    create(factory, given = NOBODY) {
      // The session's own copy: `noteAuthorization` may update its authorization.
      const caller: CallerRecord = given.principal === undefined ? given : { ...given };
      if (closing) throw new GatewayError('GW_SHUTTING_DOWN');
      room.forSession();
      // 122 random bits: unguessable, and visible ASCII as the spec requires of Mcp-Session-Id.
      const id = newId === undefined ? randomUUID() : newId(caller.principal?.id ?? '');
      // One child logger per session, and only when there is a principal to name in every line.
      const bound = caller.principal === undefined ? logger : logger.child({ principal: caller.principal.id });
      const session = factory({
        id,
        limits: config.limits,
        logger: bound,
        onended,
        caller,
        reserveChild: reserve,
        services,
        audit: audit ? bound.child({ audit: true, session: id }) : undefined,
        gates: {
          ...gates,
          limitTool: limitTool && ((target: string, tool: string) => limitTool(caller.principal?.id ?? 'anonymous', target, tool)),
        },
        pins,
      });
      sessions.set(id, session);
      observer.sessionOpened(session);
      created.set(id, Date.now());
      if (caller.principal !== undefined) {
        owners.set(id, caller.principal.id);
        callers.set(id, caller);
      }
      if (caller.held === true) held.add(id);
      return session;
    },

    get(id, principal) {
      const session = sessions.get(id);
      // Another principal's session is as unknown as one that never existed.
      if (session === undefined || owners.get(id) !== principal?.id || held.has(id)) return undefined;
      return session;
    },

    noteAuthorization(id, principal, authorization) {
      if (principal === undefined || authorization === undefined) return;
      const caller = callers.get(id);
      if (caller !== undefined && owners.get(id) === principal.id) caller.authorization = authorization;
    },

    get size() {
      return sessions.size;
    },

    get inflight() {
      return inflight.active;
    },
    live: () => sessions.values(),

    sweep(now = Date.now()) {
      let reaped = 0;
      for (const session of sessions.values()) {
        // A session at work is active: idle time counts from the end of its last work, not its
        // start. An open standalone stream is not work (limits.ts).
        if (session.busy) session.lastActivity = now;
        const why = expiry(session, created.get(session.id) ?? now, now, policy);
        if (why !== undefined) {
          reaped++;
          causes.set(session.id, 'reaped');
          void session.end(why);
        }
      }
      // An aggregate session starts its members after it was created: over the cap, idle ones go.
      const at = { now, evictIdleMs };
      for (let victim; countChildren(sessions.values()) > maxChildren && (victim = pickVictim(sessions.values(), 'children', at)); ) {
        reaped++;
        evict(victim, `over ${maxChildren} children`);
      }
      return reaped;
    },

    async close(graceMs) {
      closing = true;
      clearInterval(timer);
      const all = [...sessions.values()];
      const endsAt = Date.now() + graceMs;
      let timeout: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timeout = setTimeout(resolve, graceMs)));
      await Promise.race([Promise.all(all.map((s) => s.idle())), deadline]);
      // A replica keeps serving its sessions while it drains: one may have taken a call since it
      // went idle above. Each ends at a moment it has nothing in flight (checked as it ends), so
      // no accepted call is cut; a later request gets 404 and its client initializes elsewhere.
      await Promise.all(
        all.map(async (s) => {
          while (s.busy && Date.now() < endsAt) await Promise.race([s.idle().then(() => new Promise((r) => setTimeout(r, 10))), deadline]);
          await s.end('gateway shutting down');
        }),
      );
      clearTimeout(timeout);
    },
  };

  // Check often enough that a session outlives its TTL or deadline by at most ~10%, and at least once a minute.
  const shortest = Math.min(policy.idleTtlMs, policy.shortIdleTtlMs, policy.initDeadlineMs, evictIdleMs);
  const timer = setInterval(() => store.sweep(), Math.max(250, Math.min(shortest / 10, 60_000)));
  timer.unref();
  return store;
}
