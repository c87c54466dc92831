/**
 * From the validated file shape (Claude Desktop names, flat per-server keys) to the frozen
 * GatewayConfig the rest of the gateway reads (grouped policies, targets as an ordered Map).
 */
import { createHash } from 'node:crypto';
import type { AuthSection, PolicySection } from './auth-schema.ts';
import { DEFAULT_INHERITED_ENV } from './default-env.ts';
import { isAbsolute, resolve } from 'node:path';
import type { ConfigFile, ServerEntry } from './schema.ts';
import type { TelemetrySection } from './telemetry-schema.ts';
import { toAuditConfig } from './audit-normalise.ts';
import { toOverridesConfig, toVirtuals } from './overrides-normalise.ts';
import type { DiscoveryEntry } from './discovery-schema.ts';
import type { AggregateConfig, DiscoveryConfig, AuthConfig, RequiredScopesConfig, BucketConfig, GatewayConfig, Guardrails, PolicyRule, LogLevel, TargetConfig, TargetExposureConfig, TokenExchangeConfig, TracesConfig } from './types.ts';

/**
 * Restart backoff is not exposed in the file yet: 250 ms first (a child that died at once usually
 * dies again at once, so do not spin), doubling to 10 s (quick recovery once the cause is gone).
 */
export const RESTART_INITIAL_BACKOFF_MS = 250;
export const RESTART_MAX_BACKOFF_MS = 10_000;

export interface NormaliseOptions {
  /** Folder relative `cwd` values are resolved against: the config file's folder. */
  readonly baseDir: string;
}

/** Command-line values that win over the file's `gateway` settings. */
export interface ConfigOverrides {
  readonly host?: string;
  readonly port?: number;
  readonly logLevel?: LogLevel;
  /** `--cors <origin>`: added to gateway.corsOrigins. */
  readonly cors?: readonly string[];
}

export function toGatewayConfig(file: ConfigFile, options: NormaliseOptions): GatewayConfig {
  const targets = new Map<string, TargetConfig>();
  for (const [name, server] of Object.entries(file.mcpServers)) {
    if (server.disabled) continue;
    const pinning = server.pinning ?? file.gateway.pinning.mode;
    // Off leaves no key: a target without pinning is the same object it always was.
    targets.set(name, pinning === 'off' ? toTargetConfig(name, server, options.baseDir) : { ...toTargetConfig(name, server, options.baseDir), pinning });
  }
  const { gateway } = file;
  return deepFreeze({
    listen: { host: gateway.host, port: gateway.port },
    allowedOrigins: gateway.allowedOrigins,
    corsOrigins: gateway.corsOrigins,
    allowedHosts: gateway.allowedHosts,
    auth: gateway.auth === undefined ? undefined : toAuthConfig(gateway.auth),
    requiredScopes: toRequiredScopes(file, targets),
    policy: gateway.policy === undefined ? undefined : { rules: gateway.policy.rules.map(toPolicyRule) },
    rateLimits:
      gateway.rateLimits === undefined
        ? undefined
        : { perPrincipal: toBucket(gateway.rateLimits.perPrincipal), perTool: toBucket(gateway.rateLimits.perTool), maxKeys: gateway.rateLimits.maxKeys },
    cluster: gateway.cluster === undefined ? undefined : { ...gateway.cluster, replicaId: gateway.cluster.replicaId, redis: { ...gateway.cluster.redis }, keys: [...gateway.cluster.keys] },
    oauth:
      gateway.oauth === undefined
        ? undefined
        : { ...gateway.oauth, publicUrl: gateway.oauth.publicUrl, vaultFile: isAbsolute(gateway.oauth.vaultFile) ? gateway.oauth.vaultFile : resolve(options.baseDir, gateway.oauth.vaultFile) },
    limits: { ...gateway.limits },
    session: { ...gateway.session, stateless: { ...gateway.session.stateless } },
    websocket: { ...gateway.websocket },
    health: { ...gateway.health },
    shutdownGraceMs: gateway.shutdownGraceMs,
    admin: { ...gateway.admin },
    registry: { ...gateway.registry },
    pinning: { ...gateway.pinning, file: isAbsolute(gateway.pinning.file) ? gateway.pinning.file : resolve(options.baseDir, gateway.pinning.file) },
    packages: { install: gateway.packages.install, cacheDir: isAbsolute(gateway.packages.cacheDir) ? gateway.packages.cacheDir : resolve(options.baseDir, gateway.packages.cacheDir) },
    logging: { level: gateway.logging.level, audit: gateway.logging.audit === 'on' || (gateway.logging.audit === 'auto' && gateway.auth !== undefined) },
    targets,
    aggregate: toAggregateConfig(file, targets),
    telemetry: { traces: toTracesConfig(gateway.telemetry?.traces) },
    audit: toAuditConfig(gateway.audit, gateway.logging.audit === 'on' || (gateway.logging.audit === 'auto' && gateway.auth !== undefined)),
  });
}

/** Every key kept as given, unset ones as undefined (the environment fills them at start). */
function toTracesConfig(traces: NonNullable<TelemetrySection['traces']> | undefined): TracesConfig {
  return { enabled: traces?.enabled, endpoint: traces?.endpoint, serviceName: traces?.serviceName, sampleRatio: traces?.sampleRatio };
}

function toBucket(bucket: { perSecond: number; burst?: number | undefined } | undefined): BucketConfig | undefined {
  return bucket === undefined ? undefined : { perSecond: bucket.perSecond, burst: bucket.burst ?? Math.max(1, Math.ceil(bucket.perSecond)) };
}

/** Kind lists left out: every name in an allow rule; none in a deny rule, unless it names no kind at all (the whole server). */
function toPolicyRule(rule: PolicySection['rules'][number]): PolicyRule {
  const whole = rule.tools === undefined && rule.prompts === undefined && rule.resources === undefined;
  const fill = (list: string[] | undefined) => list ?? (rule.effect === 'allow' || whole ? ['*'] : []);
  const claims = Object.fromEntries(Object.entries(rule.claims).map(([name, globs]) => [name, typeof globs === 'string' ? [globs] : globs]));
  return { ...rule, claims, tools: fill(rule.tools), prompts: fill(rule.prompts), resources: fill(rule.resources) };
}

/** Neither audience nor resource: the target's own URL is the resource the token is for. */
function toTokenExchange(te: Extract<ServerEntry, { type: 'http' }>['tokenExchange'], url: string): TokenExchangeConfig | undefined {
  if (te === undefined) return undefined;
  const resource = te.resource ?? (te.audience === undefined ? url : undefined);
  return { tokenEndpoint: te.tokenEndpoint, clientId: te.clientId, clientSecret: te.clientSecret, audience: te.audience, resource, scope: te.scope, maxCachedTokens: te.maxCachedTokens };
}

/** Keys given as themselves are hashed here: the running config holds no key. */
function toAuthConfig(auth: AuthSection): AuthConfig {
  const jwt = auth.jwt;
  return {
    anonymous: auth.anonymous,
    publicUrl: auth.publicUrl,
    apiKeys: auth.apiKeys.map((k) => ({
      name: k.name,
      sha256: k.sha256 !== undefined ? k.sha256.toLowerCase() : createHash('sha256').update(k.key ?? '').digest('hex'),
      scopes: k.scopes,
    })),
    apiKeyHeader: auth.apiKeyHeader.toLowerCase(),
    jwt:
      jwt === undefined
        ? undefined
        : { issuers: jwt.issuers, jwksUrl: jwt.jwksUrl, jwksRefetchSec: jwt.jwksRefetchSec, jwksMinCacheSec: jwt.jwksMinCacheSec, jwksMaxCacheSec: jwt.jwksMaxCacheSec, keys: jwt.keys, algorithms: jwt.algorithms, clockSkewSec: jwt.clockSkewSec, audiences: jwt.audiences },
    scopes: auth.scopes,
    authorizationServers: auth.authorizationServers ?? jwt?.issuers ?? [],
    stepUp: auth.stepUp,
  };
}

/** The enabled targets that set requiredScopes; undefined when none does (nothing to check per call). */
function toRequiredScopes(file: ConfigFile, targets: ReadonlyMap<string, TargetConfig>): ReadonlyMap<string, RequiredScopesConfig> | undefined {
  const out = new Map<string, RequiredScopesConfig>();
  for (const name of targets.keys()) {
    const given = (file.mcpServers[name] as ServerEntry).requiredScopes;
    if (given !== undefined) out.set(name, { tools: given.tools ?? {}, prompts: given.prompts ?? {}, resources: given.resources ?? {} });
  }
  return out.size === 0 ? undefined : out;
}

function toAggregateConfig(file: ConfigFile, targets: ReadonlyMap<string, TargetConfig>): AggregateConfig {
  const { aggregate, groups } = file.gateway;
  const exposure = new Map<string, TargetExposureConfig>();
  for (const name of targets.keys()) {
    const server = file.mcpServers[name] as ServerEntry;
    exposure.set(name, {
      prefix: server.prefix ?? name,
      eager: server.eager ?? aggregate.eager,
      tools: server.tools,
      prompts: server.prompts,
      resources: server.resources,
      overrides: toOverridesConfig(server.overrides),
    });
  }
  const groupMap = new Map<string, readonly string[]>();
  // Disabled servers are left out of a group (the group still exists, and may end up empty).
  for (const [name, group] of Object.entries(groups)) groupMap.set(name, group.servers.filter((server) => targets.has(server)));
  const virtuals = toVirtuals(file.gateway.virtualServers, file.mcpServers, exposure);
  const discovery = new Map<string, DiscoveryConfig>();
  const discover = (key: string, entry: DiscoveryEntry | undefined) => {
    if (entry?.mode === 'search') discovery.set(key, { alwaysVisible: entry.alwaysVisible, maxResults: entry.maxResults });
  };
  discover('aggregate:*', aggregate.discovery);
  for (const [name, group] of Object.entries(groups)) discover(`group:${name}`, group.discovery);
  for (const [name, virtual] of Object.entries(file.gateway.virtualServers)) discover(`virtual:${name}`, virtual.discovery);
  return { separator: aggregate.separator, listTimeoutMs: aggregate.listTimeoutMs, bareNames: aggregate.bareNames, discovery, exposure, groups: groupMap, virtuals };
}

/** The target's hooks and redaction, copied out of the parsed entry (absent when none: the call path checks for absence). */
function guardrailsOf(server: ServerEntry): Guardrails {
  return {
    ...(server.hooks.length === 0 ? {} : { hooks: server.hooks.map((hook) => ({ ...hook, methods: [...hook.methods] })) }),
    ...(server.redact === undefined ? {} : { redact: { ...server.redact, patterns: [...server.redact.patterns] } }),
  };
}

function toTargetConfig(name: string, server: ServerEntry, baseDir: string): TargetConfig {
  const timeouts = {
    requestMs: server.timeoutMs,
    resetOnProgress: server.resetTimeoutOnProgress,
    maxTotalMs: server.maxTotalTimeoutMs,
    startupMs: server.startupTimeoutMs,
  };
  const restart = {
    onExit: server.onExit,
    maxRestarts: server.maxRestarts,
    initialBackoffMs: RESTART_INITIAL_BACKOFF_MS,
    maxBackoffMs: RESTART_MAX_BACKOFF_MS,
  };
  if (server.type !== 'stdio') {
    return {
      type: server.type,
      name,
      url: server.url,
      // HTTP header names are case-insensitive; one spelling lets the transport merge without duplicates.
      headers: Object.fromEntries(Object.entries(server.headers).map(([key, value]) => [key.toLowerCase(), value])),
      forwardAuthorization: server.forwardAuthorization,
      principalHeaders: Object.fromEntries(Object.entries(server.principalHeaders).map(([key, value]) => [key.toLowerCase(), value])),
      tokenExchange: toTokenExchange(server.tokenExchange, server.url),
      oauth: server.oauth === undefined ? undefined : { perUser: true, scopes: server.oauth.scopes, clientId: server.oauth.clientId, clientSecret: server.oauth.clientSecret },
      maxConnections: server.maxConnections,
      timeouts,
      restart,
      maxMessageBytes: server.maxMessageBytes,
      ...(server.type === 'http' ? { protocol: server.protocol } : {}),
      circuitBreaker: { ...server.circuitBreaker },
      ...guardrailsOf(server),
    };
  }
  return {
    type: 'stdio',
    name,
    command: server.command,
    args: server.args,
    env: server.env,
    principalEnv: server.principalEnv,
    inheritEnv: server.inheritEnv === true ? 'all' : [...DEFAULT_INHERITED_ENV, ...(server.inheritEnv === false ? [] : server.inheritEnv)],
    cwd: server.cwd === undefined || isAbsolute(server.cwd) ? server.cwd : resolve(baseDir, server.cwd),
    timeouts,
    restart,
    shutdownGraceMs: server.shutdownGraceMs,
    maxMessageBytes: server.maxMessageBytes,
    stderrLinesPerSecond: server.stderrLinesPerSecond,
    stderrInErrors: server.stderrInErrors && server.upstream.mode !== 'shared',
    maxQueuedBytes: server.maxQueuedBytes,
    upstream: {
      mode: server.upstream.mode,
      children: server.upstream.mode === 'shared' ? server.upstream.children : 1,
      spares: server.upstream.mode === 'shared' ? 0 : server.upstream.spares,
    },
    circuitBreaker: { ...server.circuitBreaker },
    ...guardrailsOf(server),
    ...(server.sandbox === undefined ? {} : { sandbox: { writable: server.sandbox.writable, readable: server.sandbox.readable, network: server.sandbox.network } }),
    ...(server.limits === undefined ? {} : { limits: { ...server.limits } }),
  };
}

/** A new frozen config with the command-line overrides applied; the input is left as it is. */
export function withOverrides(config: GatewayConfig, overrides: ConfigOverrides): GatewayConfig {
  if (overrides.host === undefined && overrides.port === undefined && overrides.logLevel === undefined && overrides.cors === undefined) return config;
  return deepFreeze({
    ...config,
    listen: { host: overrides.host ?? config.listen.host, port: overrides.port ?? config.listen.port },
    logging: { ...config.logging, level: overrides.logLevel ?? config.logging.level },
    ...(overrides.cors === undefined ? {} : { corsOrigins: [...(config.corsOrigins ?? []), ...overrides.cors] }),
  });
}

/**
 * Freezes plain objects and arrays all the way down. A Map cannot be frozen (its methods still
 * mutate), so its values are frozen and the type (ReadonlyMap) guards the rest.
 */
function deepFreeze<T>(value: T): T {
  if (value instanceof Map) {
    for (const item of value.values()) deepFreeze(item);
    return value;
  }
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
