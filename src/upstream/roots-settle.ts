/**
 * The first call to a member waits for its roots exchange. Some servers ask the client for its
 * roots as soon as they get `notifications/initialized` (server-filesystem does) and serve a call
 * that arrives before the answer with their command-line roots. A direct client sees the request
 * first and can answer before calling; behind an aggregate the gateway starts the member inside
 * the client's first call, so it must hold that call until the exchange is over.
 *
 * Only when the client declared the `roots` capability (2025-11-25 client/roots): the member gets
 * ROOTS_ASK_WINDOW_MS after `initialized` to ask; if it asks, the call waits for the client's
 * answer, up to ROOTS_ANSWER_MS. A server that asks later than the window is not waited for.
 */
import type { JsonObject, JsonRpcRequest } from '../jsonrpc/types.ts';
import { isObject } from '../jsonrpc/envelope.ts';

/** 250 ms: a server that asks on `initialized` does so within a few ms; this covers a loaded machine. */
export const ROOTS_ASK_WINDOW_MS = 250;
/** 5 s: the client answers roots/list from memory; one that takes longer is not waited for. */
export const ROOTS_ANSWER_MS = 5_000;

export interface RootsSettle {
  /** Every request from the member during its start (before it is forwarded to the client). */
  asked(request: JsonRpcRequest): void;
  /** The client's answer to one of them went back to the member. */
  answered(): void;
  /** Resolves once the exchange is over, or none began within the window. Never rejects. */
  settled(): Promise<void>;
}

export function createRootsSettle(initParams: JsonObject): RootsSettle {
  const declared = isObject(initParams.capabilities) && initParams.capabilities.roots !== undefined;
  let asking = 0;
  /** Asked and answered before anyone waited. */
  let over = false;
  let done: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const finish = () => {
    clearTimeout(timer);
    done?.();
  };
  return {
    asked(request) {
      if (!declared || request.method !== 'roots/list') return;
      asking++;
      if (done === undefined) return;
      clearTimeout(timer);
      timer = setTimeout(finish, ROOTS_ANSWER_MS);
    },
    answered() {
      if (asking > 0 && --asking === 0) {
        over = true;
        finish();
      }
    },
    settled() {
      if (!declared || over) return Promise.resolve();
      return new Promise<void>((resolve) => {
        done = resolve;
        timer = setTimeout(finish, asking > 0 ? ROOTS_ANSWER_MS : ROOTS_ASK_WINDOW_MS);
      });
    },
  };
}
