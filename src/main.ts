/**
 * Composition root: config -> logger -> tracing (the OpenTelemetry SDK, telemetry/sdk.ts; only
 * when traces are on) -> Runtime (session/runtime.ts: agents, shared pools, the upstream factory,
 * cursor codec, endpoint table, session store) -> HTTP server. Nothing imports this file except
 * cli.ts and tests that need a whole gateway.
 */
import { applyLockedPackages, preparePackages } from './transport/package-cache.ts';
import { randomBytes } from 'node:crypto';
import { createToolLimits } from './auth/rate-limit.ts';
import type { Cluster } from './cluster/cluster.ts';
import type { SharedState } from './cluster/shared-state.ts';
import { auditConfigOf, RING_ONLY } from './config/audit-normalise.ts';
import { configError } from './config/config-error.ts';
import { endpointUrls } from './config/endpoints.ts';
import { configDiff } from './config/diff.ts';
import { configGeneration, generationKey } from './config/generation.ts';
import type { GatewayConfig } from './config/types.ts';
import { adminExposure, consoleExposure } from './http/admin-routes.ts';
import { createConsoleSources } from './http/console-sources.ts';
import { isLoopbackAddress } from './http/guards.ts';
import { createObservability } from './observe/setup.ts';
import { createAuditTrailOf } from './observe/audit/setup.ts';
import { createHttpServer } from './http/server.ts';
import { createLogger, type Logger } from './log/logger.ts';
import { claimNamesOf } from './router/policy.ts';
import { VERSION } from './session/gateway-info.ts';
import { createRuntime, type Runtime } from './session/runtime.ts';
import type { UserOAuth } from './upstream/oauth/user-oauth.ts';
import type { TracingSdk } from './telemetry/sdk.ts';
import { resolveTraceSettings } from './telemetry/settings.ts';
import { killAllChildrenNow } from './transport/stdio.ts';

export interface RunningGateway {
  /** Base URL, e.g. http://127.0.0.1:8080 (the port actually bound when config asked for 0). */
  readonly url: string;
  readonly port: number;
  /** Graceful stop: refuse new work, let in-flight requests finish up to the grace, kill children. */
  close(): Promise<void>;
  /**
   * Applies a reloaded config: new sessions see the new targets and groups, on their own paths
   * too (a removed one's path refuses new sessions with 404); live aggregate sessions get
   * list_changed and drain removed or changed targets after their in-flight requests; live
   * sessions of a removed path carry on until they end. Settings that need a restart are logged
   * and left as they were.
   */
  reload(next: GatewayConfig): void;
  /**
   * Each user's connected upstream accounts (`gateway.oauth`): list them (principal, target,
   * upstream subject, expiry; never a token) and disconnect one (revoked where the server offers
   * RFC 7009). For the operator console; undefined without `gateway.oauth`.
   */
  readonly connections?: Pick<UserOAuth, 'connections' | 'disconnect'> | undefined;
}

export interface StartOptions {
  /** Use this logger instead of creating one from config.logging. */
  logger?: Logger;
  /** Reads the config source again (the CLI's file): the console checks and reloads it. Absent: no reload from the console. */
  loadConfig?: (() => Promise<GatewayConfig>) | undefined;
  /** Where the OTEL_* variables are read (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Spans still buffered at shutdown get this long to reach the collector. */
const TRACE_FLUSH_MS = 5_000;

let exitHookInstalled = false;

/**
 * JWT audiences are checked against the gateway's own URL (http/own-origin.ts). Listening beyond
 * loopback with neither gateway.auth.publicUrl nor gateway.allowedHosts, the gateway cannot know
 * that URL: every Host would pass and a token minted for any other service, presented with that
 * service's name as Host, would be taken for ours. Refused at start rather than run that way.
 */
function refuseUnknownAudience(config: GatewayConfig): void {
  const auth = config.auth;
  if (auth?.jwt === undefined || auth.publicUrl !== undefined || config.allowedHosts !== undefined || isLoopbackAddress(config.listen.host)) return;
  throw configError(
    'gateway.auth.publicUrl',
    `JWT audiences must be checked against the gateway's own URL, which listening on ${config.listen.host} it cannot know: set gateway.auth.publicUrl (or gateway.allowedHosts, the names clients use)`,
  );
}

/**
 * Listening beyond loopback with no client authentication (the gateway has none yet) means anyone
 * who can reach the port runs every tool of every server: say so loudly, every start.
 */
function warnIfExposed(config: GatewayConfig, logger: Logger): void {
  const auth = config.auth;
  if (auth !== undefined && !auth.anonymous) return;
  if (config.corsOrigins?.includes('*') === true) {
    logger.warn({ corsOrigins: config.corsOrigins }, 'EXPOSED: CORS allows any origin and there is no client authentication; any web page the user opens can call every tool');
  }
  if (isLoopbackAddress(config.listen.host)) return;
  const hosts = config.allowedHosts;
  logger.warn(
    {
      listen: config.listen.host,
      allowedHosts: hosts ?? 'any (unset)',
      fix: 'listen on 127.0.0.1 behind an authenticating proxy, or restrict the network; set gateway.allowedHosts to the names clients use',
    },
    'EXPOSED: listening beyond loopback with no client authentication; anyone who reaches this port can call every tool of every server',
  );
}

export async function startGateway(input: GatewayConfig, options: StartOptions = {}): Promise<RunningGateway> {
  refuseUnknownAudience(input);
  const logger = options.logger ?? createLogger({ level: input.logging.level });
  // npx/uvx targets: their packages installed now, before listening, never on a client's time.
  const config = await preparePackages(input, { logger });
  if (!exitHookInstalled) {
    // Last line of defence: whatever way this process exits, no child outlives it.
    process.on('exit', killAllChildrenNow);
    exitHookInstalled = true;
  }
  let ready = true;
  const env = options.env ?? process.env;
  const tracing = await openTracing(config, env, logger);
  const audit = await openAuditTrail(config, env, logger);
  let current = config;
  // The generation follows reloads; its secrets' HMAC key is fixed for the process (config/generation.ts).
  const secretKey = generationKey(config, () => randomBytes(32).toString('base64url'));
  let generation = configGeneration(config, secretKey);
  // The status page and metrics read the runtime when asked; it is made with their observer.
  let made: Runtime | undefined;
  const observability = createObservability(
    config,
    {
      targets: () => [...current.targets.values()].map((t) => ({ name: t.name, type: t.type })),
      children: () => made?.children() ?? new Map<string, number>(),
      generation: () => generation,
      pendingPins: () => made?.pins?.pending().map((c) => ({ ...c, dangers: c.dangers.map((d) => d.code) })),
      auditSinks: audit && (() => audit.stats()),
    },
    adminExposure(config).served,
  );
  const { cluster, shared } = await openCluster(config, () => generation, logger);
  const refused = (code: string) => observability.observer.refused('rate-limit', code);
  const limitTool = createToolLimits(config.rateLimits, refused, shared?.buckets);
  const runtime = (made = createRuntime(config, logger, { tracing, observer: observability.observer, limitTool, cluster, audit }));
  const { store, endpoints } = runtime;
  // Packages not yet installed were installed by the caller (cli.ts, or `servers install`); a reload only reads the lock.
  const apply = (unprepared: GatewayConfig) => {
    const next = applyLockedPackages(unprepared);
    const needRestart = restartOnlyChanges(current, next);
    runtime.reload(next);
    current = next;
    generation = configGeneration(next, secretKey);
    if (needRestart.length > 0) logger.warn({ needRestart }, 'config reloaded; some changes take effect only after a restart');
    return needRestart;
  };
  const reloads = options.loadConfig === undefined ? undefined : { load: options.loadConfig, diff: (next: GatewayConfig) => ({ ...configDiff(current, next), needRestart: restartOnlyChanges(current, next) }), apply };
  const consoleSources =
    consoleExposure(config).served && audit !== undefined
      ? createConsoleSources({ runtime, config: () => current, status: observability.status, trail: audit, reloads, accounts: accountsOf(runtime.oauth?.client), disconnect: disconnectOf(runtime.oauth?.client, () => current) })
      : undefined;
  const app = createHttpServer({
    config,
    store,
    logger,
    isReady: () => ready,
    endpoints,
    stateless: runtime.stateless,
    health: runtime.health,
    cluster,
    pins: () => runtime.pins,
    stepUp: runtime.stepUp,
    audit,
    oauth: runtime.oauth,
    ...observability,
    console: consoleSources,
    sharedBuckets: shared?.buckets,
    generation: () => generation,
  });
  await app.listen({ host: config.listen.host, port: config.listen.port }).catch(async (err: unknown) => {
    // Not listening: the Redis connection would keep the process alive, retrying for nobody.
    await shared?.close();
    await cluster?.close();
    throw err;
  });
  // In the directory only once it listens: the other replicas may forward to it from then on.
  await cluster?.start();
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.listen.port;
  const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host;
  const url = `http://${host}:${port}`;
  runtime.oauth?.listeningAt(url);
  logger.info({ url, targets: [...config.targets.keys()] }, 'switchboard listening');
  warnIfExposed(config, logger);

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    connections: runtime.oauth?.client,
    reload(next) {
      apply(next);
      // The paths follow the config (new sessions): say where they are now, as at start-up.
      logger.info({ targets: [...current.targets.keys()], endpoints: endpointUrls(current, url) }, 'config reloaded');
    },
    close() {
      closing ??= (async () => {
        ready = false;
        logger.info({ graceMs: config.shutdownGraceMs, sessions: store.size }, 'shutting down');
        // One process: stop accepting first (new requests on kept-alive sockets get 503), then
        // drain sessions. A replica keeps listening while it drains: its sessions are reached
        // through the other replicas too, and /readyz (503) and the directory's draining flag
        // tell the load balancer and the replicas; new sessions get 503 (GW_SHUTTING_DOWN).
        let closed = cluster === undefined ? app.close() : undefined;
        // Sessions end (their DELETEs go out), then every agent and shared child the gateway ever
        // made closes, whichever config made it; a replica then leaves the directory.
        const drained = runtime.close(config.shutdownGraceMs);
        await cluster?.drain();
        await drained;
        await shared?.close();
        closed ??= app.close();
        // Every session has ended and every stream with it: sockets still open are idle keep-alive
        // ones (or hold a response that can no longer make progress); they would hold close() up
        // until their keep-alive timeout.
        app.server.closeAllConnections();
        await closed;
        // Last: the spans and audit records of the requests that just ended go out too.
        await Promise.all([tracing?.shutdown(TRACE_FLUSH_MS), audit?.close(TRACE_FLUSH_MS)]);
        logger.info('stopped');
      })();
      return closing;
    },
  };
}

/**
 * With `gateway.cluster`: the Redis connection and what the replicas share there (rate-limit
 * buckets, config generations). Redis need not be up: the gateway waits `commandTimeoutMs` for it
 * at most (so a replica that just started does not take its first requests for an outage), then
 * starts anyway, and `redis.failMode` says what the rate limits do until Redis is there.
 */
async function openCluster(config: GatewayConfig, generation: () => string, logger: Logger): Promise<{ cluster?: Cluster; shared?: SharedState }> {
  if (config.cluster === undefined) return {};
  // Loaded only with a cluster (ioredis and the rest: tens of ms at every start otherwise).
  const [{ createCluster }, { startSharedState }] = await Promise.all([import('./cluster/cluster.ts'), import('./cluster/shared-state.ts')]);
  const cluster = createCluster(config.cluster, logger);
  await cluster.redis.ready(config.cluster.redis.commandTimeoutMs).catch(() => undefined);
  const shared = startSharedState(cluster.redis, config.cluster, cluster.replicaId, generation, logger.child({ replicaId: cluster.replicaId }));
  return { cluster, shared };
}

/** The OpenTelemetry SDK when traces are on (telemetry/settings.ts), loaded only then: it costs tens of ms at start. */
async function openTracing(config: GatewayConfig, env: Readonly<Record<string, string | undefined>>, logger: Logger): Promise<TracingSdk | undefined> {
  if (resolveTraceSettings(config.telemetry?.traces, env) === undefined) return undefined;
  const { createTracingSdk } = await import('./telemetry/sdk.ts');
  return createTracingSdk(config.telemetry?.traces, env, logger, VERSION);
}

/** The audit trail (gateway.audit), with the OpenTelemetry SDK loaded only for an `otlp` sink. */
async function openAuditTrail(config: GatewayConfig, env: Readonly<Record<string, string | undefined>>, logger: Logger) {
  // The console's recent calls are the trail's ring: with the console on, a trail with no sinks keeps it where none is configured.
  const settings = auditConfigOf(config) ?? (consoleExposure(config).served ? RING_ONLY : undefined);
  if (settings === undefined) return undefined;
  const sdk = settings.sinks.some((sink) => sink.type === 'otlp') ? await import('./telemetry/sdk.ts') : undefined;
  return createAuditTrailOf(settings, logger, (sink) => {
    if (sdk === undefined) throw new Error('unreachable: an otlp sink without the SDK loaded');
    return sdk.createOtlpAuditSink(sink, env, logger, VERSION);
  });
}

/** What a reload cannot change in a running gateway: the listener, limits, origin and host checks. */
function restartOnlyChanges(before: GatewayConfig, after: GatewayConfig): string[] {
  const out: string[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (!same(before.listen, after.listen)) out.push('listen address');
  if (!same(before.limits, after.limits) || !same(before.session, after.session)) out.push('limits and session settings');
  if (!same(before.allowedOrigins, after.allowedOrigins) || !same(before.allowedHosts, after.allowedHosts)) out.push('allowed origins and hosts');
  if (!same(before.auth, after.auth)) out.push('client authentication');
  if (!same(before.telemetry, after.telemetry)) out.push('telemetry');
  if (!same(before.audit, after.audit)) out.push('audit trail');
  if (!same(before.cluster, after.cluster)) out.push('cluster settings');
  // The pins registry keeps the file (and bounds) it was made with; modes follow the reload.
  if (before.pinning !== undefined && after.pinning !== undefined && (before.pinning.file !== after.pinning.file || before.pinning.maxItems !== after.pinning.maxItems || before.pinning.maxPending !== after.pinning.maxPending)) {
    out.push('pinning file and bounds');
  }
  // Tokens keep the claims the policy named at start; new names fail closed until a restart.
  const claims = new Set(claimNamesOf(before.policy?.rules));
  if (claimNamesOf(after.policy?.rules).some((name) => !claims.has(name))) out.push('token claims named by the policy');
  return out;
}

/** The console's Disconnect: `server` must be a remote target of the config in force (the provider's accounts are per remote target). */
function disconnectOf(oauth: Pick<UserOAuth, 'disconnect'> | undefined, config: () => GatewayConfig) {
  if (oauth === undefined) return undefined;
  return async (principal: string, server: string) => {
    const target = config().targets.get(server);
    return target !== undefined && target.type !== 'stdio' ? oauth.disconnect(principal, target) : false;
  };
}

/** The console's upstream accounts (who connected which server, and when): never a token. */
function accountsOf(oauth: Pick<UserOAuth, 'connections'> | undefined) {
  if (oauth === undefined) return undefined;
  return async () => (await oauth.connections()).map((c) => ({ principal: c.principal, server: c.target, connectedAt: new Date(c.connectedAt).toISOString() }));
}
