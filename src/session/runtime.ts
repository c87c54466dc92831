/**
 * The Runtime: everything one gateway owns beyond its HTTP server, made once by the composition
 * root (main.ts) and injected, in place of module-level registries. Two gateways in one process
 * (tests) share nothing, and stopping one closes everything it ever made, whatever config (start-up
 * or a later reload) asked for it.
 *
 * Members: the agents to remote targets, the shared child pools, the upstream factory over both,
 * the targets' circuit breakers and their health, the cursor codec of the aggregate endpoints (its
 * HMAC key lives as long as the gateway), the session services every session shares (services.ts:
 * the upstream factory, observer, tracer, breakers, in-flight count, spares), the endpoint table,
 * the session store, and with `gateway.cluster` the replica's Cluster (cluster/cluster.ts: its id,
 * Redis, directory entry, the sealer of its session ids and the wire to the other replicas). The
 * tracer (when tracing is on) and the observer are made by main.ts, which owns the OpenTelemetry
 * SDK and the admin pages, and lent to the Runtime.
 */
import { randomUUID } from 'node:crypto';
import type { Cluster } from '../cluster/cluster.ts';
import type { GatewayConfig, TargetConfig } from '../config/types.ts';
import { createPinGate, type PinGate } from '../governance/pin-gate.ts';
import { createPinRegistry, type PinRegistry } from '../governance/pin-registry.ts';
import type { Logger } from '../log/logger.ts';
import type { Observer } from '../log/observer.ts';
import type { AuditSink } from '../log/audit-record.ts';
import { createCursorCodec, type CursorCodec } from '../router/cursor.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import { createHookClient } from '../transport/hook-client.ts';
import { createAgentPool, type AgentPool } from '../transport/http-pool.ts';
import { createBreakers, type Breakers } from '../upstream/breakers.ts';
import { createTargetHealth, type TargetHealthMonitor } from '../upstream/target-health.ts';
import { createUpstreamFactory, type UpstreamFactory } from '../upstream/open.ts';
import { createSharedPools, type SharedPools } from '../upstream/shared-pool.ts';
import { createSpares, type Spares } from '../upstream/spares.ts';
import { createTokenCache, type TokenCache } from '../upstream/token-cache.ts';
import { createGatewayUserOAuth, type GatewayUserOAuth } from '../upstream/oauth/setup.ts';
import { compileStepUp, type StepUpRules } from '../router/step-up.ts';
import { createEndpointTable, type EndpointTable } from './endpoint-table.ts';
import { stepUpCheckOf } from './chain/step-up.ts';
import { createCallGuard, type CallGuard } from './hooks/guard.ts';
import { createStatelessServer, type StatelessServer } from './stateless/serve.ts';
import { GATEWAY_CLIENT_INFO } from './gateway-info.ts';
import { countChildren } from './limits.ts';
import { createConsentWaiters } from './consent-waiters.ts';
import { createSessionServices, type SessionServices } from './services.ts';
import { createSessionStore, type SessionStore } from './store.ts';
import { LATEST_PROTOCOL_VERSION } from '../jsonrpc/versions.ts';

export interface Runtime {
  readonly agents: AgentPool;
  readonly pools: SharedPools;
  /** Warm spares of the targets that want them (`upstream.spares`). */
  readonly spares: Spares;
  readonly upstreams: UpstreamFactory;
  /** One circuit breaker per target; a reload that changes a target resets its breaker. */
  readonly breakers: Breakers;
  /** Read-only per-target health (/readyz, a status page, metrics); never starts a child. */
  readonly health: TargetHealthMonitor;
  readonly cursors: CursorCodec;
  readonly endpoints: EndpointTable;
  readonly store: SessionStore;
  /** Serves 2026-07-28 requests on sessions it holds in `store` (its requestState key lives as long). */
  readonly stateless: StatelessServer;
  /** What every session shares, by reference: the observer told of every session, request and upstream event, the tracer, the in-flight count. */
  readonly services: SessionServices;
  /** This replica's place in the cluster (gateway.cluster); undefined: one process. */
  readonly cluster: Cluster | undefined;
  /** Each user's own upstream accounts (gateway.oauth); undefined: not configured. */
  readonly oauth: GatewayUserOAuth | undefined;
  /** The pins (governance/), once some target has pinning on; undefined until then. */
  readonly pins: PinRegistry | undefined;
  /** The step-up rules in force (mcpServers.<name>.requiredScopes; reloads replace them); undefined: none. */
  stepUp(): StepUpRules | undefined;
  /** Live stdio children per target: those sessions own, and those of shared pools. */
  children(): Map<string, number>;
  /** A reloaded config: its paths for new sessions; agents of targets it dropped close once unused. */
  reload(next: GatewayConfig): void;
  /** Ends every session (in-flight requests get up to `graceMs`), then closes every agent and pool. */
  close(graceMs: number): Promise<void>;
}

/** What the composition root lends the Runtime: the tracer (undefined: tracing off) and who hears about the gateway's work (metrics, status page). */
export interface RuntimeExtras {
  readonly tracing?: Tracing | undefined;
  readonly observer?: Observer | undefined;
  /** gateway.rateLimits.perTool (auth/rate-limit.ts createToolLimits); undefined: none. */
  readonly limitTool?: ((principal: string, target: string, tool: string) => Promise<void> | undefined) | undefined;
  /** This replica's cluster, made by the composition root (its Redis also carries the shared rate limits); undefined: one process. */
  readonly cluster?: Cluster | undefined;
  /** The audit trail (observe/audit/), made by the composition root; undefined: no records. */
  readonly audit?: AuditSink | undefined;
}

export function createRuntime(config: GatewayConfig, logger: Logger, extras: RuntimeExtras = {}): Runtime {
  return new GatewayRuntime(config, logger, extras);
}

class GatewayRuntime implements Runtime {
  readonly agents: AgentPool = createAgentPool();
  readonly pools: SharedPools = createSharedPools();
  readonly spares: Spares;
  readonly upstreams: UpstreamFactory;
  readonly breakers: Breakers;
  readonly health: TargetHealthMonitor;
  readonly cursors: CursorCodec = createCursorCodec();
  readonly endpoints: EndpointTable;
  readonly store: SessionStore;
  readonly stateless: StatelessServer;
  readonly services: SessionServices;
  readonly cluster: Cluster | undefined;
  readonly oauth: GatewayUserOAuth | undefined;
  private readonly tokens: TokenCache;
  private readonly pinning: Pinning;
  // Hooks cost nothing until a target has some: the client dials nothing before its first call.
  private readonly hookClient = createHookClient();
  private readonly guard: CallGuard;
  private stepUpRules: StepUpRules | undefined;

  constructor(config: GatewayConfig, logger: Logger, { tracing, observer, limitTool, cluster, audit }: RuntimeExtras) {
    const agents = this.agents;
    this.cluster = cluster;
    this.tokens = createTokenCache({ logger });
    const oauth = (this.oauth = createGatewayUserOAuth(config, logger, cluster));
    const upstreams = (this.upstreams = createUpstreamFactory(agents, this.pools, this.tokens, oauth?.client));
    const breakers = (this.breakers = createBreakers(config.targets.values(), logger));
    this.health = createTargetHealth({ targets: config.targets.values(), breakers, config: config.health });
    const endpoints = (this.endpoints = createEndpointTable(config, this.cursors));
    const spares = (this.spares = createSpares({
      targets: config.targets.values(),
      open: upstreams,
      logger,
      breakers,
      // What a handshake the gateway composes on nobody's behalf says (docs/upstreams.md, "Warm spares").
      initParams: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { ...GATEWAY_CLIENT_INFO } },
      caps: config.session,
      sessionChildren: (target) => countChildren(this.store.live(), target),
    }));
    // Sessions handed a consent are told when its callback succeeds on this replica (url-consent.ts).
    const consents = oauth === undefined ? undefined : createConsentWaiters();
    if (consents !== undefined) oauth?.client.onConnected((principal, target, elicitationId) => consents.connected(principal, target, elicitationId));
    const services = (this.services = createSessionServices(config.limits, { open: upstreams, observer, tracing, breakers, spares, consents }));
    // Sealed ids name the owner and the principal; without a cluster the store's UUIDs as ever.
    const newId = cluster && ((principal: string) => cluster.sealer.seal({ replica: cluster.replicaId, local: randomUUID(), principal }));
    this.pinning = createPinning(config, logger, services.observer);
    this.stepUpRules = compileStepUp(config.requiredScopes, config.auth?.scopes);
    const guard = (this.guard = createCallGuard({ client: this.hookClient, observer: services.observer, logger }));
    guard.retain(config.targets.values());
    const gates = { stepUp: stepUpCheckOf(() => this.stepUpRules), guard, policy: () => endpoints.policy() };
    const store = (this.store = createSessionStore({ config, logger, services, limitTool, newId, pins: this.pinning.gate, gates, audit }));
    spares.fill();
    // In a cluster any replica reads which one holds a parked 2026 call (docs/scaling.md, "The 2026 era across replicas").
    const stateKeys = cluster && { keys: cluster.ring.map((keys) => keys.state), replica: cluster.replicaId };
    this.stateless = createStatelessServer({ store, logger, limits: config.session.stateless, cluster: stateKeys });
  }

  get pins(): PinRegistry | undefined {
    return this.pinning.registry;
  }

  /** An arrow field: the composition root hands it on detached. */
  readonly stepUp = (): StepUpRules | undefined => this.stepUpRules;

  children(): Map<string, number> {
    const counts = this.pools.children();
    for (const [name, n] of this.spares.counts()) counts.set(name, (counts.get(name) ?? 0) + n);
    for (const session of this.store.live()) {
      for (const name of session.usage.children) counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    return counts;
  }

  reload(next: GatewayConfig): void {
    // Breakers first: the sessions the new table creates find their target's (fresh) breaker.
    this.breakers.retain(next.targets.values());
    this.health.retain(next.targets.values());
    this.pinning.reload(next);
    this.endpoints.update(next);
    this.stepUpRules = compileStepUp(next.requiredScopes, next.auth?.scopes);
    this.agents.retain(next.targets.values());
    this.spares.retain(next.targets.values());
    this.guard.retain(next.targets.values());
  }

  async close(graceMs: number): Promise<void> {
    this.stateless.close();
    // First: sessions ending now must not start new spares.
    const sparesClosed = this.spares.close();
    await this.store.close(graceMs);
    await sparesClosed;
    // Sessions sent their DELETEs while ending; what is left of the agents and pools goes now.
    await Promise.all([this.agents.close(), this.pools.close(), this.hookClient.close()]);
    this.tokens.clear();
    // Last: the replica served its sessions to the end; now it leaves the directory.
    await this.cluster?.close();
    this.pinning.registry?.close();
  }
}

interface Pinning {
  readonly registry: PinRegistry | undefined;
  gate(target: TargetConfig): PinGate | undefined;
  reload(next: GatewayConfig): void;
}

/**
 * The pins registry, made when the first config with a target whose pinning is on arrives (and
 * then kept: its file is the one named then), and one gate per target object, which carries the
 * target's mode; a reload makes new target objects, so new sessions get the new mode.
 */
function createPinning(config: GatewayConfig, logger: Logger, observer: Observer): Pinning {
  let registry: PinRegistry | undefined;
  const gates = new WeakMap<TargetConfig, PinGate>();
  const need = (c: GatewayConfig) => {
    if (registry !== undefined || c.pinning === undefined || ![...c.targets.values()].some((t) => t.pinning !== undefined && t.pinning !== 'off')) return;
    const { file, maxItems, maxPending } = c.pinning;
    registry = createPinRegistry({ file, maxItems, maxPending }, logger, (target, decision) => observer.pinned(target, decision));
  };
  need(config);
  return {
    get registry() {
      return registry;
    },
    gate(target: TargetConfig): PinGate | undefined {
      if (registry === undefined || target.pinning === undefined || target.pinning === 'off') return undefined;
      let gate = gates.get(target);
      if (gate === undefined) gates.set(target, (gate = createPinGate(registry, target.name, target.pinning)));
      return gate;
    },
    reload(next: GatewayConfig) {
      if (registry === undefined) need(next);
      else registry.reload();
    },
  };
}
