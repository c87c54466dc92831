/**
 * Warm spares: for a per-session stdio target with `upstream.spares: N`, N children started and
 * initialized before any session asks, so a new session takes one instead of waiting for a spawn
 * and a handshake (docs/upstreams.md, "Warm spares").
 *
 * - A spare is initialized with the gateway's own params (`initParams`: its clientInfo, no
 *   capabilities, the newest protocol version). A session takes one only when a fresh child would
 *   have been initialized the same way as far as the server can tell (`fits`); otherwise it starts
 *   its own child as before.
 * - Spares count toward the child caps: one starts only while a child fits beside the sessions'
 *   children (`sessionChildren`), and `makeRoom`, run before the store looks for room for a
 *   session's child, ends spares first: the store then ends a session only if the sessions' own
 *   children fill the cap.
 * - A taken spare is replaced soon; a lost one (exit while waiting, failed start) after the restart
 *   backoff; past `maxRestarts` losses in a row, none until a reload. The breaker hears every start.
 * - None for shared-mode or `principalEnv` targets (the config refuses the option there).
 */
import { isDeepStrictEqual } from 'node:util';
import type { TargetConfig } from '../config/types.ts';
import { toGatewayError } from '../errors/gateway-error.ts';
import type { JsonObject } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import type { Breakers } from './breakers.ts';
import type { UpstreamConnection } from './connection.ts';
import { composedHandshake } from './handshake.ts';
import type { UpstreamFactory } from './open.ts';
import { createRootsSettle } from './roots-settle.ts';
import { backoffMs, createStartAttempt } from './start-attempt.ts';
import { answerWaiting, fits, kindFor, sparesWanted } from './spare-fit.ts';
import { handshakeTimeouts } from './startup-deadline.ts';

export { fits, sparesWanted } from './spare-fit.ts';

/** A started child, ready for the session that takes it. */
export interface WarmChild {
  readonly connection: UpstreamConnection;
  /** The upstream's answer to the spare's initialize; undefined: spawned only, the session initializes it. */
  readonly result: JsonObject | undefined;
}

/** What a session's supervisor asks of the spares. */
export interface SpareSource {
  /**
   * A spare of `target` for a session initializing with `params`, now removed from the pool: an
   * initialized one that fits, else a spawned one; undefined: none.
   */
  take(target: TargetConfig, params: JsonObject): WarmChild | undefined;
}

/** What the session store asks of the spares: they count toward the child caps and go first. */
export interface SpareRoom {
  /** Before a session's child of `target` starts: ends spares while they and the sessions' children fill a cap. */
  makeRoom(target: TargetConfig): void;
  /** Starts spares where fewer than wanted wait and a child fits (in REFILL_DELAY_MS, coalesced). */
  fill(): void;
}

export interface Spares extends SpareSource, SpareRoom {
  /** Spares waiting or starting (of `target`, if given). */
  count(target?: string): number;
  /** Ends one spare (of `target`, if given) to make room; false when there is none. */
  shed(target?: string): boolean;
  /** Spares per target now (the children census). */
  counts(): Map<string, number>;
  /** The config now in force: a changed or removed target's spares are ended, new ones are started. */
  retain(targets: Iterable<TargetConfig>): void;
  /** Ends every spare (their process trees) and starts no more. */
  close(): Promise<void>;
}

export interface SparesOptions {
  targets: Iterable<TargetConfig>;
  open: UpstreamFactory;
  logger: Logger;
  /** The initialize a spare is opened with: the gateway's clientInfo, capabilities, protocol version. */
  initParams: JsonObject;
  /** The child caps (session.maxChildren, session.maxChildrenPerTarget): spares count toward them. */
  caps: { readonly maxChildren: number; readonly maxChildrenPerTarget: number };
  /** Children the sessions own now (of `target`, if given). */
  sessionChildren: (target?: string) => number;
  breakers?: Breakers | undefined;
}

interface Shelf {
  target: TargetConfig;
  readonly ready: WarmChild[];
  readonly starting: Set<UpstreamConnection>;
  /** Spares lost in a row (failed starts, exits while waiting); reset by a take. */
  losses: number;
  /** Set while waiting out a backoff. */
  timer: NodeJS.Timeout | undefined;
  /** When each waiting spare became ready. */
  readonly since: Map<UpstreamConnection, number>;
  /** The kind the next spare started will be (kindFor, from the last taker). */
  kind: 'initialized' | 'spawned';
}

/** 50 ms: past a session's initialize answer and its client's `initialized`, short beside a spawn. */
const REFILL_DELAY_MS = 50;
/** 60 s: a spare that waited this long before it was lost was not part of a crash loop. */
const STABLE_MS = 60_000;

export function createSpares(options: SparesOptions): Spares {
  const { initParams, breakers } = options;
  const logger = options.logger.child({ spares: true });
  const shelves = new Map<string, Shelf>();
  let closed = false;
  let scheduled = false;

  const count = (shelf: Shelf) => shelf.ready.length + shelf.starting.size;
  const given = (shelf: Shelf) => shelf.losses > shelf.target.restart.maxRestarts;
  const current = (shelf: Shelf) => !closed && shelves.get(shelf.target.name) === shelf;

  /** The spare is gone: another follows after the backoff, unless too many were lost in a row. */
  const lost = (shelf: Shelf, why: string) => {
    shelf.losses++;
    if (!current(shelf)) return;
    if (given(shelf)) {
      logger.warn({ target: shelf.target.name, losses: shelf.losses, why }, 'spares lost in a row; keeping none for this target until a reload changes it');
      return;
    }
    const delay = backoffMs(shelf.target.restart, shelf.losses - 1);
    logger.warn({ target: shelf.target.name, why, delayMs: delay }, 'a spare was lost; replacing it');
    clearTimeout(shelf.timer);
    shelf.timer = setTimeout(() => {
      shelf.timer = undefined;
      fill();
    }, delay);
    shelf.timer.unref();
  };

  const startOne = async (shelf: Shelf): Promise<void> => {
    const { target } = shelf;
    const breaker = breakers?.of(target);
    let connection: UpstreamConnection;
    try {
      connection = options.open({ target, logger, poolLogger: logger });
    } catch (err) {
      // Counted as a loss: the backoff (or giving up) ends the filling loop.
      return lost(shelf, toGatewayError(err).message);
    }
    shelf.starting.add(connection);
    const attempt = createStartAttempt(breaker, () => !shelf.starting.has(connection) || !current(shelf));
    connection.correlator.onrequest = (request) => answerWaiting(connection, request);
    connection.correlator.onnotification = () => undefined;
    connection.onexit = (reason) => {
      attempt.exited(reason);
      const at = shelf.ready.findIndex((w) => w.connection === connection);
      if (at === -1) return; // still starting: the handshake fails and says so below
      shelf.ready.splice(at, 1);
      const waited = Date.now() - (shelf.since.get(connection) ?? 0);
      shelf.since.delete(connection);
      if (waited >= STABLE_MS) shelf.losses = 0;
      lost(shelf, `exited while waiting: ${reason.message}`);
    };
    const { kind } = shelf;
    try {
      await connection.start();
      const result = kind === 'initialized' ? await composedHandshake(connection, initParams, createRootsSettle(initParams), handshakeTimeouts(target), logger, attempt.failed) : undefined;
      if (!shelf.starting.delete(connection) || !current(shelf)) {
        attempt.ended();
        await connection.close('spare no longer wanted');
        return;
      }
      // A spawned spare has proven nothing yet: the breaker hears its handshake from the session.
      if (result === undefined) attempt.ended();
      else attempt.succeeded();
      shelf.ready.push({ connection, result });
      shelf.since.set(connection, Date.now());
      logger.debug({ target: target.name, pid: connection.pid, kind }, 'spare ready');
    } catch (err) {
      const wanted = shelf.starting.delete(connection);
      attempt.ended(toGatewayError(err));
      await connection.close('spare start failed');
      if (wanted) lost(shelf, toGatewayError(err).message);
    }
  };

  const children = (name?: string) => options.sessionChildren(name) + spares.count(name);
  /** Which cap one more child of `target` would pass, if any. */
  const full = (target: TargetConfig): 'target' | 'all' | undefined =>
    children(target.name) >= options.caps.maxChildrenPerTarget ? 'target' : children() >= options.caps.maxChildren ? 'all' : undefined;

  const fillNow = () => {
    scheduled = false;
    if (closed) return;
    for (const shelf of shelves.values()) {
      const wanted = sparesWanted(shelf.target);
      // An open (or probing) circuit is left to sessions: a spare is started once it has closed.
      if ((breakers?.of(shelf.target).state ?? 'closed') !== 'closed') continue;
      while (count(shelf) < wanted && shelf.timer === undefined && !given(shelf) && full(shelf.target) === undefined) {
        startOne(shelf).catch((err: unknown) => logger.error({ err, target: shelf.target.name }, 'starting a spare failed'));
      }
    }
  };
  const fill = () => {
    if (scheduled || closed || shelves.size === 0) return;
    scheduled = true;
    // Not at once: a session reserving room now has counted its own child by then, and the spawn
    // (some ms of the gateway's own time) does not delay the answer to the initialize that took a spare.
    setTimeout(fillNow, REFILL_DELAY_MS).unref();
  };

  const endAll = (shelf: Shelf, reason: string): Promise<unknown> => {
    clearTimeout(shelf.timer);
    const all = [...shelf.ready.map((w) => w.connection), ...shelf.starting];
    shelf.ready.length = 0;
    shelf.starting.clear();
    return Promise.all(all.map((c) => c.close(reason)));
  };

  const shelve = (target: TargetConfig) => {
    if (sparesWanted(target) > 0) shelves.set(target.name, { target, ready: [], starting: new Set(), losses: 0, timer: undefined, since: new Map(), kind: 'spawned' });
  };
  for (const target of options.targets) shelve(target);

  const spares: Spares = {
    makeRoom(target) {
      // Targets whose children sessions do not own (shared pools, remote) need no room.
      if (target.type !== 'stdio' || target.upstream?.mode === 'shared') return;
      for (let cap = full(target); cap !== undefined && spares.shed(cap === 'target' ? target.name : undefined); cap = full(target));
    },
    take(target, params) {
      const shelf = shelves.get(target.name);
      // A session of another config of this target (before or after a reload) starts its own.
      if (shelf === undefined || !(shelf.target === target || isDeepStrictEqual(shelf.target, target))) return undefined;
      const initialized = shelf.ready.findIndex((w) => w.result !== undefined && fits(params, initParams, w.result));
      const at = initialized !== -1 ? initialized : shelf.ready.findIndex((w) => w.result === undefined);
      if (at === -1) return undefined;
      const [warm] = shelf.ready.splice(at, 1);
      if (warm === undefined) return undefined;
      shelf.since.delete(warm.connection);
      shelf.losses = 0;
      shelf.kind = kindFor(params, initParams);
      fill();
      return warm;
    },
    count(name) {
      let total = 0;
      for (const shelf of shelves.values()) if (name === undefined || shelf.target.name === name) total += count(shelf);
      return total;
    },
    shed(name) {
      for (const shelf of shelves.values()) {
        if (name !== undefined && shelf.target.name !== name) continue;
        // A starting one first: it has cost less so far; the oldest waiting one otherwise.
        const [first] = shelf.starting;
        const victim = first ?? shelf.ready.shift()?.connection;
        if (victim === undefined) continue;
        shelf.starting.delete(victim);
        shelf.since.delete(victim);
        logger.info({ target: shelf.target.name }, 'ending a spare to make room for a session');
        void victim.close('ended to make room');
        return true;
      }
      return false;
    },
    fill,
    counts() {
      const counts = new Map<string, number>();
      for (const [name, shelf] of shelves) if (count(shelf) > 0) counts.set(name, count(shelf));
      return counts;
    },
    retain(targets) {
      const next = new Map([...targets].map((t) => [t.name, t]));
      for (const [name, shelf] of shelves) {
        const target = next.get(name);
        if (target !== undefined && isDeepStrictEqual(shelf.target, target)) {
          shelf.target = target;
          continue;
        }
        shelves.delete(name);
        void endAll(shelf, 'its target changed');
      }
      for (const target of next.values()) if (!shelves.has(target.name)) shelve(target);
      fill();
    },
    async close() {
      closed = true;
      const all = [...shelves.values()];
      shelves.clear();
      await Promise.all(all.map((shelf) => endAll(shelf, 'gateway shutting down')));
    },
  };
  return spares;
}

