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
import { NOOP_OBSERVER, type DownstreamTransport, type Observer, type SessionCloseCause } from '../log/observer.ts';
import type { Caller } from '../router/policy.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import type { Breakers } from '../upstream/breakers.ts';
import type { UpstreamFactory } from '../upstream/open.ts';
import type { SpareRoom, SpareSource } from '../upstream/spares.ts';
import { createInflightBudget, type InflightBudget } from './inflight.ts';
import type { ToolLimit } from './flavour.ts';
import type { CallGuard } from './hooks/guard.ts';
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
  /** What the downstream said about itself when it opened the session. */
  readonly downstream: DownstreamInfo;
  /**
   * Called before the session starts a child for `target` (a no-op for targets that start none):
   * makes room under the child caps by ending idle sessions, or throws GW_SESSION_LIMIT.
   */
  readonly reserveChild: (target: TargetConfig) => void;
  /** Opens the session's upstream connections (the gateway's runtime; a test's in-memory ones). */
  readonly open: UpstreamFactory;
  /** Where the session's audit lines go (logging.audit); undefined: none. */
  readonly audit?: Logger | undefined;
  /** The gateway's tracer; undefined: tracing off. */
  readonly tracing?: Tracing | undefined;
  /** The gateway's count of requests in flight, against `limits.maxInflight`. */
  readonly inflight: InflightBudget;
  /** The targets' circuit breakers (the Runtime's); absent: none. */
  readonly breakers?: Breakers | undefined;
  /** Who hears about the session's requests and upstreams (the Runtime's observer). */
  readonly observer?: Observer | undefined;
  /** The per-tool rate limit, bound to the session's principal; absent: none. */
  readonly limitTool?: ToolLimit | undefined;
  /** The targets' guardrail hooks and redaction (session/hooks/, the Runtime's); absent: none. */
  readonly guard?: CallGuard | undefined;
  /** Warm spares a session's first start may take (upstream/spares.ts); absent: none. */
  readonly spares?: SpareSource | undefined;
}

/** Facts about the downstream peer that a session may need for its upstreams. */
export interface DownstreamInfo {
  /**
   * The downstream's own Authorization header. Never sent upstream unless a target opts in
   * (the gateway is the downstream's audience, not the upstream's). With gateway.auth, the latest
   * one the session's own principal presented (the store updates it): a refreshed token is the one
   * a later token exchange presents.
   */
  authorization: string | undefined;
  /** The authenticated principal (gateway.auth): the session is unknown to anyone else; policy reads it. */
  readonly principal?: Caller | undefined;
  /** Held by the gateway for 2026 clients (session/stateless/): no client may address it by id. */
  readonly held?: boolean;
  /** How it reached the gateway (default: Streamable HTTP): named in its spans and metrics. */
  readonly transport?: DownstreamTransport | undefined;
}

const NO_DOWNSTREAM_INFO: DownstreamInfo = { authorization: undefined };

/** The session-core options (CoreOptions) that make a session observable, from what its factory got. */
export function observed(options: { readonly downstream?: DownstreamInfo | undefined; readonly observer?: Observer | undefined }) {
  return { observer: options.observer, transport: options.downstream?.transport, principal: options.downstream?.principal?.id };
}

/** What every kind of session passes on to its core from what its factory got. */
export interface CoreSource extends Pick<SessionSeed, 'id' | 'limits' | 'onended' | 'audit' | 'tracing' | 'observer' | 'limitTool' | 'guard'> {
  readonly endpoint: string;
  readonly inflight?: InflightBudget | undefined;
  readonly downstream?: DownstreamInfo | undefined;
}

/** The session-core options every kind of session shares, with its own `logger`. */
export function coreOptionsOf(options: CoreSource, logger: Logger) {
  const { id, endpoint, limits, onended, audit, tracing, inflight, limitTool, guard } = options;
  return { id, endpoint, limits, logger, onended, audit, tracing, inflight, limitTool, guard, held: options.downstream?.held === true, ...observed(options) };
}

/**
 * Builds one kind of session (one target's pass-through session, an aggregate over many targets,
 * ...). Each downstream endpoint owns its factory; the store only assigns ids and keeps count.
 */
export type SessionFactory = (seed: SessionSeed) => Session;

export interface SessionStore {
  /** A new, empty session built by `factory`. Throws GW_SESSION_LIMIT or GW_SHUTTING_DOWN. */
  create(factory: SessionFactory, downstream?: DownstreamInfo): Session;
  /**
   * The session `id` if it exists and belongs to `principal` (undefined when auth is off). With a
   * principal, `authorization` (the request's header) becomes the session's latest.
   */
  get(id: string, principal: Caller | undefined, authorization?: string | undefined): Session | undefined;
  /** A session the gateway holds for 2026 callers was used by its principal with `authorization`: its latest (token exchange reads it). */
  noteAuthorization(id: string, principal: Caller | undefined, authorization: string | undefined): void;
  readonly size: number;
  /** Requests in flight in all sessions now (limits.maxInflight caps it). */
  readonly inflight: number;
  /** The live sessions (the status page, the children census); do not end them while iterating. */
  live(): IterableIterator<Session>;
  /** Ends sessions idle past their TTL or not initialized in time; returns how many. Runs on a timer too. */
  sweep(now?: number): number;
  /**
   * Refuses new sessions, waits up to `graceMs` for in-flight requests, then ends every session
   * (killing their children).
   */
  close(graceMs: number): Promise<void>;
}

export interface SessionStoreOptions {
  config: GatewayConfig;
  logger: Logger;
  /** How sessions open upstream connections (the Runtime's factory; tests may hand in another). */
  upstreams: UpstreamFactory;
  /** The gateway's tracer (telemetry/tracing.ts); undefined: tracing off. */
  tracing?: Tracing | undefined;
  /** The targets' circuit breakers (the Runtime's); absent: none. */
  breakers?: Breakers | undefined;
  /** Told of every session's life and requests (log/observer.ts); default: nobody. */
  observer?: Observer | undefined;
  /** gateway.rateLimits.perTool keyed by principal id, target and tool (auth/rate-limit.ts); absent: none. */
  limitTool?: ((principal: string, target: string, tool: string) => void) | undefined;
  /** The targets' guardrails (session/hooks/guard.ts); absent: none. */
  guard?: CallGuard | undefined;
  /** Warm spares (upstream/spares.ts): ended before any session for room, refilled as sessions end. */
  spares?: (SpareRoom & SpareSource) | undefined;
}

export function createSessionStore({ config, logger, upstreams, tracing, breakers, observer = NOOP_OBSERVER, limitTool, guard, spares }: SessionStoreOptions): SessionStore {
  const inflight = createInflightBudget(config.limits);
  const sessions = new Map<string, Session>();
  /** The principal each session is bound to (only when auth is on). */
  const owners = new Map<string, string>();
  /** Sessions the gateway holds for 2026 clients: never found by id. */
  const held = new Set<string>();
  /** Creation time per session id: the start of its initialize deadline. */
  const created = new Map<string, number>();
  /** The downstream record of each session with a principal, kept current (`get`). */
  const downstreams = new Map<string, DownstreamInfo>();
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
    downstreams.delete(session.id);
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
    create(factory, given = NO_DOWNSTREAM_INFO) {
      // The session's own copy: `get` may update its authorization.
      const downstream = given.principal === undefined ? given : { ...given };
      if (closing) throw new GatewayError('GW_SHUTTING_DOWN');
      room.forSession();
      // 122 random bits: unguessable, and visible ASCII as the spec requires of Mcp-Session-Id.
      const id = randomUUID();
      // One child logger per session, and only when there is a principal to name in every line.
      const bound = downstream.principal === undefined ? logger : logger.child({ principal: downstream.principal.id });
      const session = factory({
        id,
        limits: config.limits,
        logger: bound,
        onended,
        downstream,
        reserveChild: reserve,
        open: upstreams,
        audit: audit ? bound.child({ audit: true, session: id }) : undefined,
        inflight,
        breakers,
        tracing,
        observer,
        limitTool: limitTool && ((target: string, tool: string) => limitTool(downstream.principal?.id ?? 'anonymous', target, tool)),
        guard,
        spares,
      });
      sessions.set(id, session);
      observer.sessionOpened(session);
      created.set(id, Date.now());
      if (downstream.principal !== undefined) {
        owners.set(id, downstream.principal.id);
        downstreams.set(id, downstream);
      }
      if (downstream.held === true) held.add(id);
      return session;
    },

    get(id, principal, authorization) {
      const session = sessions.get(id);
      // Another principal's session is as unknown as one that never existed.
      if (session === undefined || owners.get(id) !== principal?.id || held.has(id)) return undefined;
      if (authorization !== undefined && principal !== undefined) {
        const downstream = downstreams.get(id);
        if (downstream !== undefined && downstream.authorization !== authorization) downstream.authorization = authorization;
      }
      return session;
    },

    noteAuthorization(id, principal, authorization) {
      const downstream = downstreams.get(id);
      if (downstream !== undefined && authorization !== undefined && owners.get(id) === principal?.id) downstream.authorization = authorization;
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
      let timeout: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timeout = setTimeout(resolve, graceMs)));
      await Promise.race([Promise.all(all.map((s) => s.idle())), deadline]);
      clearTimeout(timeout);
      await Promise.all(all.map((s) => s.end('gateway shutting down')));
    },
  };

  // Check often enough that a session outlives its TTL or deadline by at most ~10%, and at least once a minute.
  const shortest = Math.min(policy.idleTtlMs, policy.shortIdleTtlMs, policy.initDeadlineMs, evictIdleMs);
  const timer = setInterval(() => store.sweep(), Math.max(250, Math.min(shortest / 10, 60_000)));
  timer.unref();
  return store;
}
