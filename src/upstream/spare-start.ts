/**
 * How one warm spare starts, and what happens when it is lost (spares.ts): module functions over
 * the pool's state, so a spare's start allocates only the callbacks its connection needs.
 */
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
import { answerWaiting } from './spare-fit.ts';
import { handshakeTimeouts } from './startup-deadline.ts';

/** A started child, ready for the session that takes it. */
export interface WarmChild {
  readonly connection: UpstreamConnection;
  /** The upstream's answer to the spare's initialize; undefined: spawned only, the session initializes it. */
  readonly result: JsonObject | undefined;
}

/** 60 s: a spare that waited this long before it was lost was not part of a crash loop. */
const STABLE_MS = 60_000;

export interface Shelf {
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

/** What starting and losing a spare need of the pool. */
export interface PoolState {
  readonly logger: Logger;
  readonly initParams: JsonObject;
  readonly breakers: Breakers | undefined;
  readonly open: UpstreamFactory;
  readonly closed: boolean;
  readonly shelves: Map<string, Shelf>;
  fill(): void;
}

export const shelfCount = (shelf: Shelf) => shelf.ready.length + shelf.starting.size;
export const givenUp = (shelf: Shelf) => shelf.losses > shelf.target.restart.maxRestarts;
const current = (pool: PoolState, shelf: Shelf) => !pool.closed && pool.shelves.get(shelf.target.name) === shelf;

function afterBackoff(pool: PoolState, shelf: Shelf): void {
  shelf.timer = undefined;
  pool.fill();
}

/** The spare is gone: another follows after the backoff, unless too many were lost in a row. */
function lost(pool: PoolState, shelf: Shelf, why: string): void {
  const { logger } = pool;
  shelf.losses++;
  if (!current(pool, shelf)) return;
  if (givenUp(shelf)) {
    logger.warn({ target: shelf.target.name, losses: shelf.losses, why }, 'spares lost in a row; keeping none for this target until a reload changes it');
    return;
  }
  const delay = backoffMs(shelf.target.restart, shelf.losses - 1);
  logger.warn({ target: shelf.target.name, why, delayMs: delay }, 'a spare was lost; replacing it');
  clearTimeout(shelf.timer);
  shelf.timer = setTimeout(afterBackoff, delay, pool, shelf);
  shelf.timer.unref();
}

export async function startOne(pool: PoolState, shelf: Shelf): Promise<void> {
  const { logger, initParams } = pool;
  const { target } = shelf;
  const breaker = pool.breakers?.of(target);
  let connection: UpstreamConnection;
  try {
    connection = pool.open({ target, logger, poolLogger: logger });
  } catch (err) {
    // Counted as a loss: the backoff (or giving up) ends the filling loop.
    return lost(pool, shelf, toGatewayError(err).message);
  }
  shelf.starting.add(connection);
  const attempt = createStartAttempt(breaker, () => !shelf.starting.has(connection) || !current(pool, shelf));
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
    lost(pool, shelf, `exited while waiting: ${reason.message}`);
  };
  const { kind } = shelf;
  try {
    await connection.start();
    const result = kind === 'initialized' ? await composedHandshake(connection, initParams, createRootsSettle(initParams), handshakeTimeouts(target), logger, attempt.failed) : undefined;
    if (!shelf.starting.delete(connection) || !current(pool, shelf)) {
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
    if (wanted) lost(pool, shelf, toGatewayError(err).message);
  }
}

/** Ends every spare of the shelf, waiting or starting. */
export function endAll(shelf: Shelf, reason: string): Promise<unknown> {
  clearTimeout(shelf.timer);
  const all = [...shelf.ready.map((w) => w.connection), ...shelf.starting];
  shelf.ready.length = 0;
  shelf.starting.clear();
  return Promise.all(all.map((c) => c.close(reason)));
}
