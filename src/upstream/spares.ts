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
import type { JsonObject } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import type { Breakers } from './breakers.ts';
import type { UpstreamFactory } from './open.ts';
import { fits, kindFor, sparesWanted } from './spare-fit.ts';
import { endAll, givenUp, shelfCount, startOne, type PoolState, type Shelf, type WarmChild } from './spare-start.ts';

export { fits, sparesWanted } from './spare-fit.ts';
export type { WarmChild } from './spare-start.ts';

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

/** 50 ms: past a session's initialize answer and its client's `initialized`, short beside a spawn. */
const REFILL_DELAY_MS = 50;

export function createSpares(options: SparesOptions): Spares {
  return new SparePool(options);
}

/** Starts spares where fewer than wanted wait and a child fits (fill's timer, coalesced). */
function fillNow(pool: SparePool): void {
  pool.scheduled = false;
  if (pool.closed) return;
  const { breakers, logger } = pool;
  for (const shelf of pool.shelves.values()) {
    const wanted = sparesWanted(shelf.target);
    // An open (or probing) circuit is left to sessions: a spare is started once it has closed.
    if ((breakers?.of(shelf.target).state ?? 'closed') !== 'closed') continue;
    while (shelfCount(shelf) < wanted && shelf.timer === undefined && !givenUp(shelf) && pool.full(shelf.target) === undefined) {
      startOne(pool, shelf).catch((err: unknown) => logger.error({ err, target: shelf.target.name }, 'starting a spare failed'));
    }
  }
}

/**
 * The pool is its own state (PoolState): the shelves of spares by target; its methods are on the
 * class. How one spare starts and is lost is in spare-start.ts.
 */
class SparePool implements Spares, PoolState {
  readonly initParams: JsonObject;
  readonly breakers: Breakers | undefined;
  readonly logger: Logger;
  readonly open: UpstreamFactory;
  readonly shelves = new Map<string, Shelf>();
  closed = false;
  scheduled = false;
  private readonly caps: SparesOptions['caps'];
  private readonly sessionChildren: (target?: string) => number;

  constructor(options: SparesOptions) {
    this.initParams = options.initParams;
    this.breakers = options.breakers;
    this.logger = options.logger.child({ spares: true });
    this.open = options.open;
    this.caps = options.caps;
    this.sessionChildren = options.sessionChildren;
    for (const target of options.targets) this.shelve(target);
  }

  private children(name?: string): number {
    return this.sessionChildren(name) + this.count(name);
  }

  /** Which cap one more child of `target` would pass, if any. */
  full(target: TargetConfig): 'target' | 'all' | undefined {
    return this.children(target.name) >= this.caps.maxChildrenPerTarget ? 'target' : this.children() >= this.caps.maxChildren ? 'all' : undefined;
  }

  fill(): void {
    if (this.scheduled || this.closed || this.shelves.size === 0) return;
    this.scheduled = true;
    // Not at once: a session reserving room now has counted its own child by then, and the spawn
    // (some ms of the gateway's own time) does not delay the answer to the initialize that took a spare.
    setTimeout(fillNow, REFILL_DELAY_MS, this).unref();
  }

  private shelve(target: TargetConfig): void {
    if (sparesWanted(target) > 0) this.shelves.set(target.name, { target, ready: [], starting: new Set(), losses: 0, timer: undefined, since: new Map(), kind: 'spawned' });
  }

  makeRoom(target: TargetConfig): void {
    // Targets whose children sessions do not own (shared pools, remote) need no room.
    if (target.type !== 'stdio' || target.upstream?.mode === 'shared') return;
    for (let cap = this.full(target); cap !== undefined && this.shed(cap === 'target' ? target.name : undefined); cap = this.full(target));
  }

  take(target: TargetConfig, params: JsonObject): WarmChild | undefined {
    const shelf = this.shelves.get(target.name);
    // A session of another config of this target (before or after a reload) starts its own.
    if (shelf === undefined || !(shelf.target === target || isDeepStrictEqual(shelf.target, target))) return undefined;
    const { initParams } = this;
    const initialized = shelf.ready.findIndex((w) => w.result !== undefined && fits(params, initParams, w.result));
    const at = initialized !== -1 ? initialized : shelf.ready.findIndex((w) => w.result === undefined);
    if (at === -1) return undefined;
    const [warm] = shelf.ready.splice(at, 1);
    if (warm === undefined) return undefined;
    shelf.since.delete(warm.connection);
    shelf.losses = 0;
    shelf.kind = kindFor(params, initParams);
    this.fill();
    return warm;
  }

  count(name?: string): number {
    let total = 0;
    for (const shelf of this.shelves.values()) if (name === undefined || shelf.target.name === name) total += shelfCount(shelf);
    return total;
  }

  shed(name?: string): boolean {
    for (const shelf of this.shelves.values()) {
      if (name !== undefined && shelf.target.name !== name) continue;
      // A starting one first: it has cost less so far; the oldest waiting one otherwise.
      const [first] = shelf.starting;
      const victim = first ?? shelf.ready.shift()?.connection;
      if (victim === undefined) continue;
      shelf.starting.delete(victim);
      shelf.since.delete(victim);
      this.logger.info({ target: shelf.target.name }, 'ending a spare to make room for a session');
      void victim.close('ended to make room');
      return true;
    }
    return false;
  }

  counts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const [name, shelf] of this.shelves) if (shelfCount(shelf) > 0) counts.set(name, shelfCount(shelf));
    return counts;
  }

  retain(targets: Iterable<TargetConfig>): void {
    const next = new Map([...targets].map((t) => [t.name, t]));
    for (const [name, shelf] of this.shelves) {
      const target = next.get(name);
      if (target !== undefined && isDeepStrictEqual(shelf.target, target)) {
        shelf.target = target;
        continue;
      }
      this.shelves.delete(name);
      void endAll(shelf, 'its target changed');
    }
    for (const target of next.values()) if (!this.shelves.has(target.name)) this.shelve(target);
    this.fill();
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.shelves.values()];
    this.shelves.clear();
    await Promise.all(all.map((shelf) => endAll(shelf, 'gateway shutting down')));
  }
}
