/**
 * The normalised, frozen configuration every other layer reads. Produced once by `loadConfig`
 * (file or CLI quick mode) after strict validation; nothing mutates it afterwards.
 */

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export type * from './target-types.ts';
import type { HealthConfig, PinMode, TargetConfig } from './target-types.ts';
export type * from './access-types.ts';
export type * from './audit-types.ts';
export * from './admin-types.ts';
import type { AdminConfig } from './admin-types.ts';
import type { AuditConfig } from './audit-types.ts';
import type { AuthConfig, PolicyRule, RateLimitsConfig, RequiredScopesConfig } from './access-types.ts';

/** OpenTelemetry traces (`gateway.telemetry.traces`); a key left unset is read from the OTEL_* variables. */
export interface TracesConfig {
  readonly enabled: boolean | undefined;
  /** The OTLP/HTTP traces URL (`.../v1/traces`). */
  readonly endpoint: string | undefined;
  readonly serviceName: string | undefined;
  /** Share of new traces recorded (0-1); a client's sampled flag is followed. */
  readonly sampleRatio: number | undefined;
}

/** `gateway.cluster`: replicas sharing sessions through sealed ids and Redis (docs/scaling.md). */
export interface ClusterConfig {
  /** undefined: the runtime names the replica (host name and a random suffix) once per start. */
  readonly replicaId: string | undefined;
  readonly advertiseUrl: string;
  readonly redis: {
    readonly url: string;
    readonly failMode: 'local' | 'closed';
    readonly keyPrefix: string;
    readonly commandTimeoutMs: number;
    /** ACL user and AUTH password (never logged); `caFile`: the CA of a `rediss://` server. */
    readonly username?: string | undefined;
    readonly password?: string | undefined;
    readonly caFile?: string | undefined;
  };
  /** The first seals; every key opens. */
  readonly keys: readonly string[];
  readonly heartbeatMs: number;
  readonly replicaTtlMs: number;
  readonly forwardConnectTimeoutMs: number;
}

/** `gateway.oauth`: the vault and callback of targets with `oauth.perUser` (docs/upstreams.md). */
export interface GatewayOAuthConfig {
  /** A secret: the vault's keys are derived from it. */
  readonly key: string;
  /** Absolute path of the vault file (without `cluster`). */
  readonly vaultFile: string;
  /** undefined: `auth.publicUrl`, else the address the gateway listens on. */
  readonly publicUrl: string | undefined;
  readonly consentTtlSec: number;
  readonly clientName: string;
}

/** `gateway.pinning` (docs/governance.md): where pins are kept and how many. */
export interface PinningConfig {
  /** Mode of targets that set none. */
  readonly mode: PinMode;
  /** Absolute path of the pins file. */
  readonly file: string;
  readonly maxItems: number;
  readonly maxPending: number;
}

/** `gateway.packages` (docs/upstreams.md): where packages run by `npx`/`uvx` targets are installed. */
export interface PackagesConfig {
  /** Absolute path of the cache folder (the lock file is inside). */
  readonly cacheDir: string;
  /** false: runner commands run as written (the runner downloads at each start). */
  readonly install: boolean;
}

export interface GatewayConfig {
  readonly listen: { readonly host: string; readonly port: number };
  /** Packages of runner targets; absent (a config built in code): runner commands run as written. */
  readonly packages?: PackagesConfig | undefined;
  /** Definition pinning; absent (a config built in code): off for every target. */
  readonly pinning?: PinningConfig | undefined;
  /** undefined: no client authentication. */
  readonly auth?: AuthConfig | undefined;
  /** Step-up scopes per target (only targets that set some); undefined: none anywhere. */
  readonly requiredScopes?: ReadonlyMap<string, RequiredScopesConfig> | undefined;
  /** Token buckets per principal and per principal x tool; undefined: none. */
  readonly rateLimits?: RateLimitsConfig | undefined;
  /** undefined: one process (no replicas, no Redis). */
  readonly cluster?: ClusterConfig | undefined;
  /** undefined: no target may set `oauth`. */
  readonly oauth?: GatewayOAuthConfig | undefined;
  /** undefined: no policy (everyone reaches everything the filters show); else default deny. */
  readonly policy?: { readonly rules: readonly PolicyRule[] } | undefined;
  /**
   * Origins allowed to call (Origin header). `undefined`: only loopback origins
   * (http(s)://localhost|127.0.0.1|[::1] on any port). A request without Origin is allowed.
   */
  readonly allowedOrigins: readonly string[] | undefined;
  /** Browser origins that get CORS headers (and pass the Origin check); empty: CORS off. */
  readonly corsOrigins?: readonly string[];
  /**
   * Host header values allowed (DNS-rebinding protection). `undefined`: when listening on a loopback
   * address only loopback names are accepted; otherwise any Host.
   */
  readonly allowedHosts: readonly string[] | undefined;
  /** What loading a foreign config file (Claude Desktop, VS Code, ...) left out; logged at start. */
  readonly warnings?: readonly string[];
  readonly limits: {
    readonly maxBodyBytes: number;
    readonly maxSessions: number;
    /** Events kept per session for SSE resumption (count and total bytes, whichever is hit first). */
    readonly replayEvents: number;
    readonly replayBytes: number;
    /** Messages held for a standalone GET stream that is not open yet. */
    readonly pendingServerMessages: number;
    /** Time to receive a whole request, headers and body (ms); past it the socket gets 408. */
    readonly requestTimeoutMs: number;
    /** Open downstream connections, in all and per client address (0: no per-address cap). */
    readonly maxConnections: number;
    readonly maxConnectionsPerAddress: number;
    /** Requests in flight per session and in all; past either, GW_OVERLOADED (absent: the schema's defaults). */
    readonly maxInflightPerSession?: number;
    readonly maxInflight?: number;
  };
  readonly session: {
    /** A session with no request for this long is ended and its child killed (ms). */
    readonly idleTtlMs: number;
    /** Interval of SSE keep-alive comments on idle streams (ms). */
    readonly keepAliveMs: number;
    /** Idle TTL of a session whose client never opened a GET stream (ms). */
    readonly shortIdleTtlMs: number;
    /** A session not initialized by then is ended (ms). */
    readonly initDeadlineMs: number;
    /** Un-initialized sessions at once; the oldest is ended to make room. */
    readonly maxUninitialized: number;
    /** A session idle this long may be ended to make room for a new one (ms); never sooner. */
    readonly evictIdleMs: number;
    /** Per-session stdio children at once; sessions idle past evictIdleMs are ended (LRU) to make room. */
    readonly maxChildren: number;
    /** The same, per target. */
    readonly maxChildrenPerTarget: number;
    /** Sessions held for 2026 (stateless) clients: docs/eras.md. */
    readonly stateless: {
      /** Held upstream sessions per endpoint, principal and declared client capabilities. */
      readonly hostsPerCaller: number;
      /** A held session unused this long ends (ms). */
      readonly hostIdleMs: number;
      /** How long an upstream call waits for the input a 2026 client was asked for (ms). */
      readonly inputWaitMs: number;
      /** Open subscriptions/listen streams at once. */
      readonly maxListenStreams: number;
      /** Calls parked on an input_required round per endpoint and principal (mrtr.ts). */
      readonly maxParkedPerCaller: number;
      /** Calls parked on an input_required round in all. */
      readonly maxParked: number;
    };
  };
  readonly websocket: {
    /** Interval of WebSocket pings; a socket that has not answered the previous one is dropped (ms). */
    readonly pingIntervalMs: number;
    /** Unsent bytes a WebSocket may hold before it is closed with 1013 (slow reader). */
    readonly maxBufferedBytes: number;
  };
  /** Remote reachability probes behind /readyz (absent: the schema's defaults). */
  readonly health?: HealthConfig;
  /** On SIGTERM/SIGINT: how long in-flight requests may run before children are killed (ms). */
  readonly shutdownGraceMs: number;
  /** /metrics, /status and /tools (docs/operations.md). Absent: ADMIN_DEFAULTS. */
  readonly admin?: AdminConfig | undefined;
  /** `/v0.1/servers` (http/registry-route.ts). Absent: not served. */
  readonly registry?: { readonly serve: boolean; readonly namespace: string } | undefined;
  /** `audit`: one line per tools/call, prompts/get and resources/read (resolved from "auto"). */
  readonly logging: { readonly level: LogLevel; readonly audit?: boolean };
  /** Targets by name, in config order. */
  readonly targets: ReadonlyMap<string, TargetConfig>;
  /** Aggregate endpoints (`/mcp` over several targets, groups). Absent: the defaults (see aggregateOf). */
  readonly aggregate?: AggregateConfig;
  /** Absent: every telemetry key unset (the OTEL_* variables decide; telemetry/settings.ts). */
  readonly telemetry?: { readonly traces: TracesConfig } | undefined;
  /** The audit trail: set by `gateway.audit`, or by `logging.audit` (the log sink alone); undefined: no records. */
  readonly audit?: AuditConfig | undefined;
}

/** Glob patterns; an empty allow list allows everything, deny wins. */
export interface NameFilterConfig {
  readonly allow: readonly string[];
  readonly deny: readonly string[];
}

/** What may be rewritten on one tool or prompt; an unset field passes the server's value through. */
export interface ItemOverride {
  readonly name?: string | undefined;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  /** Tools only: merged key by key over the server's annotations. */
  readonly annotations?: Readonly<Record<string, string | boolean | undefined>> | undefined;
  /**
   * Other names the item carries, never written in a file: a virtual server's pick of a tool its
   * target's own overrides renamed keeps that name here, so a rule written with it still holds.
   */
  readonly also?: readonly string[] | undefined;
}

/** One target's overrides, keyed by the server's own names (router/overrides.ts applies them). */
export interface OverridesConfig {
  readonly tools: Readonly<Record<string, ItemOverride>>;
  readonly prompts: Readonly<Record<string, ItemOverride>>;
  readonly serverName?: string | undefined;
  readonly instructions?: string | undefined;
}

/** How one target appears behind an aggregate endpoint. */
export interface TargetExposureConfig {
  /** Prefix of its tool and prompt names; '' = bare names. */
  readonly prefix: string;
  /** Open its connection when the session starts instead of on first need. */
  readonly eager: boolean;
  readonly tools: NameFilterConfig;
  readonly prompts: NameFilterConfig;
  /** Applies to resource URIs and template URIs. */
  readonly resources: NameFilterConfig;
  /** How its tools, prompts, serverInfo and instructions look to clients; undefined: as the server gives them. */
  readonly overrides?: OverridesConfig | undefined;
  /** A virtual server's picks (server names; resource globs): only these pass. Undefined: no pick-list. */
  readonly picks?: { readonly tools: readonly string[]; readonly prompts: readonly string[]; readonly resources: readonly string[] } | undefined;
}

/** An endpoint's progressive discovery (config/discovery-schema.ts), when on. */
export interface DiscoveryConfig {
  readonly alwaysVisible: readonly string[];
  readonly maxResults: number;
}

export interface AggregateConfig {
  /** Between prefix and name: `<prefix><separator><name>`. */
  readonly separator: string;
  /** Per-target deadline of a fan-out list (ms). */
  readonly listTimeoutMs: number;
  /** A call to a tool's bare name reaches the one server listing it ("unambiguous"), or fails ("off"). Absent: "unambiguous". */
  readonly bareNames?: 'unambiguous' | 'off';
  /**
   * Progressive discovery per endpoint key (`aggregate:*`, `group:<name>`, `virtual:<name>`): only
   * the endpoints with `mode: "search"` are here. Absent: none.
   */
  readonly discovery?: ReadonlyMap<string, DiscoveryConfig>;
  /** Per target; a target missing here gets `defaultExposure(name)`. */
  readonly exposure: ReadonlyMap<string, TargetExposureConfig>;
  /** Named bundles served at `/groups/<name>/mcp`: the targets each exposes, in config order. */
  readonly groups: ReadonlyMap<string, readonly string[]>;
  /** Virtual servers served at `/virtual/<name>/mcp`: per target, in pick order, how it appears there. Absent: none. */
  readonly virtuals?: ReadonlyMap<string, ReadonlyMap<string, TargetExposureConfig>>;
}

const NO_FILTER: NameFilterConfig = Object.freeze({ allow: Object.freeze([]), deny: Object.freeze([]) });

/** Defaults for a target with no aggregate settings (hand-built configs, tests). */
export function defaultExposure(name: string, eager = false): TargetExposureConfig {
  return { prefix: name, eager, tools: NO_FILTER, prompts: NO_FILTER, resources: NO_FILTER };
}

/** The aggregate settings of a config, with defaults when it has none. */
export function aggregateOf(config: GatewayConfig): AggregateConfig {
  return config.aggregate ?? { separator: '__', listTimeoutMs: 10_000, exposure: new Map(), groups: new Map() };
}
