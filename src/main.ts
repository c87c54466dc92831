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
import { openCluster } from './cluster/open.ts';
import type { SharedState } from './cluster/shared-state.ts';
import { auditConfigOf, RING_ONLY } from './config/audit-normalise.ts';
import { endpointUrls } from './config/endpoints.ts';
import { configDiff } from './config/diff.ts';
import { configGeneration, generationKey } from './config/generation.ts';
import type { GatewayConfig } from './config/types.ts';
import { adminExposure, consoleExposure } from './http/admin-routes.ts';
import { accountsOf, createConsoleSources, disconnectOf, type ConsoleSources } from './http/console-sources.ts';
import { refuseUnknownAudience, warnIfExposed } from './http/exposure.ts';
import { createObservability } from './observe/setup.ts';
import type { StatusBoard } from './observe/status.ts';
import { createAuditTrailOf, type AuditTrail } from './observe/audit/setup.ts';
import { createHttpServer, type HttpServer } from './http/server.ts';
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
  const env = options.env ?? process.env;
  const tracing = await openTracing(config, env, logger);
  const audit = await openAuditTrail(config, env, logger);
  const live = new LiveState(config);
  const observability = createObservability(config, statusSourcesOf(live, audit), adminExposure(config).served);
  const { cluster, shared } = await openCluster(config, live.generationOf, logger);
  const refused = (code: string) => observability.observer.refused('rate-limit', code);
  const limitTool = createToolLimits(config.rateLimits, refused, shared?.buckets);
  const runtime = (live.made = createRuntime(config, logger, { tracing, observer: observability.observer, limitTool, cluster, audit }));
  const parts: Parts = { config, logger, live, runtime, cluster, shared, tracing, audit };
  const app = createHttpServer({
    config,
    store: runtime.store,
    logger,
    isReady: () => live.ready,
    endpoints: runtime.endpoints,
    stateless: runtime.stateless,
    health: runtime.health,
    cluster,
    pins: () => runtime.pins,
    stepUp: runtime.stepUp,
    audit,
    oauth: runtime.oauth,
    ...observability,
    console: consoleOf(parts, observability.status, options.loadConfig),
    sharedBuckets: shared?.buckets,
    generation: live.generationOf,
  });
  await app.listen({ host: config.listen.host, port: config.listen.port }).catch(async (err: unknown) => {
    // Not listening: the Redis connection would keep the process alive, retrying for nobody.
    await shared?.close();
    await cluster?.close();
    throw err;
  });
  // In the directory only once it listens: the other replicas may forward to it from then on.
  await cluster?.start();
  const running = new Running(parts, app);
  runtime.oauth?.listeningAt(running.url);
  logger.info({ url: running.url, targets: [...config.targets.keys()] }, 'switchboard listening');
  warnIfExposed(config, logger);
  return running;
}

/** What a running gateway changes as it goes: the config in force, its generation, readiness. */
class LiveState {
  current: GatewayConfig;
  generation: string;
  ready = true;
  // The status page and metrics read the runtime when asked; it is made with their observer.
  made: Runtime | undefined = undefined;
  // The generation follows reloads; its secrets' HMAC key is fixed for the process (config/generation.ts).
  readonly secretKey: string;

  constructor(config: GatewayConfig) {
    this.current = config;
    this.secretKey = generationKey(config, () => randomBytes(32).toString('base64url'));
    this.generation = configGeneration(config, this.secretKey);
  }

  /** An arrow field: the cluster and the HTTP server read it detached. */
  readonly generationOf = (): string => this.generation;
}

/** What startGateway made that a running gateway reloads and closes. */
interface Parts {
  readonly config: GatewayConfig;
  readonly logger: Logger;
  readonly live: LiveState;
  readonly runtime: Runtime;
  readonly cluster: Cluster | undefined;
  readonly shared: SharedState | undefined;
  readonly tracing: TracingSdk | undefined;
  readonly audit: AuditTrail | undefined;
}

/** What the status page and metrics read of the gateway, when asked. */
function statusSourcesOf(live: LiveState, audit: AuditTrail | undefined): Parameters<typeof createObservability>[1] {
  return {
    targets: () => [...live.current.targets.values()].map((t) => ({ name: t.name, type: t.type })),
    children: () => live.made?.children() ?? new Map<string, number>(),
    generation: live.generationOf,
    pendingPins: () => live.made?.pins?.pending().map((c) => ({ ...c, dangers: c.dangers.map((d) => d.code) })),
    auditSinks: audit && (() => audit.stats()),
  };
}

/** The console's sources (with the console served and a trail to read); undefined otherwise. */
function consoleOf(parts: Parts, status: StatusBoard | undefined, loadConfig: StartOptions['loadConfig']): ConsoleSources | undefined {
  const { config, live, runtime, audit } = parts;
  if (!consoleExposure(config).served || audit === undefined) return undefined;
  const reloads =
    loadConfig === undefined
      ? undefined
      : { load: loadConfig, diff: (next: GatewayConfig) => ({ ...configDiff(live.current, next), needRestart: restartOnlyChanges(live.current, next) }), apply: (next: GatewayConfig) => applyConfig(parts, next) };
  const current = () => live.current;
  const oauth = runtime.oauth?.client;
  return createConsoleSources({ runtime, config: current, status, trail: audit, reloads, accounts: accountsOf(oauth), disconnect: disconnectOf(oauth, current) });
}

/** Packages not yet installed were installed by the caller (cli.ts, or `servers install`); a reload only reads the lock. */
function applyConfig({ live, runtime, logger }: Parts, unprepared: GatewayConfig): string[] {
  const next = applyLockedPackages(unprepared);
  const needRestart = restartOnlyChanges(live.current, next);
  runtime.reload(next);
  live.current = next;
  live.generation = configGeneration(next, live.secretKey);
  if (needRestart.length > 0) logger.warn({ needRestart }, 'config reloaded; some changes take effect only after a restart');
  return needRestart;
}

class Running implements RunningGateway {
  readonly url: string;
  readonly port: number;
  readonly connections: RunningGateway['connections'];
  private readonly parts: Parts;
  private readonly app: HttpServer;
  private closing: Promise<void> | undefined = undefined;

  constructor(parts: Parts, app: HttpServer) {
    this.parts = parts;
    this.app = app;
    const listen = parts.config.listen;
    const address = app.server.address();
    this.port = typeof address === 'object' && address !== null ? address.port : listen.port;
    const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
    this.url = `http://${host}:${this.port}`;
    this.connections = parts.runtime.oauth?.client;
  }

  // Arrow fields, own properties: test/support/gateway.ts spreads the running gateway.
  readonly reload = (next: GatewayConfig): void => {
    applyConfig(this.parts, next);
    // The paths follow the config (new sessions): say where they are now, as at start-up.
    const current = this.parts.live.current;
    this.parts.logger.info({ targets: [...current.targets.keys()], endpoints: endpointUrls(current, this.url) }, 'config reloaded');
  };

  readonly close = (): Promise<void> => (this.closing ??= shutDown(this.parts, this.app));
}

async function shutDown({ config, logger, live, runtime, cluster, shared, tracing, audit }: Parts, app: HttpServer): Promise<void> {
  live.ready = false;
  logger.info({ graceMs: config.shutdownGraceMs, sessions: runtime.store.size }, 'shutting down');
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
