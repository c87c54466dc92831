/**
 * The HTTP server: the only module that builds fastify (the instance and its error answers in
 * server-base.ts). MCP routes per path shape (servers, groups, root), health, and one error
 * handler that turns every failure (ours, fastify's, or unexpected) into a JSON-RPC error envelope.
 */
import fastifyWebsocket, { type WebsocketPluginOptions } from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Cluster } from '../cluster/cluster.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { NOOP_OBSERVER, type Observer } from '../log/observer.ts';
import type { MetricsRegistry } from '../observe/metrics-export.ts';
import type { StatusBoard } from '../observe/status.ts';
import type { PinRegistry } from '../governance/pin-registry.ts';
import { registerAdminRoutes } from './admin-routes.ts';
import type { AuditTrail } from '../observe/audit/setup.ts';
import type { ConsoleSources } from './console-sources.ts';
import { registerOAuthRoutes } from './oauth-routes.ts';
import { registerConnectionsPage } from './connections-page.ts';
import type { GatewayUserOAuth } from '../upstream/oauth/setup.ts';
import { meterBytes } from './byte-meter.ts';
import { createEndpointTable, type EndpointTable } from '../session/endpoint-table.ts';
import type { SessionStore } from '../session/store.ts';
import { createStatelessServer, type StatelessServer } from '../session/stateless/serve.ts';
import type { TargetHealthMonitor } from '../upstream/target-health.ts';
import { readiness } from './readiness.ts';
import { limitConnections } from './connection-limits.ts';
import { registerCors } from './cors.ts';
import { createOriginPolicy, type OriginPolicy } from './guards.ts';
import { createForwarder, createRetryForwarder } from './hop-forward.ts';
import { registerLegacySseRoute } from './legacy-sse-route.ts';
import { registerHopGuard } from './replica-hop-guard.ts';
import { registerMcpRoute, type ResolveEndpoint } from './mcp-route.ts';
import { registerRegistryRoute } from './registry-route.ts';
import { registerAuthHook, registerResourceMetadata, stepUpChallenge, type StepUpRequest } from './auth-hook.ts';
import { compileStepUp, type StepUpRules } from '../router/step-up.ts';
import { createRequestLimits, type SharedBuckets } from '../auth/rate-limit.ts';
import { claimNamesOf } from '../router/policy.ts';
import { createKeepAlive, type KeepAlive } from './sink.ts';
import { newFastify, registerErrorAnswers, wsPluginOptions } from './server-base.ts';
import { createWsHeartbeat, registerWsRoute, type WsHeartbeat } from './ws-route.ts';
import { createUpgradeGate } from './upgrade-gate.ts';

export interface HttpServerOptions {
  config: GatewayConfig;
  store: SessionStore;
  logger: Logger;
  /** False while draining: /readyz answers 503 so a load balancer stops sending traffic. */
  isReady: () => boolean;
  /** What each MCP path serves, following config reloads; built from `config` (fixed) when absent. */
  endpoints?: EndpointTable;
  /** Serves 2026-07-28 requests (the Runtime's); built over `store` when absent. */
  stateless?: StatelessServer;
  /** Per-target health (the Runtime's), listed by /readyz; absent: /readyz reports draining only. */
  health?: TargetHealthMonitor;
  /** Told of refusals at the edge and of bytes moved (log/observer.ts); default: nobody. */
  observer?: Observer;
  /** Served at /metrics (admin-routes.ts); undefined: no /metrics. */
  metrics?: MetricsRegistry | undefined;
  /** Served at /status, /status/events and /tools; undefined: none of them. */
  status?: StatusBoard | undefined;
  /** The cluster's shared rate-limit buckets (cluster/shared-buckets.ts); undefined: this process's own. */
  sharedBuckets?: SharedBuckets | undefined;
  /** The config generation (config/generation.ts) /readyz shows; undefined: not shown. */
  generation?: (() => string) | undefined;
  /** This replica's cluster (the Runtime's): sealed ids, hops to and from the others; undefined: one process. */
  cluster?: Cluster | undefined;
  /** The pins (the Runtime's), for the admin API at /admin/pins; undefined while pinning is off. */
  pins?: (() => PinRegistry | undefined) | undefined;
  /** The audit trail, for `/admin/api/audit`; undefined: no trail. */
  audit?: AuditTrail | undefined;
  /** What the operator's console reads and changes (console-sources.ts); undefined: no console. */
  console?: ConsoleSources | undefined;
  /** Each user's own upstream accounts (the Runtime's): `/oauth/*` routes; undefined: none. */
  oauth?: GatewayUserOAuth | undefined;
  /** The step-up rules in force (the Runtime's, following reloads); built from `config` (fixed) when absent. */
  stepUp?: (() => StepUpRules | undefined) | undefined;
}

/** The gateway's HTTP server, as the composition root holds it (only http/ names fastify). */
export type HttpServer = FastifyInstance;

export function createHttpServer(options: HttpServerOptions): FastifyInstance {
  const { config, store, logger, isReady, stateless: given, health, observer = NOOP_OBSERVER, metrics, status, generation, cluster, pins, stepUp, audit, console: consoleSources, oauth } = options;
  const log = logger.child({ component: 'http' });
  const app = newFastify(config);
  // First, before any route: it learns which routes speak WebSocket as they are added.
  const gate = createUpgradeGate(app);
  limitConnections(app.server, config.limits, log);
  const flushBytes = meterBytes(app.server, observer);
  const keepAlive = createKeepAlive(config.session.keepAliveMs);
  const stateless = given ?? createStatelessServer({ store, logger, limits: config.session.stateless });
  // The port the gateway really listens on (listen.port may be 0): own-origin.ts checks Hosts
  // and builds token audiences with it. Read once when listening, not per request.
  let ownPort = config.listen.port;
  app.server.on('listening', () => {
    const address = app.server.address();
    if (typeof address === 'object' && address !== null) ownPort = address.port;
  });
  const origins = createOriginPolicy(config, () => ownPort);
  const heartbeat = createWsHeartbeat(config.websocket.pingIntervalMs, log);
  const wsPlugin = wsPluginOptions(config, gate.relay, log);
  registerErrorAnswers(app, log);

  app.get('/healthz', async () => ({ status: 'ok' }));
  const fixedStepUp = stepUp === undefined ? compileStepUp(config.requiredScopes, config.auth?.scopes) : undefined;
  const stepUpRules = stepUp ?? (() => fixedStepUp);
  registerResourceMetadata(app, config.auth, origins, () => stepUpRules()?.scopes ?? []);
  // Open without credentials (load balancers); with gateway.auth it names no target (readiness.ts).
  const named = config.auth === undefined || config.auth.anonymous;
  app.get('/readyz', async (_request, reply) => {
    if (!isReady()) return reply.code(503).send({ status: 'draining' });
    const { code, body } = await readiness(store, health, named);
    return reply.code(code).send(generation === undefined ? body : { ...body, generation: generation() });
  });
  if (oauth !== undefined) registerOAuthRoutes(app, oauth, log);
  if (oauth !== undefined && config.auth !== undefined) registerConnectionsPage(app, config, config.auth, origins, oauth, log);
  registerAdminRoutes(app, { config, metrics, status, pins, audit, flushBytes, observer, origins, logger: log, console: consoleSources, consoleKeys: cluster?.ring.map((keys) => keys.console) });

  const scope: McpScope = { options, observer, log, origins, keepAlive, stateless, heartbeat, wsPlugin };
  void app.register((mcp) => registerMcpScope(mcp, scope));

  app.addHook('onClose', async () => {
    if (given === undefined) stateless.close();
    keepAlive.stop();
    heartbeat.stop();
  });
  return app;
}

/** What the MCP routes' scope is built from (createHttpServer makes the shared parts once). */
interface McpScope {
  readonly options: HttpServerOptions;
  readonly observer: Observer;
  readonly log: Logger;
  readonly origins: OriginPolicy;
  readonly keepAlive: KeepAlive;
  readonly stateless: StatelessServer;
  readonly heartbeat: WsHeartbeat;
  readonly wsPlugin: WebsocketPluginOptions;
}

/** The MCP routes under their hooks: hop guard, Origin and Host, who is calling, CORS. */
async function registerMcpScope(mcp: FastifyInstance, { options, observer, log, origins, keepAlive, stateless, heartbeat, wsPlugin }: McpScope): Promise<void> {
  const { config, store, logger, isReady, endpoints, sharedBuckets, cluster } = options;
  // First: a hop from another replica of the cluster (verified) carries the principal that
  // replica authenticated, and passed its Origin and Host checks there.
  registerHopGuard(mcp, cluster?.signer, log);
  // Before the body is read: refuse foreign Origins and Hosts (DNS rebinding) cheaply.
  // A callback hook, not an async one: two promises fewer per request (issue 34); fastify
  // treats a throw here as it treats a rejection.
  mcp.addHook('onRequest', (request, _reply, done) => {
    if (!request.hop) origins.check(request.headers);
    done();
  });
  // Then who is calling, still before any body is read (no-op without gateway.auth).
  // Tokens keep the claims the policy names at start; a reload naming others fails closed (router/policy.ts).
  registerAuthHook(mcp, config.auth, origins, log, observer, claimNamesOf(config.policy?.rules));
  const bases = ['/servers/:name', '/groups/:name', '/virtual/:name', ''];
  registerCors(mcp, config.corsOrigins ?? [], bases.flatMap((base) => [`${base}/sse`, `${base}/messages`]));
  // One route per path shape, not per target: the table says per request what a name serves
  // now, so a reload adds and removes servers and groups without touching the routes.
  const table = endpoints ?? createEndpointTable(config);
  if (config.registry?.serve === true) {
    const own = (request: FastifyRequest) => config.auth?.publicUrl ?? origins.originOf(request.headers.host) ?? '';
    registerRegistryRoute(mcp, config, table, own);
  }
  const families: Array<[string, ResolveEndpoint]> = [
    ['/servers/:name', (request) => table.server((request.params as { name: string }).name, request.principal)],
    ['/groups/:name', (request) => table.group((request.params as { name: string }).name)],
    ['/virtual/:name', (request) => table.virtual((request.params as { name: string }).name)],
    // `/mcp`: the lone target's pass-through, or the aggregate over several (its sessions stay
    // reachable there when a reload switches it).
    ['', (request) => table.root(request.principal)],
  ];
  // Each gets the same three downstream transports: .../mcp, .../ws, .../sse with .../messages.
  const limits = createRequestLimits(config.rateLimits, (code) => observer.refused('rate-limit', code), sharedBuckets);
  // A WebSocket session stays on the replica that holds its socket: only HTTP requests hop.
  const forward = cluster && createForwarder(cluster, store, log);
  // A 2026 retry goes to the replica holding its parked call; other 2026 requests stay here.
  const forwardRetry = cluster && createRetryForwarder(cluster, stateless, log);
  // Step-up over HTTP (SEP-2350's 403) unless gateway.auth.stepUp says "jsonrpc".
  const auth = config.auth;
  const challenge = auth === undefined || auth.stepUp === 'jsonrpc' ? undefined : (request: StepUpRequest, missing: readonly string[]) => stepUpChallenge(request, auth, origins, missing);
  for (const [base, resolve] of families) {
    registerMcpRoute(mcp, { path: `${base}/mcp`, resolve, store, keepAlive, logger, limits, stateless, forward, forwardRetry, stepUpChallenge: challenge });
    registerLegacySseRoute(mcp, { ssePath: `${base}/sse`, messagesPath: `${base}/messages`, resolve, store, keepAlive, logger, limits, forward });
  }
  // The WebSocket plugin in a scope of its own, under the hooks above: its onRequest and
  // onResponse hooks (and the two response listeners fastify adds for an onResponse hook) run
  // only on the /ws routes, not on every POST (issue 34). The gate sends it nothing else.
  const ws = { heartbeat, maxBufferedBytes: config.websocket.maxBufferedBytes, isReady, logger };
  void mcp.register(async (wsScope) => {
    await wsScope.register(fastifyWebsocket, wsPlugin);
    for (const [base, resolve] of families) registerWsRoute(wsScope, { path: `${base}/ws`, resolve, store, ...ws, limits });
  });
}
