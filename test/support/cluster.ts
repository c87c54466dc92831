/**
 * A cluster for tests: a real Redis (redis.ts) and gateway replicas, each its own OS process
 * (`node src/cli.ts --config`), on loopback, sharing one cluster key and serving the recorder
 * fixture as `rec`. Every process (replicas, their children, Redis) is stopped by `stop()`, pass
 * or fail; a replica killed with SIGKILL has its orphaned children killed too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, root } from './cli.ts';
import { freePort } from './ports.ts';
import { descendantsOf, isAlive, killTree } from './processes.ts';
import { recorderServer } from './recorder.ts';
import { startRedis, type RedisOptions, type TestRedis } from './redis.ts';

export const CLUSTER_KEY = 'test-cluster-key-0123456789abcdefghijklmnop';

export interface Replica {
  readonly id: string;
  readonly port: number;
  readonly url: string;
  /** `http://127.0.0.1:<port>/servers/rec/mcp` and friends. */
  mcpUrl(path?: string): URL;
  readonly pid: number;
  /** Everything it logged so far (JSON lines). */
  log(): string;
  /** SIGKILL, no goodbye (its children are killed too, by the harness). */
  kill9(): Promise<void>;
  /** SIGTERM; resolves with the exit code once it exited. */
  terminate(): Promise<number | null>;
}

export interface TestCluster {
  readonly redis: TestRedis;
  readonly replicas: readonly Replica[];
  stop(): Promise<void>;
}

export interface ClusterOptions {
  readonly replicas: number;
  /** Extra `gateway` settings for every replica (auth, shutdownGraceMs, ...). */
  readonly gateway?: Record<string, unknown>;
  /** Extra servers besides `rec`. */
  readonly mcpServers?: Record<string, unknown>;
  /** How the Redis is started (AUTH, ACL users, TLS) and what the replicas' `cluster.redis` adds (username, password, caFile). */
  readonly redis?: RedisOptions;
  readonly redisConfig?: Record<string, unknown>;
  /** The URL a replica advertises, given its own (a recording proxy in front of it); default its own. */
  readonly advertise?: (id: string, url: string) => Promise<string>;
}

async function startReplica(id: string, dir: string, redisUrl: string, options: ClusterOptions, orphans: number[]): Promise<Replica> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const advertiseUrl = options.advertise === undefined ? url : await options.advertise(id, url);
  const file = join(dir, `${id}.json`);
  const rec = recorderServer();
  writeFileSync(
    file,
    JSON.stringify({
      gateway: {
        host: '127.0.0.1',
        port,
        logging: { level: 'info' },
        ...options.gateway,
        cluster: { replicaId: id, advertiseUrl, redis: { url: redisUrl, ...options.redisConfig }, keys: [CLUSTER_KEY], heartbeatMs: 500, replicaTtlMs: 1_500 },
      },
      mcpServers: { rec: { command: rec.command, args: rec.args }, ...options.mcpServers },
    }),
  );
  const child: ChildProcess = spawn(process.execPath, [cli, '--config', file], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 60_000;
  while (!out.includes('joined the cluster')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`replica ${id} did not join the cluster:\n${out.slice(-4_000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const pid = child.pid as number;
  return {
    id,
    port,
    url,
    pid,
    mcpUrl: (path = '/servers/rec/mcp') => new URL(path, url),
    log: () => out,
    async kill9() {
      orphans.push(...descendantsOf(pid));
      child.kill('SIGKILL');
      await exited;
    },
    async terminate() {
      orphans.push(...descendantsOf(pid));
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Starts Redis and `replicas` gateways r0, r1, ...; call `stop()` in afterAll/finally. */
export async function startCluster(options: ClusterOptions): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-cluster-'));
  const redis = await startRedis(options.redis);
  const orphans: number[] = [];
  const replicas: Replica[] = [];
  const stop = async () => {
    for (const replica of replicas) {
      orphans.push(...descendantsOf(replica.pid));
      killTree(replica.pid);
    }
    for (const pid of orphans) if (isAlive(pid)) killTree(pid);
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < options.replicas; i++) replicas.push(await startReplica(`r${i}`, dir, redis.url, options, orphans));
  } catch (err) {
    await stop();
    throw err;
  }
  return { redis, replicas, stop };
}

/** Two principals by API key, for tests of one principal's session reached through another replica. */
export const ALICE = 'Bearer alice-key-0123456789abcdef';
export const BOB = 'Bearer bob-key-0123456789abcdefgh';

/** Two replicas whose callers authenticate as ALICE or BOB (gateway.auth.apiKeys). */
export async function startKeyedPair(): Promise<{ cluster: TestCluster; r0: Replica; r1: Replica }> {
  const cluster = await startCluster({
    replicas: 2,
    gateway: { auth: { apiKeys: [{ name: 'alice', key: ALICE.slice(7) }, { name: 'bob', key: BOB.slice(7) }] } },
  });
  const [r0, r1] = cluster.replicas as [Replica, Replica];
  return { cluster, r0, r1 };
}
