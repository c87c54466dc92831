/**
 * What one configured upstream (a target: `mcpServers.<name>`) is, after normalisation: stdio or
 * remote, with its timeouts, restarts, sharing, containment, circuit breaker and identity. Split
 * from types.ts, which re-exports everything here.
 */
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

/**
 * The package a runner target (`npx`, `bunx`, `uvx`, `pipx run`) runs from the gateway's cache
 * (transport/package-cache.ts): set by the gateway at start and reload, never in the file.
 */
export interface PackageRun {
  /** The runner as written (`npx`...) and the package asked for, `name@range`. */
  readonly runner: string;
  readonly spec: string;
  /** The exact version installed; absent when not installed. */
  readonly version?: string | undefined;
  /** The installed package's folder: bound read-only in the sandbox. */
  readonly dir?: string | undefined;
  /** Why the target cannot start (the installer's error, a missing runner); the target is refused. */
  readonly error?: string | undefined;
}

/** Resource limits of a stdio child and everything it starts; absent keys are not limited. */
export interface LimitsConfig {
  readonly memoryMiB?: number | undefined;
  readonly processes?: number | undefined;
  readonly cpuSeconds?: number | undefined;
  readonly openFiles?: number | undefined;
}

/** What a changed tool, prompt or resource template definition gets (docs/governance.md). */
export type PinMode = 'off' | 'warn' | 'block';

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
  /** Definition pinning for this target (docs/governance.md); absent: off. */
  readonly pinning?: PinMode | undefined;
  /** Absent: not sandboxed (docs/security.md "Containment"). */
  readonly sandbox?: SandboxConfig;
  /** Absent: no resource limits. */
  readonly limits?: LimitsConfig;
  /** Set when the command is a package runner run from the cache (command and args then name the entry point). */
  readonly package?: PackageRun;
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

/** `mcpServers.<name>.oauth`: each principal's own account at the upstream (docs/upstreams.md). */
export interface UserOAuthConfig {
  readonly perUser: true;
  /** undefined: what the upstream asks for. */
  readonly scopes: readonly string[] | undefined;
  readonly clientId: string | undefined;
  /** A secret: never logged, never in error data. */
  readonly clientSecret: string | undefined;
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
  /** Each principal's own upstream account (the gateway as their OAuth client); undefined: none. */
  readonly oauth?: UserOAuthConfig | undefined;
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
  /** Definition pinning for this target (docs/governance.md); absent: off. */
  readonly pinning?: PinMode | undefined;
}

/** Which protocol family a Streamable HTTP target speaks: found out, or fixed by the config. */
export type UpstreamProtocol = 'auto' | '2025' | '2026';

/** One HTTP hook of a target (`mcpServers.<name>.hooks[]`, session/hooks/). */
export interface HookConfig {
  readonly url: string;
  /** Method globs the hook is asked about. */
  readonly methods: readonly string[];
  readonly phase: 'request' | 'response' | 'both';
  readonly timeoutMs: number;
  /** What a hook that fails or times out means: pass the message on (`open`) or refuse it (`closed`). */
  readonly failureMode: 'open' | 'closed';
  /** HMAC-SHA256 key of the signature header; a secret: never logged, never in error data. */
  readonly secret?: string | undefined;
  readonly maxConcurrent: number;
  readonly maxAnswerBytes: number;
}

/** The built-in redaction of tool results (`mcpServers.<name>.redact`). */
export interface RedactConfig {
  /** The built-in patterns (private keys, cloud keys, tokens). */
  readonly secrets: boolean;
  /** The operator's own regular expressions. */
  readonly patterns: readonly string[];
  readonly marker: string;
}

/** The guardrails of a target; both absent (hand-built configs) or empty: none. */
export interface Guardrails {
  readonly hooks?: readonly HookConfig[];
  readonly redact?: RedactConfig | undefined;
}

export type TargetConfig = (StdioTargetConfig | RemoteTargetConfig) & Guardrails;
