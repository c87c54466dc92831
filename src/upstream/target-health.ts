/**
 * Per-target health, read-only, for /readyz, a status page and metrics. It never starts anything
 * to find out: a stdio target reports what its circuit breaker has seen of real starts (a child is
 * never spawned to answer a health check); a remote target adds a reachability probe (a TCP
 * connect, transport/reachability.ts), made on demand and believed for `probeCacheMs`, at most one
 * at a time per target, so health checks cannot turn into load on the upstream. Only the first
 * check of a target waits for its probe; later ones answer with the last result at once and
 * refresh a stale one in the background (a readiness probe with a 1 s timeout never waits on a
 * slow connect).
 *
 * States, worst first: `open` (its circuit is open: not tried until the cooldown ends),
 * `unreachable` (remote: the last probe failed), `half-open` (the cooldown is over, the next use
 * is the probe), `failing` (its last start failed, the circuit is still closed), `ready` (a start
 * succeeded, or the remote answered the probe) and `unknown` (nothing tried yet).
 */
import type { HealthConfig, TargetConfig } from '../config/types.ts';
import { probeReachable, type Reachability } from '../transport/reachability.ts';
import type { Breakers } from './breakers.ts';
import type { BreakerSnapshot } from './circuit-breaker.ts';

export type TargetState = 'ready' | 'unknown' | 'failing' | 'half-open' | 'unreachable' | 'open';

export interface TargetHealth {
  readonly name: string;
  readonly type: TargetConfig['type'];
  readonly state: TargetState;
  /** Why it is not ready (a GW code and its public reason), when it is not. */
  readonly cause?: string;
  readonly circuit: BreakerSnapshot;
  /** Remote targets, once probed: the last probe's outcome. */
  readonly reachability?: Reachability;
}

export interface TargetHealthMonitor {
  /** What is known now; probes nothing (cheap: a status page or metrics may call it often). */
  snapshot(): TargetHealth[];
  /** Probes the remote targets never probed (waiting) or probed longer than `probeCacheMs` ago (in the background), then snapshots. */
  check(): Promise<TargetHealth[]>;
  /** The config now in force: targets removed (or whose URL changed) lose their cached probe. */
  retain(targets: Iterable<TargetConfig>): void;
}

/** When the config sets none (hand-built configs): see `gateway.health` in the schema. */
const DEFAULT_HEALTH: HealthConfig = { probeCacheMs: 10_000, probeTimeoutMs: 2_000 };

/** True when no target can serve now: each has an open circuit or is unreachable. */
export function allDown(health: readonly TargetHealth[]): boolean {
  return health.length > 0 && health.every((t) => t.state === 'open' || t.state === 'unreachable');
}

interface Probe {
  readonly url: string;
  last: Reachability | undefined;
  pending: Promise<void> | undefined;
}

export interface TargetHealthOptions {
  targets: Iterable<TargetConfig>;
  breakers: Breakers;
  config?: HealthConfig | undefined;
  /** The probe (tests may count calls). */
  probe?: typeof probeReachable;
}

/** The Runtime's health monitor over the config in force (`retain` follows reloads). */
export function createTargetHealth({ targets, breakers, config = DEFAULT_HEALTH, probe = probeReachable }: TargetHealthOptions): TargetHealthMonitor {
  let current: TargetConfig[] = [...targets];
  const probes = new Map<string, Probe>();

  const stateOf = (target: TargetConfig): TargetHealth => {
    const circuit = breakers.of(target).snapshot();
    const reachability = target.type === 'stdio' ? undefined : probes.get(target.name)?.last;
    const base = { name: target.name, type: target.type, circuit, ...(reachability ? { reachability } : {}) };
    if (circuit.state === 'open') return { ...base, state: 'open', cause: circuit.cause ?? 'unknown' };
    if (reachability?.reachable === false) return { ...base, state: 'unreachable', cause: `GW_UPSTREAM_UNREACHABLE: ${reachability.reason ?? 'unknown'}` };
    if (circuit.state === 'half-open') return { ...base, state: 'half-open', cause: circuit.cause ?? 'unknown' };
    if (circuit.lastFailure !== undefined) return { ...base, state: 'failing', cause: circuit.lastFailure };
    return { ...base, state: circuit.started || reachability?.reachable === true ? 'ready' : 'unknown' };
  };

  const refresh = (target: TargetConfig & { url: string }): Promise<void> | undefined => {
    let entry = probes.get(target.name);
    if (entry === undefined || entry.url !== target.url) probes.set(target.name, (entry = { url: target.url, last: undefined, pending: undefined }));
    // The first probe is waited for; a stale result is served while its successor runs.
    if (entry.pending !== undefined) return entry.last === undefined ? entry.pending : undefined;
    if (entry.last !== undefined && Date.now() - entry.last.at < config.probeCacheMs) return undefined;
    const which = entry;
    which.pending = probe(target.url, config.probeTimeoutMs).then((result) => {
      which.last = result;
      which.pending = undefined;
    });
    return which.last === undefined ? which.pending : undefined;
  };

  return {
    snapshot: () => current.map(stateOf),
    async check() {
      const waits: Promise<void>[] = [];
      for (const target of current) {
        if (target.type === 'stdio') continue;
        const pending = refresh(target);
        if (pending !== undefined) waits.push(pending);
      }
      await Promise.all(waits);
      return current.map(stateOf);
    },
    retain(next) {
      current = [...next];
      const urls = new Map<string, string>();
      for (const target of current) if (target.type !== 'stdio') urls.set(target.name, target.url);
      for (const [name, entry] of probes) if (urls.get(name) !== entry.url) probes.delete(name);
    },
  };
}
