/**
 * Who waits for which consent (docs/upstreams.md, "Each user's own account"): sessions that were
 * handed a URL elicitation for an upstream account (the -32042 error of a request, or the
 * gateway's own `elicitation/create`) are told when its callback succeeds, on this replica:
 * `notifications/elicitation/complete` with that `elicitationId` (MCP 2025-11-25 elicitation,
 * "Completion Notifications": only to the client that was given the elicitation) and, on an
 * aggregate, list_changed (the server's items were left out of its lists until now).
 *
 * Keyed by principal, then elicitation id: one principal's consent never reaches a session of
 * another. Bounded per principal and in all; a session that ends leaves (`leave`).
 */
export interface ConsentWaiter {
  /** The consent for `target` that `elicitationId` named was completed. */
  complete(target: string, elicitationId: string): void;
}

export interface ConsentWaiters {
  /** `waiter` (a session of `principal`) was handed `elicitationId`. */
  wait(principal: string, elicitationId: string, waiter: ConsentWaiter): void;
  /** The session ended. */
  leave(waiter: ConsentWaiter): void;
  /** A callback succeeded (UserOAuth.onConnected): every waiter of it is told, once. */
  connected(principal: string, target: string, elicitationId: string): void;
}

/** Pending elicitations per principal, and principals in all (the oldest go first). */
const PER_PRINCIPAL = 64;
const PRINCIPALS = 10_000;

export function createConsentWaiters(): ConsentWaiters {
  const byPrincipal = new Map<string, Map<string, Set<ConsentWaiter>>>();
  const held = new Map<ConsentWaiter, Set<string>>();

  const forget = (principal: string, id: string) => {
    const ids = byPrincipal.get(principal);
    const waiters = ids?.get(id);
    if (ids === undefined || waiters === undefined) return;
    ids.delete(id);
    for (const w of waiters) held.get(w)?.delete(`${principal}\0${id}`);
    if (ids.size === 0) byPrincipal.delete(principal);
  };

  return {
    wait(principal, elicitationId, waiter) {
      let ids = byPrincipal.get(principal);
      if (ids === undefined) {
        if (byPrincipal.size >= PRINCIPALS) {
          const [oldest, oldIds] = byPrincipal.entries().next().value as [string, Map<string, Set<ConsentWaiter>>];
          for (const id of [...oldIds.keys()]) forget(oldest, id);
        }
        byPrincipal.set(principal, (ids = new Map()));
      }
      let waiters = ids.get(elicitationId);
      if (waiters === undefined) {
        if (ids.size >= PER_PRINCIPAL) forget(principal, ids.keys().next().value as string);
        ids.set(elicitationId, (waiters = new Set()));
      }
      waiters.add(waiter);
      let mine = held.get(waiter);
      if (mine === undefined) held.set(waiter, (mine = new Set()));
      mine.add(`${principal}\0${elicitationId}`);
    },
    leave(waiter) {
      for (const key of held.get(waiter) ?? []) {
        const [principal, id] = key.split('\0') as [string, string];
        const waiters = byPrincipal.get(principal)?.get(id);
        waiters?.delete(waiter);
        if (waiters?.size === 0) forget(principal, id);
      }
      held.delete(waiter);
    },
    connected(principal, target, elicitationId) {
      const waiters = [...(byPrincipal.get(principal)?.get(elicitationId) ?? [])];
      forget(principal, elicitationId);
      for (const w of waiters) w.complete(target, elicitationId);
    },
  };
}
