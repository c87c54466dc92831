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
}

export interface StdioTargetConfig {
  readonly type: 'stdio';
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** Set for the child on top of what it inherits. Values are secrets: never logged. */
  readonly env: Readonly<Record<string, string>>;
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
  /** Absent: per-session (hand-built configs); the loader always sets it. */
  readonly upstream?: UpstreamSharing;
}

export type TargetConfig = StdioTargetConfig;

export interface GatewayConfig {
  readonly listen: { readonly host: string; readonly port: number };
  /**
   * Origins allowed to call (Origin header). `undefined`: only loopback origins
   * (http(s)://localhost|127.0.0.1|[::1] on any port). A request without Origin is allowed.
   */
  readonly allowedOrigins: readonly string[] | undefined;
  /**
   * Host header values allowed (DNS-rebinding protection). `undefined`: when listening on a loopback
   * address only loopback names are accepted; otherwise any Host.
   */
  readonly allowedHosts: readonly string[] | undefined;
  readonly limits: {
    readonly maxBodyBytes: number;
    readonly maxSessions: number;
    /** Events kept per session for SSE resumption (count and total bytes, whichever is hit first). */
    readonly replayEvents: number;
    readonly replayBytes: number;
    /** Messages held for a standalone GET stream that is not open yet. */
    readonly pendingServerMessages: number;
  };
  readonly session: {
    /** A session with no request for this long is ended and its child killed (ms). */
    readonly idleTtlMs: number;
    /** Interval of SSE keep-alive comments on idle streams (ms). */
    readonly keepAliveMs: number;
  };
  /** On SIGTERM/SIGINT: how long in-flight requests may run before children are killed (ms). */
  readonly shutdownGraceMs: number;
  readonly logging: { readonly level: LogLevel };
  /** Targets by name, in config order. */
  readonly targets: ReadonlyMap<string, TargetConfig>;
}
