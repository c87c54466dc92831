/**
 * One replica's place in the cluster (docs/scaling.md), made once per start by the
 * Runtime when `gateway.cluster` is set: its id, the Redis connection, the directory entry it
 * keeps alive, the sealer of session ids and the signer of hops (both from the key ring), and the
 * wire to the other replicas. Without `gateway.cluster` none of this exists.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ClusterConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { createReplicaHop, type ReplicaHop } from '../transport/replica-hop.ts';
import { createDirectory, type Directory } from './directory.ts';
import { createEntryCodec } from './directory-entry.ts';
import { createHopSigner, type HopSigner } from './hop-signature.ts';
import { deriveKeyRing, type DerivedKeys } from './keyring.ts';
import { openRedis, type ClusterRedis } from './redis.ts';
import { createSessionSealer, type SessionSealer } from './sealed-id.ts';

export interface Cluster {
  readonly replicaId: string;
  /** The keys derived from `cluster.keys`, in config order (the first seals): the 2026 requestState's come from here. */
  readonly ring: readonly DerivedKeys[];
  readonly sealer: SessionSealer;
  readonly signer: HopSigner;
  readonly directory: Directory;
  readonly hop: ReplicaHop;
  readonly redis: ClusterRedis;
  /** Registers in the directory (a Redis that is away is retried by the heartbeat, never fatal). */
  start(): Promise<void>;
  /** SIGTERM: marked draining in the directory; the replica still serves its sessions. */
  drain(): Promise<void>;
  /** Leaves the directory and closes the wire and Redis. */
  close(): Promise<void>;
}

/** The host name as a replica id: safe characters only, room left for the suffix. */
function defaultReplicaId(): string {
  const host = hostname().replace(/[^A-Za-z0-9_.-]/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 50) || 'replica';
  return `${host}-${randomBytes(4).toString('hex')}`;
}

export function createCluster(config: ClusterConfig, logger: Logger): Cluster {
  const replicaId = config.replicaId ?? defaultReplicaId();
  const log = logger.child({ component: 'cluster', replica: replicaId });
  const ring = deriveKeyRing(config.keys);
  const redis = openRedis(config.redis, (state, error) => {
    if (state === 'down') log.warn({ err: error }, 'cluster Redis unreachable; sessions on their owner keep working');
    else if (state === 'ready') log.info('cluster Redis connected');
  });
  const directory = createDirectory({
    redis,
    keyPrefix: config.redis.keyPrefix,
    replicaId,
    advertiseUrl: config.advertiseUrl,
    heartbeatMs: config.heartbeatMs,
    replicaTtlMs: config.replicaTtlMs,
    logger: log,
    codec: createEntryCodec(ring, config.redis.keyPrefix, config.replicaTtlMs),
  });
  const hop = createReplicaHop(config.forwardConnectTimeoutMs);
  let closed: Promise<void> | undefined;
  return {
    replicaId,
    ring,
    sealer: createSessionSealer(ring),
    signer: createHopSigner(ring),
    directory,
    hop,
    redis,
    async start() {
      // Up to a few seconds for Redis at start; past that the heartbeat keeps trying.
      await redis.ready(Math.max(config.redis.commandTimeoutMs * 4, 2_000)).catch(() => undefined);
      await directory.start();
      log.info({ advertiseUrl: config.advertiseUrl }, 'joined the cluster');
    },
    drain: () => directory.drain(),
    close() {
      closed ??= (async () => {
        await directory.leave();
        await hop.close();
        await redis.close();
      })();
      return closed;
    },
  };
}
