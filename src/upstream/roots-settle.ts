/**
 * The first call to a member waits for its roots exchange. Some servers ask the client for its
 * roots as soon as they get `notifications/initialized` (server-filesystem does) and serve a call
 * that arrives before they have adopted the answer with their command-line roots. A direct client
 * sees the request first and can answer before calling; behind an aggregate the gateway starts the
 * member inside the client's first call, so it must hold that call until the exchange is over.
 *
 * Only when the client declared the `roots` capability (2025-11-25 client/roots). Events, not
 * clocks, decide; the clocks only bound a member or client that never answers:
 * 1. Did it ask? A `ping` sent after `initialized` is answered only after the member has processed
 *    `initialized` (a server handles its input in order), so a roots/list it sends on
 *    `initialized` arrives before the ping's answer, however slow a loaded machine makes it.
 *    A member that asks later than that, on its own schedule, is not waited for.
 * 2. If it asked: the client's answer must have gone back to it.
 * 3. Then it must have taken the answer in: a few more pings, one after the other, each answered
 *    after the member has read what came before it and had a turn of its event loop, so work the
 *    answer started (server-filesystem checks each root on disk before adopting it) has run.
 */
import type { JsonObject, JsonRpcRequest } from '../jsonrpc/types.ts';
import { isObject } from '../jsonrpc/envelope.ts';

/** 2 s: a ping is answered at once by any live server; a member that ignores it costs its first call this much. */
export const ROOTS_ASK_BOUND_MS = 2_000;
/** 5 s: the client answers roots/list from memory; one that takes longer is not waited for. */
export const ROOTS_ANSWER_MS = 5_000;
/**
 * Pings after the answer, one after the other: the member reads the answer by the first; the rest
 * give work it started (a few file system calls per root) turns of its event loop to finish. Two
 * were not enough for a member that awaits two fs calls per root (1 first call in 10 saw the old
 * roots); five were, also beside busy processes. They cost a few ms, once per start of a member
 * that asked.
 */
const ADOPT_PROBES = 5;

export interface RootsSettle {
  /** Every request from the member during its start (before it is forwarded to the client). */
  asked(request: JsonRpcRequest): void;
  /** The client's answer to one of them went back to the member. */
  answered(): void;
  /**
   * Resolves once the exchange is over, or the member did not ask. `probe` sends the member a ping
   * and resolves on its answer (or failure). Never rejects.
   */
  settled(probe: () => Promise<unknown>): Promise<void>;
}

/** Resolves when `promise` settles or after `ms`, whichever is first; never rejects. */
function bounded(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([promise.then(ignore, ignore), timeout]).finally(() => clearTimeout(timer));
}

function ignore(): void {}

export function createRootsSettle(initParams: JsonObject): RootsSettle {
  const declared = isObject(initParams.capabilities) && initParams.capabilities.roots !== undefined;
  let asking = 0;
  let everAsked = false;
  let allAnswered: (() => void) | undefined;
  const answeredAll = new Promise<void>((resolve) => (allAnswered = resolve));
  return {
    asked(request) {
      if (!declared || request.method !== 'roots/list') return;
      asking++;
      everAsked = true;
    },
    answered() {
      if (asking > 0 && --asking === 0) allAnswered?.();
    },
    async settled(probe) {
      if (!declared) return;
      await bounded(probe(), ROOTS_ASK_BOUND_MS);
      if (!everAsked) return;
      if (asking > 0) await bounded(answeredAll, ROOTS_ANSWER_MS);
      for (let i = 0; i < ADOPT_PROBES; i++) await bounded(probe(), ROOTS_ASK_BOUND_MS);
    },
  };
}
