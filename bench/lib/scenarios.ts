/** The scenarios of a benchmark run, and which systems take part in each. */
import type { ClientKind } from './clients.ts';
import type { SystemName } from './systems.ts';

export interface Scenario {
  readonly name: string;
  /** `relay`, `replicas`: a pair of loads on a cluster of the build's replicas (cluster-scenarios.ts). */
  readonly kind: 'load' | 'ramp' | 'open' | 'relay' | 'replicas';
  /** `http-2026`: stateless 2026-07-28 requests (the reference, direct-http, keeps its 2025 session). */
  readonly wire: 'http' | 'ws' | 'http-2026';
  readonly sessions: number;
  readonly inFlight: number;
  /** Echo result size (0: a few bytes). */
  readonly bytes: number;
  readonly systems: readonly SystemName[];
  readonly about: string;
  /** What the clients declare in their initialize (open scenarios); none: no capabilities, the newest version. */
  readonly client?: ClientKind;
}

const MiB = 1024 * 1024;
const EVERY: readonly SystemName[] = ['direct', 'direct-http', 'switchboard', 'switchboard-shared', 'switchboard-http', 'supergateway', 'mcp-proxy'];
/**
 * The scenarios issue 34's goals read for 1x1, 1x32 and 64x4: every system, what authentication
 * costs per call (gateway.auth), and the floor of any stdio gateway (floor-relay.mjs) next to the
 * reference, so that the report says how far the gateway is from what a relay can reach here.
 */
const GOAL_LOADS: readonly SystemName[] = [...EVERY.flatMap((s): SystemName[] => (s === 'direct-http' ? [s, 'floor-relay'] : [s])), 'switchboard-apikey', 'switchboard-jwt'];
/**
 * The ramp leaves out what needs a child per session (direct, the per-session gateway over stdio
 * and both peers): 1,000 Node children are a test of the machine, not of the gateway.
 */
const RAMP: readonly SystemName[] = ['direct-http', 'switchboard-http', 'switchboard-shared'];
/** direct-http's WebSocket (echo-http.mjs /ws) is the reference the ratios need. */
const WS: readonly SystemName[] = ['direct-http', 'switchboard', 'switchboard-shared', 'switchboard-http'];
/** The 2026 bridge to a stdio upstream, against the plain HTTP server's 2025 session as reference. */
const STATELESS: readonly SystemName[] = ['direct-http', 'switchboard'];

/** Session open: the per-session default (a spawn per session) against warm spares. */
const OPEN: readonly SystemName[] = ['switchboard', 'switchboard-spare'];
/** The cluster scenarios run replicas of a build: the system names which build (this one or the one before). */
const CLUSTER: readonly SystemName[] = ['switchboard'];
/** The relay against its floor: a bare proxy in front of floor-relay, against floor-relay itself. */
const RELAY: readonly SystemName[] = [...CLUSTER, 'floor-relay'];
/** Each system's twin on the build before the change (`--before`, `--before-ref`). */
export const BEFORE: ReadonlyMap<SystemName, SystemName> = new Map([
  ['switchboard', 'switchboard-before'],
  ['switchboard-spare', 'switchboard-spare-before'],
]);

export function scenarios(rampSessions: number, openSessions = 50): Scenario[] {
  // The session-open scenarios that differ only by what the client declares.
  const openAs = (name: string, client: ClientKind, about: string): Scenario => ({ name, kind: 'open', wire: 'http', sessions: openSessions, inFlight: 1, bytes: 0, systems: OPEN, client, about });
  return [
    { name: '1x1', kind: 'load', wire: 'http', sessions: 1, inFlight: 1, bytes: 0, systems: GOAL_LOADS, about: 'latency: 1 session, 1 call in flight' },
    { name: '1x32', kind: 'load', wire: 'http', sessions: 1, inFlight: 32, bytes: 0, systems: GOAL_LOADS, about: '1 session, 32 calls in flight' },
    { name: '64x4', kind: 'load', wire: 'http', sessions: 64, inFlight: 4, bytes: 0, systems: GOAL_LOADS, about: '64 sessions, 4 calls in flight each' },
    { name: '1x32-2KiB', kind: 'load', wire: 'http', sessions: 1, inFlight: 32, bytes: 2048, systems: STATELESS, about: '1 session, 32 in flight, 2 KiB results (forwarded as the child wrote them)' },
    { name: '1MiB', kind: 'load', wire: 'http', sessions: 1, inFlight: 4, bytes: MiB, systems: EVERY, about: '1 session, 4 in flight, 1 MiB results' },
    { name: 'ramp', kind: 'ramp', wire: 'http', sessions: rampSessions, inFlight: 1, bytes: 0, systems: RAMP, about: `open ${rampSessions} sessions, 16 at a time; keep them open` },
    { name: 'ws-1x1', kind: 'load', wire: 'ws', sessions: 1, inFlight: 1, bytes: 0, systems: WS, about: 'WebSocket: 1 session, 1 in flight' },
    { name: 'ws-1x32', kind: 'load', wire: 'ws', sessions: 1, inFlight: 32, bytes: 0, systems: WS, about: 'WebSocket: 1 session, 32 in flight' },
    { name: 'ws-64x4', kind: 'load', wire: 'ws', sessions: 64, inFlight: 4, bytes: 0, systems: WS, about: 'WebSocket: 64 sessions x 4 in flight' },
    { name: '2026-1x1', kind: 'load', wire: 'http-2026', sessions: 1, inFlight: 1, bytes: 0, systems: STATELESS, about: '2026-07-28 (stateless) over the bridge to stdio: 1 call in flight' },
    { name: '2026-1x32', kind: 'load', wire: 'http-2026', sessions: 1, inFlight: 32, bytes: 0, systems: STATELESS, about: '2026-07-28 (stateless) over the bridge to stdio: 32 calls in flight' },
    { name: 'open', kind: 'open', wire: 'http', sessions: openSessions, inFlight: 1, bytes: 0, systems: OPEN, about: `open ${openSessions} sessions one at a time (initialize + initialized), each checked and closed, 250 ms apart` },
    openAs('open-roots', { protocolVersion: '2025-06-18', capabilities: { roots: { listChanged: true } } }, 'as open, by a client declaring roots on 2025-06-18'),
    openAs(
      'open-full',
      { protocolVersion: '2025-11-25', capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} } },
      'as open, by a client declaring roots, sampling and elicitation on 2025-11-25',
    ),
    {
      name: 'relay',
      kind: 'relay',
      wire: 'http',
      sessions: 1,
      inFlight: 1,
      bytes: 0,
      systems: RELAY,
      about: 'a call relayed by another replica against the same call sent to its owner: 2 replicas sharing a Redis, 1 session x 1 in flight (docs/scaling.md); floor-relay: its floor, a bare proxy in front of floor-relay against floor-relay itself',
    },
    {
      name: 'replicas',
      kind: 'replicas',
      wire: 'http',
      sessions: 4,
      inFlight: 4,
      bytes: 0,
      systems: CLUSTER,
      about: 'HAProxy with Mcp-Session-Id affinity (deploy/cluster/haproxy.cfg) over 3 replicas against over 1, 4 sessions x 4 in flight',
    },
    { name: 'ws-ramp', kind: 'ramp', wire: 'ws', sessions: rampSessions, inFlight: 1, bytes: 0, systems: ['direct-http', 'switchboard-http', 'switchboard-shared'], about: `WebSocket: open ${rampSessions} sessions` },
  ];
}

/** The same scenarios with each system's `-before` twin right after it, wherever the system runs. */
export function withBefore(list: readonly Scenario[]): Scenario[] {
  return list.map((sc) => ({ ...sc, systems: sc.systems.flatMap((s) => [s, ...(BEFORE.has(s) ? [BEFORE.get(s) as SystemName] : [])]) }));
}

/**
 * The order of the systems in round `round` (from 0): rotated by one every round, so that no
 * system always runs first; and of a system and its `-before` twin, the build that runs first
 * alternates (this one in even rounds, the one before in odd rounds), whatever the rotation did.
 */
export function roundOrder(systems: readonly SystemName[], round: number): SystemName[] {
  const order = systems.map((_, i) => systems[(i + round) % systems.length] as SystemName);
  for (const [after, before] of BEFORE) {
    const a = order.indexOf(after);
    const b = order.indexOf(before);
    if (a === -1 || b === -1) continue;
    const [first, second] = a < b ? [a, b] : [b, a];
    order[first] = round % 2 === 0 ? after : before;
    order[second] = round % 2 === 0 ? before : after;
  }
  return order;
}

/** What issue 34's goals table reads (report-goals.ts): per scenario, the systems it needs. */
const GOAL_SYSTEMS: ReadonlyMap<string, readonly SystemName[]> = new Map<string, readonly SystemName[]>([
  ['1x1', ['direct-http', 'floor-relay', 'switchboard']],
  ['1x32', ['direct-http', 'floor-relay', 'switchboard']],
  ['64x4', ['direct-http', 'floor-relay', 'switchboard']],
  ['2026-1x32', ['switchboard']],
  ['relay', ['switchboard', 'floor-relay']],
  ['replicas', ['switchboard']],
  ['open', ['switchboard-spare']],
  ['open-roots', ['switchboard-spare']],
  ['open-full', ['switchboard-spare']],
]);

/** `--goals`: only the scenarios of issue 34's table, each with only the systems its rows read. */
export function goalsOnly(list: readonly Scenario[]): Scenario[] {
  return list.flatMap((sc) => {
    const keep = GOAL_SYSTEMS.get(sc.name);
    return keep === undefined ? [] : [{ ...sc, systems: sc.systems.filter((s) => keep.includes(s)) }];
  });
}
