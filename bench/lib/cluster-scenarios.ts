/**
 * The cluster rows of issue 34's table inside `npm run bench`, over lib/cluster.ts:
 *
 *   relay     a call relayed by another replica against the same call sent to its owner (two
 *             replicas and a Redis, no HAProxy; docs/scaling.md "Figures")
 *   replicas  HAProxy in front of 3 replicas against HAProxy in front of 1, with the session
 *             affinity deploy/cluster/haproxy.cfg configures (learnt from Mcp-Session-Id)
 *
 * Each is a pair of loads, the subject and its reference, measured on the same build in the same
 * round (their order alternates with the round); the figure is the ratio of the two.
 *
 * The relay's floor (system floor-relay in `relay`): the same pair with no gateway at all, a bare
 * proxy (floor-proxy.mjs) in front of floor-relay.mjs against floor-relay.mjs itself: what one
 * extra loopback HTTP hop costs any relay of this shape on this machine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpConnector, type Connector } from './clients.ts';
import { killClusterProcesses, missingPrograms, relayedConnector, startCluster, type Cluster } from './cluster.ts';
import { runLoad, type LoadResult } from './load.ts';
import { stopTree, Unavailable } from './spawn.ts';
import { FLOOR_PROXY, FLOOR_RELAY, startScript } from './systems.ts';

/** Two loads on one build: the subject (relayed; 3 replicas) and its reference (the owner; 1 replica). */
export interface PairResult {
  readonly subject: LoadResult;
  readonly reference: LoadResult;
}

export interface PairOptions {
  /** The build's src/cli.ts. */
  readonly cli: string;
  readonly sessions: number;
  readonly inFlight: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  /** Stop each load after this many measured calls (smoke tests). */
  readonly maxCalls?: number | undefined;
  /** Measure the reference first (rounds alternate it). */
  readonly referenceFirst: boolean;
}

const PATH = '/servers/echo/mcp';

/** One side of a pair; server CPU of `roots` and their children (both sides count the same processes). */
async function measure(connector: Connector, roots: readonly number[], options: Omit<PairOptions, 'cli'>): Promise<LoadResult> {
  try {
    return await runLoad(connector, {
      sessions: options.sessions,
      inFlight: options.inFlight,
      bytes: 0,
      warmupMs: options.warmupMs,
      durationMs: options.durationMs,
      ...(options.maxCalls === undefined ? {} : { maxCalls: options.maxCalls }),
      // Server CPU: every replica (or the floor's proxy and relay) and its children; no single gateway process.
      roots,
      gatewayPid: undefined,
    });
  } finally {
    await connector.close();
  }
}

const replicaPids = (cluster: Cluster) => cluster.replicas.map((r) => r.pid);

/** Runs the subject and the reference in the order the round asks. */
async function inOrder(subject: () => Promise<LoadResult>, reference: () => Promise<LoadResult>, referenceFirst: boolean): Promise<PairResult> {
  if (referenceFirst) {
    const r = await reference();
    return { reference: r, subject: await subject() };
  }
  const s = await subject();
  return { subject: s, reference: await reference() };
}

/** Config folders of the clusters running now. */
const dirs = new Set<string>();

/** Every cluster process killed and its config folder removed (synchronous: for exit handlers). */
export function stopClusterScenarios(): void {
  killClusterProcesses();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}

async function withCluster<T>(n: number, programs: readonly string[], cli: string, work: (cluster: Cluster) => Promise<T>): Promise<T> {
  const missing = missingPrograms(programs);
  if (missing !== undefined) throw new Unavailable(missing);
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-cluster-'));
  dirs.add(dir);
  let cluster: Cluster | undefined;
  try {
    cluster = await startCluster(n, { cli, dir });
    return await work(cluster);
  } finally {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
    dirs.delete(dir);
  }
}

/** Sessions opened on r0; the subject sends every call to r1 (which relays it), the reference to r0. */
export function measureRelay(options: PairOptions): Promise<PairResult> {
  const connections = options.sessions * options.inFlight;
  return withCluster(2, ['redis-server'], options.cli, (cluster) => {
    const [r0, r1] = cluster.replicas;
    if (r0 === undefined || r1 === undefined) throw new Error('the relay needs two replicas');
    return inOrder(
      () => measure(relayedConnector(r0.url + PATH, r1.url + PATH, connections), replicaPids(cluster), options),
      () => measure(httpConnector(r0.url + PATH, connections), replicaPids(cluster), options),
      options.referenceFirst,
    );
  });
}

/** HAProxy (with session affinity) over 3 replicas, against HAProxy over 1: a fresh Redis and replicas for each. */
export function measureReplicas(options: PairOptions): Promise<PairResult> {
  const connections = options.sessions * options.inFlight;
  const behindHaproxy = (n: number) =>
    withCluster(n, ['redis-server', 'haproxy'], options.cli, async (cluster) => {
      const front = await cluster.startHaproxy(true);
      return measure(httpConnector(front + PATH, connections), replicaPids(cluster), options);
    });
  return inOrder(() => behindHaproxy(3), () => behindHaproxy(1), options.referenceFirst);
}

/**
 * The relay's floor: sessions opened on floor-relay; the subject sends every call through the bare
 * proxy in front of it, the reference straight to it. CPU: the proxy, floor-relay and its children,
 * on both sides (as the switchboard pair counts both replicas on both sides).
 */
export async function measureRelayFloor(options: Omit<PairOptions, 'cli'>): Promise<PairResult> {
  const connections = options.sessions * options.inFlight;
  const floor = await startScript(FLOOR_RELAY, 'floor-relay');
  let proxy: Awaited<ReturnType<typeof startScript>> | undefined;
  try {
    const target = new URL(floor.url);
    proxy = await startScript(FLOOR_PROXY, 'floor-proxy', [`--upstream=${target.origin}`, `--connections=${connections}`]);
    const roots = [floor.child.pid as number, proxy.child.pid as number];
    const via = proxy.url + target.pathname;
    return await inOrder(
      () => measure(relayedConnector(floor.url, via, connections), roots, options),
      () => measure(httpConnector(floor.url, connections), roots, options),
      options.referenceFirst,
    );
  } finally {
    if (proxy !== undefined) await stopTree(proxy.child);
    await stopTree(floor.child);
  }
}
