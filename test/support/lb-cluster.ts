/**
 * The whole cluster of issue 24 for acceptance tests and the cluster bench: a real Redis, N gateway
 * replicas (each its own OS process, serving the recorder fixture as `rec`) and Debian's HAProxy
 * in round robin in front of them, no stickiness, checking `/readyz`. A replica keeps its port and
 * name across a restart, so HAProxy sees the same server come back, as in a rolling restart.
 *
 * Session ids are sealed with the cluster key, so `ownerOf(id)` tells which replica owns a session;
 * with HAProxy's `x-served-by` a test sees whether an answer was served by the owner or relayed.
 * `stop()` stops HAProxy, every replica (with its children) and Redis, pass or fail.
 */
import { deriveKeyRing } from '../../src/cluster/keyring.ts';
import { createSessionSealer } from '../../src/cluster/sealed-id.ts';
import { freePort } from './ports.ts';
import { recorderServer } from './recorder.ts';
import { startRedis, type TestRedis } from './redis.ts';
import { startReplica, type Replica } from './replicas.ts';
import { startHaproxy, type RunningHaproxy } from './haproxy.ts';
import { isAlive, killTree, descendantsOf } from './processes.ts';

export const LB_CLUSTER_KEY = 'lb-cluster-test-key-0123456789abcdefghijklmnop';

export interface LbReplica {
  /** Its replica id, also its server name in HAProxy. */
  readonly id: string;
  readonly url: string;
  /** The running process (a new one after `start()`). */
  process(): Replica;
  /** `url` + the recorder's path. */
  mcpUrl(path?: string): URL;
  /** SIGKILL, its children too: no goodbye. */
  kill9(): Promise<void>;
  /** SIGTERM: it drains and exits; resolves once it has. */
  terminate(): Promise<void>;
  /** Starts it again, same id and port; resolves once it joined the cluster. */
  start(): Promise<void>;
}

export interface LbCluster {
  readonly redis: TestRedis;
  readonly replicas: readonly LbReplica[];
  readonly lb: RunningHaproxy;
  /** The frontend URL of a path (default the recorder's). */
  url(path?: string): URL;
  /** The replica id a sealed session id names, or undefined. */
  ownerOf(sessionId: string): string | undefined;
  stop(): Promise<void>;
}

export interface LbClusterOptions {
  readonly replicas: number;
  /** Extra `gateway` settings for every replica. */
  readonly gateway?: Record<string, unknown>;
  /** HAProxy check interval (default 100 ms). */
  readonly checkIntervalMs?: number;
  /** HAProxy retries a request a replica closed without answering (haproxy.ts). */
  readonly retryOnEmptyResponse?: boolean;
}

const sealer = createSessionSealer(deriveKeyRing([LB_CLUSTER_KEY]));

async function untilJoined(replica: Replica, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!replica.log().includes('joined the cluster')) {
    if (!replica.alive() || Date.now() > deadline) throw new Error(`replica did not join the cluster:\n${replica.log().slice(-4_000)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function lbReplica(id: string, port: number, frontPort: number, redisUrl: string, gateway: Record<string, unknown>, orphans: number[]): LbReplica {
  const url = `http://127.0.0.1:${port}`;
  const rec = recorderServer();
  const config = {
    logging: { level: 'info' },
    shutdownGraceMs: 20_000,
    ...gateway,
    // Its own name, and HAProxy's: clients reach it through the frontend.
    allowedHosts: [`127.0.0.1:${port}`, `127.0.0.1:${frontPort}`, ...((gateway['allowedHosts'] as string[] | undefined) ?? [])],
    port,
    cluster: { replicaId: id, advertiseUrl: url, redis: { url: redisUrl }, keys: [LB_CLUSTER_KEY], heartbeatMs: 500, replicaTtlMs: 1_500 },
  };
  let current: Replica | undefined;
  const exited = async (pid: number) => {
    while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 25));
  };
  return {
    id,
    url,
    mcpUrl: (path = '/servers/rec/mcp') => new URL(path, url),
    process() {
      if (current === undefined) throw new Error(`replica ${id} never started`);
      return current;
    },
    async start() {
      await current?.stop(); // a previous process: already gone, this removes its config folder
      current = await startReplica(config, { rec: { command: rec.command, args: rec.args } });
      await untilJoined(current);
    },
    async kill9() {
      const pid = current?.pid;
      if (pid === undefined) return;
      orphans.push(...descendantsOf(pid));
      process.kill(pid, 'SIGKILL');
      await exited(pid);
      for (const orphan of orphans) if (isAlive(orphan)) killTree(orphan);
    },
    async terminate() {
      const pid = current?.pid;
      if (pid === undefined || !isAlive(pid)) return;
      orphans.push(...descendantsOf(pid));
      process.kill(pid, 'SIGTERM');
      await exited(pid);
    },
  };
}

/** Starts Redis, `replicas` gateways r0, r1, ... and HAProxy in front; call `stop()` in afterAll/finally. */
export async function startLbCluster(options: LbClusterOptions): Promise<LbCluster> {
  const redis = await startRedis();
  const orphans: number[] = [];
  const replicas: LbReplica[] = [];
  let lb: RunningHaproxy | undefined;
  const stop = async () => {
    await lb?.stop();
    for (const r of replicas) {
      try {
        await r.process().stop();
      } catch {
        // Never started.
      }
    }
    for (const pid of orphans) if (isAlive(pid)) killTree(pid);
    await redis.stop();
  };
  const frontPort = await freePort();
  try {
    for (let i = 0; i < options.replicas; i++) {
      const replica = lbReplica(`r${i}`, await freePort(), frontPort, redis.url, options.gateway ?? {}, orphans);
      replicas.push(replica);
      await replica.start();
    }
    lb = await startHaproxy({ backends: replicas.map((r) => ({ name: r.id, url: r.url })), checkIntervalMs: options.checkIntervalMs ?? 100, port: frontPort, retryOnEmptyResponse: options.retryOnEmptyResponse === true });
    await lb.waitFor(Object.fromEntries(replicas.map((r) => [r.id, 'UP' as const])));
  } catch (err) {
    await stop();
    throw err;
  }
  const front = lb;
  return {
    redis,
    replicas,
    lb: front,
    url: (path = '/servers/rec/mcp') => new URL(path, front.url),
    ownerOf: (sessionId) => sealer.open(sessionId)?.replica,
    stop,
  };
}
