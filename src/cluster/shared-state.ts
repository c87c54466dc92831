/**
 * What the replicas share in Redis besides the directory (docs/scaling.md): the rate-limit buckets
 * (shared-buckets.ts) and each replica's config generation (generations.ts). Built by the
 * composition root over the cluster's one Redis connection; without `gateway.cluster` none of it
 * exists and nothing here runs.
 */
import type { ClusterConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { publishGeneration } from './generations.ts';
import type { ClusterRedis } from './redis.ts';
import { sharedBuckets } from './shared-buckets.ts';

export interface SharedState {
  /** For auth/rate-limit.ts (its SharedBuckets). */
  readonly buckets: ReturnType<typeof sharedBuckets>;
  /** Withdraws this replica's generation entry; the Redis connection stays the caller's. */
  close(): Promise<void>;
}

export function startSharedState(redis: ClusterRedis, cluster: ClusterConfig, replicaId: string, generation: () => string, logger: Logger): SharedState {
  const buckets = sharedBuckets(redis, cluster.redis, logger);
  const published = publishGeneration(redis, { keyPrefix: cluster.redis.keyPrefix, replicaId, heartbeatMs: cluster.heartbeatMs, replicaTtlMs: cluster.replicaTtlMs }, generation, logger);
  return { buckets, close: () => published.stop() };
}
