/**
 * The HTTP server: the only module that builds fastify. MCP routes per path shape (servers,
 * groups, root), health, and one error handler that turns every failure (ours, fastify's, or
 * unexpected) into a JSON-RPC error envelope.
 */
import fastifyWebsocket, { type WebsocketPluginOptions } from '@fastify/websocket';
import { fastify, type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError, isGatewayError, toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
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
import { createOriginPolicy } from './guards.ts';
import { createForwarder, createRetryForwarder } from './hop-forward.ts';
import { registerLegacySseRoute } from './legacy-sse-route.ts';
import { registerHopGuard } from './replica-hop-guard.ts';
import { registerMcpRoute, type ResolveEndpoint } from './mcp-route.ts';
import { registerRegistryRoute } from './registry-route.ts';
import { replyError } from './reply-error.ts';
import { registerAuthHook, registerResourceMetadata, stepUpChallenge, type StepUpRequest } from './auth-hook.ts';
import { compileStepUp, type StepUpRules } from '../router/step-up.ts';
import { createRequestLimits, type SharedBuckets } from '../auth/rate-limit.ts';
import { claimNamesOf } from '../router/policy.ts';
import { createKeepAlive } from './sink.ts';
import { createWsHeartbeat, pickSubprotocol, registerWsRoute } from './ws-route.ts';
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

/** fastify's own error codes that are the client's fault, mapped onto the catalog. */
function fromFastifyError(err: FastifyError): GatewayError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('GW_BODY_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('GW_UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type: Content-Type must be application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('GW_PARSE_ERROR', 'Parse error: empty body');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('GW_INVALID_REQUEST', 'Invalid Request: Content-Length does not match the body');
    case 'ECONNRESET':
      // The body stopped arriving because the connection closed: the client left, or Node's
      // parser refused the rest of it (a bad chunk size) and answered it already.
      return new GatewayError('GW_INVALID_REQUEST', 'Bad Request: the connection closed before the body arrived');
    default:
      return undefined;
  }
}

/** HTTP status of a request Node's parser refused before any route saw it. */
function clientErrorStatus(code: string | undefined): number {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'HPE_URI_TOO_LONG') return 414;
  return 400;
}

/**
 * Requests Node's HTTP parser refuses (a body that did not arrive in time, headers too large,
 * malformed HTTP) never reach a route: answer them with a JSON-RPC error envelope as well, then
 * drop the socket, whose stream can no longer be trusted.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // A route may have answered already (a bad URL is refused before the body is read): a second
  // answer on the socket would be taken for the answer to a request never sent. Node's own
  // handler makes the same check on the same field.
  if ((socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true) {
    socket.destroy();
    return;
  }
  const status = clientErrorStatus(err.code);
  const code = status === 400 ? 'GW_INVALID_REQUEST' : 'GW_REQUEST_REFUSED';
  const message = status === 400 ? 'Bad Request: malformed HTTP' : (STATUS_CODES[status] ?? 'Bad Request');
  const body = JSON.stringify(toErrorResponse(null, new GatewayError(code, message, { status })));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

export function createHttpServer(options: HttpServerOptions): FastifyInstance {
  const { config, store, logger, isReady, endpoints, stateless: given, health, observer = NOOP_OBSERVER, metrics, status, sharedBuckets, generation, cluster, pins, stepUp, audit, console: consoleSources, oauth } = options;
  const log = logger.child({ component: 'http' });
  const app = fastify({
    // No fastify logger: it would build a child logger for every request even with request
    // logging off (about 2% of the gateway's time in the overhead benchmark). Sessions and this
    // module log what matters through `log`.
    logger: false,
    bodyLimit: config.limits.maxBodyBytes,
    // A request must arrive whole within requestTimeoutMs (408 past it); answers are not bounded.
    requestTimeout: config.limits.requestTimeoutMs,
    // Node checks that timeout every 30 s by default: a stalled body would hold its socket up to
    // 30 s past the limit.
    http: { connectionsCheckingInterval: Math.min(1_000, config.limits.requestTimeoutMs), headersTimeout: config.limits.requestTimeoutMs },
    clientErrorHandler: answerClientError,
    // A URL that is not valid percent-encoding (FST_ERR_BAD_URL) is refused before routing:
    // answer it in the envelope like every other refusal, not with fastify's own JSON.
    frameworkErrors: (_err, _request, reply) =>
      replyError(reply, new GatewayError('GW_INVALID_REQUEST', 'Bad Request: the URL is not valid percent-encoding')),
    return503OnClosing: true,
    // Streams are ended by the session store on shutdown; idle keep-alive sockets close at once.
    forceCloseConnections: 'idle',
  });
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
  const ws = { heartbeat, maxBufferedBytes: config.websocket.maxBufferedBytes, isReady, logger };
  const wsPlugin: WebsocketPluginOptions = {
    options: {
      // The same cap as an HTTP body; `ws` closes a socket that sends more with 1009.
      maxPayload: config.limits.maxBodyBytes,
      handleProtocols: pickSubprotocol,
      // A peer that does not answer our close frame (it stopped reading) is dropped after this.
      closeTimeout: 2_000,
      // Only the upgrades the gate lets through (upgrade-gate.ts): the plugin never hears the port.
      server: gate.relay,
    },
    // Sockets are not closed when the server starts closing: their sessions end (1001) once the
    // store has drained them, like every other stream.
    preClose: (done) => done(),
    // `ws` reports a frame it refuses (1009 over maxPayload, 1007 not UTF-8, 1002 bad framing) as
    // an 'error' after it has sent that close frame and begun closing (its closeTimeout bounds
    // it). The plugin's default handler destroyed the socket then, with the rest of a large
    // frame unread: the kernel answers with a reset, and the client could lose the close frame.
    errorHandler: (err, socket) => {
      log.debug({ err }, 'WebSocket frame refused; closing with its close code');
      if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.terminate();
    },
  };

  // The body arrives as text and is parsed once by the route, so a parse error becomes -32700.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  app.setErrorHandler((err: unknown, _request, reply) => {
    const known = isGatewayError(err) ? err : fromFastifyError(err as FastifyError);
    const error = known ?? toGatewayError(err);
    if (known === undefined) log.error({ err, correlationId: error.details.correlationId }, 'unhandled error in a route');
    return replyError(reply, error);
  });

  app.setNotFoundHandler((request, reply) =>
    replyError(reply, new GatewayError('GW_ROUTE_NOT_FOUND', `Not Found: ${request.method} ${request.url.split('?', 1)[0]}`)),
  );

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

  void app.register(async (mcp) => {
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
    void mcp.register(async (wsScope) => {
      await wsScope.register(fastifyWebsocket, wsPlugin);
      for (const [base, resolve] of families) registerWsRoute(wsScope, { path: `${base}/ws`, resolve, store, ...ws, limits });
    });
  });

  app.addHook('onClose', async () => {
    if (given === undefined) stateless.close();
    keepAlive.stop();
    heartbeat.stop();
  });
  return app;
}
