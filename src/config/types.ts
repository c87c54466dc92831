/**
 * The normalised, frozen configuration every other layer reads. Produced once by `loadConfig`
 * (file or CLI quick mode) after strict validation; nothing mutates it afterwards.
 */

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface TimeoutPolicy {
  /** Per-request deadline towards the upstream (ms). */
  readonly requestMs: number;
  /** A progress notification for the request restarts its deadline. */
  readonly resetOnProgress: boolean;
  /** Hard cap even with progress (ms); 0 = none. */
  readonly maxTotalMs: number;
  /** Deadline of the start-up handshake (spawn + initialize answer), ms; see session/limits.ts. */
  readonly startupMs?: number;
}

/** When a target's circuit opens, and for how long (upstream/circuit-breaker.ts). */
export interface CircuitBreakerPolicy {
  /** Consecutive failed starts that open it; 0: never for this cause. */
  readonly startFailures: number;
  /** Request timeouts within `windowMs` that open it; 0: never for this cause. */
  readonly timeouts: number;
  /** Distinct callers (principals, else sessions) among those timeouts: one caller's never open it. */
  readonly timeoutCallers: number;
  readonly windowMs: number;
  /** Open this long before one probe is let through; doubled per failed probe up to `maxCooldownMs`. */
  readonly cooldownMs: number;
  readonly maxCooldownMs: number;
}

export interface HealthConfig {
  /** How long a remote target's reachability probe is believed (ms). */
  readonly probeCacheMs: number;
  /** A connect slower than this is "unreachable" (ms). */
  readonly probeTimeoutMs: number;
}

export interface RestartPolicy {
  /** What happens to a session whose upstream child exits: end it (next request 404) or restart the child. */
  readonly onExit: 'end' | 'restart';
  /** Restarts allowed per session before it is ended anyway. */
  readonly maxRestarts: number;
  /** First backoff delay (ms), doubled per consecutive failure up to `maxBackoffMs`. */
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
}

/**
 * How sessions get their upstream: a child of their own (`per-session`), or a share of a pool of
 * `children` children multiplexed across sessions (`shared`, for servers without per-client state).
 */
export interface UpstreamSharing {
  readonly mode: 'per-session' | 'shared';
  /** Children in the shared pool (1 when per-session). */
  readonly children: number;
  /** Per-session children kept started and initialized ahead of need (upstream/spares.ts); absent: 0. */
  readonly spares?: number;
}

/** bubblewrap containment of a stdio child (transport/sandbox-args.ts). */
export interface SandboxConfig {
  /** Bound read-write; everything else visible is read-only. */
  readonly writable: readonly string[];
  /** Absent: the whole system, read-only; a list: only these (plus system folders and the command's). */
  readonly readable: readonly string[] | undefined;
  /** Whether the child shares the gateway's network namespace. */
  readonly network: boolean;
}

/** Resource limits of a stdio child and everything it starts; absent keys are not limited. */
export interface LimitsConfig {
  readonly memoryMiB?: number | undefined;
  readonly processes?: number | undefined;
  readonly cpuSeconds?: number | undefined;
  readonly openFiles?: number | undefined;
}

export interface StdioTargetConfig {
  readonly type: 'stdio';
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** Set for the child on top of what it inherits. Values are secrets: never logged. */
  readonly env: Readonly<Record<string, string>>;
  /** Templates (`{sub}`, `{principal}`) set per principal on top of `env`. */
  readonly principalEnv: Readonly<Record<string, string>>;
  /**
   * What the child inherits from the gateway's environment: 'all', or only these names. The default
   * list is minimal so that a secret meant for one server (or for the gateway) reaches no other.
   */
  readonly inheritEnv: 'all' | readonly string[];
  readonly cwd: string | undefined;
  readonly timeouts: TimeoutPolicy;
  readonly restart: RestartPolicy;
  /** How long to wait after closing stdin, and again after SIGTERM, before escalating (ms). */
  readonly shutdownGraceMs: number;
  /** Longest NDJSON line accepted from the child (bytes). */
  readonly maxMessageBytes: number;
  /** Most stderr lines per second passed to the log; the rest are counted and summarised. */
  readonly stderrLinesPerSecond: number;
  /** Whether the child's last stderr lines go into clients' `error.data` (never in shared mode). */
  readonly stderrInErrors?: boolean;
  /** Bytes waiting for a child that is not reading its stdin; past it, GW_UPSTREAM_BUSY. */
  readonly maxQueuedBytes?: number;
  /** Absent: per-session (hand-built configs); the loader always sets it. */
  readonly upstream?: UpstreamSharing;
  /** Absent: the schema's defaults (hand-built configs); the loader always sets it. */
  readonly circuitBreaker?: CircuitBreakerPolicy;
  /** Absent: not sandboxed (docs/security.md "Containment"). */
  readonly sandbox?: SandboxConfig;
  /** Absent: no resource limits. */
  readonly limits?: LimitsConfig;
}

/** A remote upstream: Streamable HTTP (`http`) or legacy HTTP+SSE (`sse`, 2024-11-05). */
/** RFC 8693 token exchange for a remote target (docs/security.md). */
export interface TokenExchangeConfig {
  readonly tokenEndpoint: string;
  readonly clientId: string;
  /** A secret: never logged, never in error data. */
  readonly clientSecret: string;
  readonly audience: string | undefined;
  /** Resource indicator (RFC 8707); the target's url when neither this nor audience is set. */
  readonly resource: string | undefined;
  readonly scope: string | undefined;
  /** Exchanged tokens kept at most (one per principal); least recently used first out. */
  readonly maxCachedTokens: number;
}

export interface RemoteTargetConfig {
  readonly type: 'http' | 'sse';
  readonly name: string;
  /** The MCP endpoint (`http`) or the SSE stream URL (`sse`). */
  readonly url: string;
  /** Sent on every request, names lower-cased. Values are secrets: never logged, never in error data. */
  readonly headers: Readonly<Record<string, string>>;
  /** Send the downstream's own Authorization upstream (it then wins over a configured one). */
  readonly forwardAuthorization: boolean;
  /** Templates (`{sub}`, `{principal}`) sent per principal, names lower-cased. */
  readonly principalHeaders: Readonly<Record<string, string>>;
  /** The caller's token exchanged for the upstream's (RFC 8693); undefined: none. */
  readonly tokenExchange?: TokenExchangeConfig | undefined;
  /** Most connections the target's pooled agent opens; 0 = no cap. */
  readonly maxConnections: number;
  readonly timeouts: TimeoutPolicy;
  /** `onExit` applies when the upstream session is lost (stream unrecoverable, expired with state). */
  readonly restart: RestartPolicy;
  /** Largest JSON body or SSE event accepted from the upstream (bytes). */
  readonly maxMessageBytes: number;
  /**
   * `http` only: the era the upstream speaks. `auto` asks `server/discover` first (docs/eras.md).
   * Absent: `auto` (hand-built configs); the loader always sets it for `http`.
   */
  readonly protocol?: UpstreamProtocol;
  /** Absent: the schema's defaults (hand-built configs); the loader always sets it. */
  readonly circuitBreaker?: CircuitBreakerPolicy;
}

/** Which protocol family a Streamable HTTP target speaks: found out, or fixed by the config. */
export type UpstreamProtocol = 'auto' | '2025' | '2026';

export type TargetConfig = StdioTargetConfig | RemoteTargetConfig;

/** One API key: its principal name, the SHA-256 of the key (lowercase hex) and the scopes it grants. */
export interface ApiKeyConfig {
  readonly name: string;
  readonly sha256: string;
  readonly scopes: readonly string[];
}

export interface JwtConfig {
  readonly issuers: readonly string[];
  readonly jwksUrl: string | undefined;
  /** Least time between two JWKS fetches (s). */
  readonly jwksRefetchSec: number;
  /** The JWKS response's max-age is clamped to [jwksMinCacheSec, jwksMaxCacheSec] (s). */
  readonly jwksMinCacheSec: number;
  readonly jwksMaxCacheSec: number;
  /** Static public keys (JWK objects), when no jwksUrl. */
  readonly keys: readonly Readonly<Record<string, unknown>>[] | undefined;
  readonly algorithms: readonly string[];
  readonly clockSkewSec: number;
  /** Accepted besides the resource URL the client called. */
  readonly audiences: readonly string[];
}

/** Client authentication (docs/security.md). */
export interface AuthConfig {
  readonly anonymous: boolean;
  /** The gateway's public origin; undefined: `http://<Host>` as called. */
  readonly publicUrl: string | undefined;
  readonly apiKeys: readonly ApiKeyConfig[];
  /** Lowercase header name; "authorization" means `Bearer <key>`. */
  readonly apiKeyHeader: string;
  readonly jwt: JwtConfig | undefined;
  /** Scopes every request needs. */
  readonly scopes: readonly string[];
  /** Named in the protected-resource metadata. */
  readonly authorizationServers: readonly string[];
}

export interface BucketConfig {
  readonly perSecond: number;
  readonly burst: number;
}

export interface RateLimitsConfig {
  readonly perPrincipal: BucketConfig | undefined;
  readonly perTool: BucketConfig | undefined;
  readonly maxKeys: number;
}

/** One rule of `gateway.policy`; every list holds globs. */
export interface PolicyRule {
  readonly effect: 'allow' | 'deny';
  readonly principals: readonly string[];
  readonly scopes: readonly string[];
  /** Token claims the caller must carry: name -> globs, one of which a value must match. */
  readonly claims: Readonly<Record<string, readonly string[]>>;
  readonly servers: readonly string[];
  readonly tools: readonly string[];
  readonly prompts: readonly string[];
  readonly resources: readonly string[];
}

/** OpenTelemetry traces (`gateway.telemetry.traces`); a key left unset is read from the OTEL_* variables. */
export interface TracesConfig {
  readonly enabled: boolean | undefined;
  /** The OTLP/HTTP traces URL (`.../v1/traces`). */
  readonly endpoint: string | undefined;
  readonly serviceName: string | undefined;
  /** Share of new traces recorded (0-1); a client's sampled flag is followed. */
  readonly sampleRatio: number | undefined;
}

export interface GatewayConfig {
  readonly listen: { readonly host: string; readonly port: number };
  /** undefined: no client authentication. */
  readonly auth?: AuthConfig | undefined;
  /** Token buckets per principal and per principal x tool; undefined: none. */
  readonly rateLimits?: RateLimitsConfig | undefined;
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
}

/** Glob patterns; an empty allow list allows everything, deny wins. */
export interface NameFilterConfig {
  readonly allow: readonly string[];
  readonly deny: readonly string[];
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
}

export interface AggregateConfig {
  /** Between prefix and name: `<prefix><separator><name>`. */
  readonly separator: string;
  /** Per-target deadline of a fan-out list (ms). */
  readonly listTimeoutMs: number;
  /** Per target; a target missing here gets `defaultExposure(name)`. */
  readonly exposure: ReadonlyMap<string, TargetExposureConfig>;
  /** Named bundles served at `/groups/<name>/mcp`: the targets each exposes, in config order. */
  readonly groups: ReadonlyMap<string, readonly string[]>;
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

/** The operator's pages (`gateway.admin`): see docs/configuration.md. */
export interface AdminConfig {
  readonly metrics: boolean;
  readonly status: boolean;
  /** With gateway.auth: the scope a credential needs for these pages. */
  readonly scope: string;
  /** Without gateway.auth: served beyond a loopback listener too. */
  readonly exposeWithoutAuth: boolean;
  readonly maxLabelValues: number;
  readonly recentErrors: number;
  readonly maxStatusStreams: number;
}

/** What `gateway.admin: {}` means (and a config built in code without it). */
export const ADMIN_DEFAULTS: AdminConfig = Object.freeze({
  metrics: true,
  status: true,
  scope: 'switchboard:admin',
  exposeWithoutAuth: false,
  maxLabelValues: 64,
  recentErrors: 50,
  maxStatusStreams: 8,
});
