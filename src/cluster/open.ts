/**
 * The composition root's way into the cluster (main.ts): the cluster's modules (ioredis and the
 * rest) are loaded only when `gateway.cluster` is set.
 */
import type { GatewayConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { Cluster } from './cluster.ts';
import type { SharedState } from './shared-state.ts';

/**
 * With `gateway.cluster`: the Redis connection and what the replicas share there (rate-limit
 * buckets, config generations). Redis need not be up: the gateway waits `commandTimeoutMs` for it
 * at most (so a replica that just started does not take its first requests for an outage), then
 * starts anyway, and `redis.failMode` says what the rate limits do until Redis is there.
 */
export async function openCluster(config: GatewayConfig, generation: () => string, logger: Logger): Promise<{ cluster?: Cluster; shared?: SharedState }> {
  if (config.cluster === undefined) return {};
  // Loaded only with a cluster (ioredis and the rest: tens of ms at every start otherwise).
  const [{ createCluster }, { startSharedState }] = await Promise.all([import('./cluster.ts'), import('./shared-state.ts')]);
  const cluster = createCluster(config.cluster, logger);
  await cluster.redis.ready(config.cluster.redis.commandTimeoutMs).catch(() => undefined);
  const shared = startSharedState(cluster.redis, config.cluster, cluster.replicaId, generation, logger.child({ replicaId: cluster.replicaId }));
  return { cluster, shared };
}
