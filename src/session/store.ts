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
import type { AuditSink } from '../log/audit-record.ts';
import type { SessionCloseCause } from '../log/observer.ts';
import type { Caller, Principal } from '../upstream/caller.ts';
import type { PinGate } from '../governance/pin-gate.ts';
import type { ChainGates } from './chain/gates.ts';
import type { SessionServices } from './services.ts';
import type { Session, SessionCore } from './session.ts';
import type { SessionFactory } from './session-seed.ts';
import { countChildren, expiry, pickVictim } from './limits.ts';
import { createRoomKeeper, type RoomKeeper } from './room.ts';

export { coreOptionsOf, type CoreSource, type SessionFactory, type SessionSeed } from './session-seed.ts';

/** A caller without credentials (no gateway.auth, no Authorization). */
const NOBODY: Caller = Object.freeze({ principal: undefined, authorization: undefined });

/** The store's record of a session's caller: only `noteAuthorization` writes it. */
type CallerRecord = { -readonly [K in keyof Caller]: Caller[K] };

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
  /** The audit trail (observe/audit/trail.ts, lent by the composition root); absent: no records. */
  audit?: AuditSink | undefined;
}

export function createSessionStore(options: SessionStoreOptions): SessionStore {
  const store = new SessionTable(options);
  // Check often enough that a session outlives its TTL or deadline by at most ~10%, and at least once a minute.
  const { policy } = store;
  const shortest = Math.min(policy.idleTtlMs, policy.shortIdleTtlMs, policy.initDeadlineMs, policy.evictIdleMs);
  store.timer = setInterval(() => store.sweep(), Math.max(250, Math.min(shortest / 10, 60_000)));
  store.timer.unref();
  return store;
}

/** The store is its own state (the sessions and what it keeps per id); its methods are on the class. */
class SessionTable implements SessionStore {
  private readonly options: SessionStoreOptions;
  readonly policy: GatewayConfig['session'];
  private readonly sessions = new Map<string, Session>();
  /** The principal each session is bound to (only when auth is on). */
  private readonly owners = new Map<string, string>();
  /** Sessions the gateway holds for 2026 clients: never found by id. */
  private readonly held = new Set<string>();
  /** Creation time per session id: the start of its initialize deadline. */
  private readonly created = new Map<string, number>();
  /** The caller of each session with a principal, kept current (`noteAuthorization`). */
  private readonly callers = new Map<string, CallerRecord>();
  /** Why a session is being ended by the store, until it has (for the observer). */
  private readonly causes = new Map<string, SessionCloseCause>();
  private closing = false;
  timer: NodeJS.Timeout | undefined = undefined;
  private readonly room: RoomKeeper;
  /** Every session's reserveChild (one function for all). */
  private readonly reserve: (target: TargetConfig) => void;

  constructor(options: SessionStoreOptions) {
    const { config, logger, services } = options;
    const { spares } = services;
    this.options = options;
    this.policy = config.session;
    const sessions = this.sessions;
    this.room = createRoomKeeper({ config, logger, sessions: () => sessions.values(), size: () => sessions.size, evict: (session, why) => this.evict(session, why) });
    const reserveChild = this.room.forChild;
    // A spare is what nobody uses yet: spares go before any session is ended for a child's room.
    this.reserve = spares === undefined ? reserveChild : (target: TargetConfig) => (spares.makeRoom(target), reserveChild(target));
  }

  /** A field, not a method: every session gets it in its seed and calls it detached. */
  private readonly onended = (session: SessionCore): void => {
    const known = this.sessions.get(session.id);
    if (known === undefined) return;
    this.sessions.delete(session.id);
    this.created.delete(session.id);
    this.owners.delete(session.id);
    this.held.delete(session.id);
    this.options.services.observer.sessionClosed(known, this.causes.get(session.id) ?? 'ended');
    this.causes.delete(session.id);
    this.callers.delete(session.id);
    // Room for a child may have come free.
    this.options.services.spares?.fill();
  };

  /** Ends `session` now for room: it leaves the map at once, its children stop in the background. */
  private evict(session: Session, why: string): void {
    this.causes.set(session.id, 'evicted');
    this.onended(session);
    this.options.logger.info({ session: session.id, why }, 'ending a session to make room for a new one');
    void session.end(`ended to make room (${why})`);
  }

  create(factory: SessionFactory, given: Caller = NOBODY): Session {
    const { config, logger, services, limitTool, newId, pins, gates, audit } = this.options;
    // The session's own copy: `noteAuthorization` may update its authorization.
    const caller: CallerRecord = given.principal === undefined ? given : { ...given };
    if (this.closing) throw new GatewayError('GW_SHUTTING_DOWN');
    this.room.forSession();
    // 122 random bits: unguessable, and visible ASCII as the spec requires of Mcp-Session-Id.
    const id = newId === undefined ? randomUUID() : newId(caller.principal?.id ?? '');
    // One child logger per session, and only when there is a principal to name in every line.
    const bound = caller.principal === undefined ? logger : logger.child({ principal: caller.principal.id });
    const session = factory({
      id,
      limits: config.limits,
      logger: bound,
      onended: this.onended,
      caller,
      reserveChild: this.reserve,
      services,
      audit,
      gates: {
        ...gates,
        limitTool: limitTool && ((target: string, tool: string) => limitTool(caller.principal?.id ?? 'anonymous', target, tool)),
      },
      pins,
    });
    this.sessions.set(id, session);
    services.observer.sessionOpened(session);
    this.created.set(id, Date.now());
    if (caller.principal !== undefined) {
      this.owners.set(id, caller.principal.id);
      this.callers.set(id, caller);
    }
    if (caller.held === true) this.held.add(id);
    return session;
  }

  get(id: string, principal: Principal | undefined): Session | undefined {
    const session = this.sessions.get(id);
    // Another principal's session is as unknown as one that never existed.
    if (session === undefined || this.owners.get(id) !== principal?.id || this.held.has(id)) return undefined;
    return session;
  }

  noteAuthorization(id: string, principal: Principal | undefined, authorization: string | undefined): void {
    if (principal === undefined || authorization === undefined) return;
    const caller = this.callers.get(id);
    if (caller !== undefined && this.owners.get(id) === principal.id) caller.authorization = authorization;
  }

  get size(): number {
    return this.sessions.size;
  }

  get inflight(): number {
    return this.options.services.inflight.active;
  }

  live(): IterableIterator<Session> {
    return this.sessions.values();
  }

  sweep(now = Date.now()): number {
    const { sessions, policy } = this;
    const { maxChildren, evictIdleMs } = policy;
    let reaped = 0;
    for (const session of sessions.values()) {
      // A session at work is active: idle time counts from the end of its last work, not its
      // start. An open standalone stream is not work (limits.ts).
      if (session.busy) session.lastActivity = now;
      const why = expiry(session, this.created.get(session.id) ?? now, now, policy);
      if (why !== undefined) {
        reaped++;
        this.causes.set(session.id, 'reaped');
        void session.end(why);
      }
    }
    // An aggregate session starts its members after it was created: over the cap, idle ones go.
    const at = { now, evictIdleMs };
    for (let victim; countChildren(sessions.values()) > maxChildren && (victim = pickVictim(sessions.values(), 'children', at)); ) {
      reaped++;
      this.evict(victim, `over ${maxChildren} children`);
    }
    return reaped;
  }

  async close(graceMs: number): Promise<void> {
    this.closing = true;
    clearInterval(this.timer);
    const all = [...this.sessions.values()];
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
  }
}
