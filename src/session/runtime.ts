/**
 * The Runtime: everything one gateway owns beyond its HTTP server, made once by the composition
 * root (main.ts) and injected, in place of module-level registries. Two gateways in one process
 * (tests) share nothing, and stopping one closes everything it ever made, whatever config (start-up
 * or a later reload) asked for it.
 *
 * Members: the agents to remote targets, the shared child pools, the upstream factory over both,
 * the cursor codec of the aggregate endpoints (its HMAC key lives as long as the gateway), the
 * endpoint table and the session store.
 */
import type { GatewayConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { createCursorCodec, type CursorCodec } from '../router/cursor.ts';
import { createAgentPool, type AgentPool } from '../transport/http-pool.ts';
import { createUpstreamFactory, type UpstreamFactory } from '../upstream/open.ts';
import { createSharedPools, type SharedPools } from '../upstream/shared-pool.ts';
import { createEndpointTable, type EndpointTable } from './endpoint-table.ts';
import { createStatelessServer, type StatelessServer } from './stateless/serve.ts';
import { createSessionStore, type SessionStore } from './store.ts';

export interface Runtime {
  readonly agents: AgentPool;
  readonly pools: SharedPools;
  readonly upstreams: UpstreamFactory;
  readonly cursors: CursorCodec;
  readonly endpoints: EndpointTable;
  readonly store: SessionStore;
  /** Serves 2026-07-28 requests on sessions it holds in `store` (its requestState key lives as long). */
  readonly stateless: StatelessServer;
  /** A reloaded config: its paths for new sessions; agents of targets it dropped close once unused. */
  reload(next: GatewayConfig): void;
  /** Ends every session (in-flight requests get up to `graceMs`), then closes every agent and pool. */
  close(graceMs: number): Promise<void>;
}

export function createRuntime(config: GatewayConfig, logger: Logger): Runtime {
  const agents = createAgentPool();
  const pools = createSharedPools();
  const upstreams = createUpstreamFactory(agents, pools);
  const cursors = createCursorCodec();
  const endpoints = createEndpointTable(config, cursors);
  const store = createSessionStore({ config, logger, upstreams });
  const stateless = createStatelessServer({ store, logger, limits: config.session.stateless });
  return {
    agents,
    pools,
    upstreams,
    cursors,
    endpoints,
    store,
    stateless,
    reload(next) {
      endpoints.update(next);
      agents.retain(next.targets.values());
    },
    async close(graceMs) {
      stateless.close();
      await store.close(graceMs);
      // Sessions sent their DELETEs while ending; what is left of the agents and pools goes now.
      await Promise.all([agents.close(), pools.close()]);
    },
  };
}
