/**
 * The session store: sessions by id, a cap on how many may exist, idle reaping, and drain on
 * shutdown. Reaping is what keeps abandoned sessions (clients that vanish without DELETE) from
 * leaking children: a session with nothing in flight, no stream attached and no request for
 * `idleTtlMs` is ended and its child killed.
 */
import { randomUUID } from 'node:crypto';
import { GatewayError } from '../errors/gateway-error.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { Session } from './session.ts';

/** What the store hands a session factory: the parts every kind of session needs. */
export interface SessionSeed {
  readonly id: string;
  readonly limits: GatewayConfig['limits'];
  readonly logger: Logger;
  /** The session must call this once when it has ended, whatever ended it. */
  readonly onended: (session: Session) => void;
  /** What the downstream said about itself when it opened the session. */
  readonly downstream: DownstreamInfo;
}

/** Facts about the downstream peer that a session may need for its upstreams. */
export interface DownstreamInfo {
  /**
   * The downstream's own Authorization header. Never sent upstream unless a target opts in
   * (the gateway is the downstream's audience, not the upstream's).
   */
  readonly authorization: string | undefined;
}

const NO_DOWNSTREAM_INFO: DownstreamInfo = { authorization: undefined };

/**
 * Builds one kind of session (one target's pass-through session, an aggregate over many targets,
 * ...). Each downstream endpoint owns its factory; the store only assigns ids and keeps count.
 */
export type SessionFactory = (seed: SessionSeed) => Session;

export interface SessionStore {
  /** A new, empty session built by `factory`. Throws GW_SESSION_LIMIT or GW_SHUTTING_DOWN. */
  create(factory: SessionFactory, downstream?: DownstreamInfo): Session;
  get(id: string): Session | undefined;
  readonly size: number;
  /** Ends sessions idle past the TTL; returns how many. Runs on a timer too. */
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
}

export function createSessionStore({ config, logger }: SessionStoreOptions): SessionStore {
  const sessions = new Map<string, Session>();
  const { maxSessions } = config.limits;
  const { idleTtlMs } = config.session;
  let closing = false;

  const onended = (session: Session) => {
    sessions.delete(session.id);
  };

  const store: SessionStore = {
    create(factory, downstream = NO_DOWNSTREAM_INFO) {
      if (closing) throw new GatewayError('GW_SHUTTING_DOWN');
      if (sessions.size >= maxSessions) {
        logger.warn({ maxSessions }, 'session limit reached; refusing a new session');
        throw new GatewayError('GW_SESSION_LIMIT', undefined, { limit: maxSessions });
      }
      // 122 random bits: unguessable, and visible ASCII as the spec requires of Mcp-Session-Id.
      const id = randomUUID();
      const session = factory({ id, limits: config.limits, logger, onended, downstream });
      sessions.set(id, session);
      return session;
    },

    get(id) {
      return sessions.get(id);
    },

    get size() {
      return sessions.size;
    },

    sweep(now = Date.now()) {
      let reaped = 0;
      for (const session of sessions.values()) {
        // A busy session is active: idle time counts from the end of its last work, not its start.
        if (session.busy) session.lastActivity = now;
        else if (now - session.lastActivity >= idleTtlMs) {
          reaped++;
          void session.end(`idle for ${Math.round((now - session.lastActivity) / 1000)} s`);
        }
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

  // Check often enough that a session outlives its TTL by at most ~10%, and at least once a minute.
  const timer = setInterval(() => store.sweep(), Math.max(250, Math.min(idleTtlMs / 10, 60_000)));
  timer.unref();
  return store;
}
