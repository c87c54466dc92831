/**
 * Consent URLs handed out and not yet used, per (principal, target), in memory: a client that
 * calls again before the user finished gets the same URL (one pending consent, not one per
 * attempt), until half its life is gone. Bounded; the vault holds what the callback needs.
 */
export interface Flow {
  readonly url: string;
  readonly elicitationId: string;
  /** Epoch ms. */
  readonly expiresAt: number;
}

const MAX = 10_000;

export function createConsents(ttlSec: number, now: () => number) {
  const byKey = new Map<string, Flow>();
  const key = (principal: string, target: string) => `${principal}\0${target}`;
  return {
    pending(principal: string, target: string): Flow | undefined {
      const flow = byKey.get(key(principal, target));
      return flow !== undefined && now() < flow.expiresAt - (ttlSec * 1_000) / 2 ? flow : undefined;
    },
    remember(principal: string, target: string, flow: Flow) {
      byKey.delete(key(principal, target));
      if (byKey.size >= MAX) byKey.delete(byKey.keys().next().value as string);
      byKey.set(key(principal, target), flow);
    },
    forget(principal: string, target: string) {
      byKey.delete(key(principal, target));
    },
  };
}
