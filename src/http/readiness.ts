/**
 * The body and status of `/readyz` beyond draining (which server.ts answers 503 itself).
 *
 * 503 `down` only when no target can serve: every one has an open circuit (its cooldown running)
 * or is unreachable. Then another replica may do better, and a load balancer should send traffic
 * there. A half-open circuit counts as up: after the cooldown the next session is the probe, and a
 * gateway that took itself out of rotation would never get that session and never recover.
 * 200 `degraded` when some target is not ready, 200 `ready` otherwise (`unknown`: nothing tried
 * yet, no child is started to find out).
 *
 * The list names each target, its state and cause (GW codes and the gateway's own reasons, never a
 * command, URL or header). With `gateway.auth` the endpoint still needs no credential, so it then
 * gives counts per state instead of names.
 */
import type { SessionStore } from '../session/store.ts';
import { allDown, type TargetHealth, type TargetHealthMonitor } from '../upstream/target-health.ts';

export interface Readiness {
  readonly code: 200 | 503;
  readonly body: Record<string, unknown>;
}

function publicEntry(t: TargetHealth): Record<string, unknown> {
  const retryAt = t.circuit.retryAt;
  return {
    name: t.name,
    type: t.type,
    state: t.state,
    ...(t.cause === undefined ? {} : { cause: t.cause }),
    ...(retryAt === undefined ? {} : { retryAt: new Date(retryAt).toISOString() }),
  };
}

function countByState(targets: readonly TargetHealth[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const t of targets) counts[t.state] = (counts[t.state] ?? 0) + 1;
  return counts;
}

/** `named`: list targets by name (no client authentication configured). */
export async function readiness(store: SessionStore, health: TargetHealthMonitor | undefined, named: boolean): Promise<Readiness> {
  const base = { sessions: store.size, inflight: store.inflight };
  if (health === undefined) return { code: 200, body: { status: 'ready', ...base } };
  const targets = await health.check();
  const down = allDown(targets);
  const status = down ? 'down' : targets.every((t) => t.state === 'ready' || t.state === 'unknown') ? 'ready' : 'degraded';
  return {
    code: down ? 503 : 200,
    body: { status, ...base, targets: named ? targets.map(publicEntry) : countByState(targets) },
  };
}
