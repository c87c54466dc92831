/**
 * The config file's schema: strict (an unknown key is an error at every level we own), with every
 * default and the reason for it written next to it. docs/configuration.md mirrors this file.
 *
 * Input is the document after environment interpolation, so wherever a number or a boolean is
 * expected the schema also accepts its spelling as a string ("8080", "true"): that is how values
 * reach us from `${VAR}`.
 */
import { z } from 'zod';
import { authSchema, policySchema, rateLimitsSchema, scope } from './auth-schema.ts';
import { telemetrySchema } from './telemetry-schema.ts';
import type { LogLevel } from './types.ts';

/** setTimeout fires at once (with a warning) above 2^31-1 ms, so no duration may exceed it (~24.8 days). */
export const MAX_DURATION_MS = 2_147_483_647;
const MiB = 1024 * 1024;

/** Target names appear in URL paths (`/servers/<name>/mcp`): keep them to one safe path segment. */
export const TARGET_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const satisfies readonly LogLevel[];

// ---------------------------------------------------------------------------------------------
// Leaves

const fromDigits = (value: unknown): unknown => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value);
const fromBooleanWord = (value: unknown): unknown => (value === 'true' ? true : value === 'false' ? false : value);
/** YAML turns `--port 3000` into a number and `DEBUG: true` into a boolean; a child only sees strings. */
const fromScalar = (value: unknown): unknown =>
  (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean' ? String(value) : value;

function integer(min: 0 | 1, max: number) {
  const bounded = max !== Number.MAX_SAFE_INTEGER && max !== MAX_DURATION_MS;
  const expected = bounded
    ? `expected an integer from ${min} to ${max}`
    : min === 0
      ? 'expected a non-negative integer'
      : 'expected a positive integer';
  const tooBig =
    max === MAX_DURATION_MS ? `must be at most ${MAX_DURATION_MS} (about 24.8 days, the longest timer Node.js supports)` : expected;
  return z.preprocess(fromDigits, z.int({ error: expected }).min(min, { error: expected }).max(max, { error: tooBig }));
}
const positive = (max: number = Number.MAX_SAFE_INTEGER) => integer(1, max);
const nonNegative = (max: number = Number.MAX_SAFE_INTEGER) => integer(0, max);
const boolean = () => z.preprocess(fromBooleanWord, z.boolean({ error: 'expected true or false' }));
const nonEmptyString = () => z.string({ error: 'expected a string' }).min(1, { error: 'must not be empty', abort: true });
const scalarString = () => z.preprocess(fromScalar, z.string({ error: 'expected a string' }));

const anObject = { error: 'expected an object' } as const;

const envName = z
  .string()
  .regex(/^[^=\0]+$/, { error: 'environment variable names must be non-empty and contain no "=" or NUL' });

/**
 * A serialised origin as browsers send it: scheme, host, optional port; no path, no trailing slash.
 * `*` allows any origin (the HTTP layer's guard understands it); an explicit, visible choice.
 */
const origin = z.string({ error: 'expected a string' }).refine(
  (value) => {
    if (value === '*') return true;
    try {
      return new URL(value).origin === value;
    } catch {
      return false;
    }
  },
  { error: 'expected an origin such as https://app.example.com (scheme, host, optional port; no path or trailing slash) or "*"' },
);

/** A Host header value: a name or address with an optional port. */
const hostHeader = nonEmptyString().regex(/^[^\s/@]+$/, { error: 'expected a host name with an optional port, such as example.com:8080' });

// ---------------------------------------------------------------------------------------------
// Servers (`mcpServers.<name>`)

/** A tools/prompts/resources filter: glob lists; an empty allow list allows everything. */
const filterSchema = () =>
  z
    .strictObject(
      {
        /** []: everything is exposed unless denied; a filter is an explicit narrowing. */
        allow: z.array(nonEmptyString(), { error: 'expected a list of glob patterns' }).default([]),
        /** []: nothing is hidden. Deny wins over allow. */
        deny: z.array(nonEmptyString(), { error: 'expected a list of glob patterns' }).default([]),
      },
      anObject,
    )
    .prefault({});

/** How a server appears behind an aggregate endpoint (`/mcp` with several servers, groups). */
function aggregateExposure() {
  return {
    /**
     * Unset: the server's name. "" exposes names bare ("no prefix" mode; a name two servers share
     * is then kept for the first in config order and reported). Same character set as names.
     */
    prefix: z.string({ error: 'expected a string' }).regex(/^(?:[A-Za-z0-9][A-Za-z0-9_-]{0,63})?$/, {
      error: 'invalid prefix: use "" or 1-64 letters, digits, "_" or "-", starting with a letter or digit',
    }).optional(),
    /** Unset: `gateway.aggregate.eager`. */
    eager: boolean().optional(),
    tools: filterSchema(),
    prompts: filterSchema(),
    /** Globs on resource URIs (and on templates' uriTemplate), as the server sends them. */
    resources: filterSchema(),
  };
}

/**
 * The target's circuit breaker (upstream/circuit-breaker.ts, docs/upstreams.md): a target that
 * keeps failing is not started (spawned, dialled) for every new session or request, and clients
 * learn why at once instead of after a start-up timeout each.
 */
const circuitBreakerSchema = z.strictObject(
  {
    /**
     * 5 consecutive failed starts: more than one session's own restarts (`maxRestarts` 3) of a
     * flaky server, few enough that a missing command is not spawned for every request.
     * 0 disables this trigger.
     */
    startFailures: nonNegative().default(5),
    /**
     * 5 request timeouts within `windowMs`: a hung server times out every call, a slow tool now
     * and then does not. 0 disables this trigger.
     */
    timeouts: nonNegative().default(5),
    /** 60 s: the window the timeouts are counted in. */
    windowMs: positive(MAX_DURATION_MS).default(60_000),
    /** 10 s open before one probe is let through: no spawn loop, and a fixed server is back soon. */
    cooldownMs: positive(MAX_DURATION_MS).default(10_000),
    /** 5 min: each failed probe doubles the cooldown up to this. */
    maxCooldownMs: positive(MAX_DURATION_MS).default(300_000),
  },
  anObject,
);

/** Keys every upstream kind shares: the Claude Desktop `disabled` flag and the request deadlines. */
const upstreamCommon = {
  /** Claude Desktop / Cline convention: keep the entry but do not serve it. */
  disabled: boolean().default(false),
  /**
   * 5 minutes. Tool calls that run builds, browse or query large stores routinely take minutes;
   * this still bounds a hung server. The MCP spec asks for a timeout on every request
   * (basic/lifecycle, "Timeouts").
   */
  timeoutMs: positive(MAX_DURATION_MS).default(300_000),
  /** true: a server that reports progress is alive; the spec allows resetting the clock on progress. */
  resetTimeoutOnProgress: boolean().default(true),
  /**
   * 0 = no cap beyond `timeoutMs` between progress notifications. Off by default so long jobs that
   * report progress are not cut; set it to honour the spec's "SHOULD enforce a maximum timeout".
   */
  maxTotalTimeoutMs: nonNegative(MAX_DURATION_MS).default(0),
  /**
   * 10 s: the start-up handshake (spawn + initialize answer) gets its own deadline, below the
   * Inspector's 15 s connect timeout, so a hung or non-MCP server is reported to the client before
   * it gives up. Raise it for servers that download or build themselves on first start (`npx -y`).
   */
  startupTimeoutMs: positive(MAX_DURATION_MS).default(10_000),
  circuitBreaker: circuitBreakerSchema.prefault({}),
  ...aggregateExposure(),
};

export const stdioServerSchema = z.strictObject({
  type: z.literal('stdio'),
  command: nonEmptyString(),
  args: z.array(scalarString(), { error: 'expected a list of strings' }).default([]),
  /** Set for the child on top of what it inherits (see inheritEnv). */
  env: z.record(envName, scalarString(), { error: 'expected an object of strings' }).default({}),
  /**
   * {}: none. Per-principal variables for the child: `{sub}` and `{principal}` in a value become
   * the caller's subject and id (gateway.auth), so each principal gets a child of its own.
   */
  principalEnv: z.record(envName, scalarString(), { error: 'expected an object of strings' }).default({}),
  /**
   * What the child inherits of the gateway's environment. Default: only DEFAULT_INHERITED_ENV (as
   * the MCP SDK does), so a secret interpolated for one server reaches no other; `true`: all of it;
   * a list: those names on top of the default ones.
   */
  inheritEnv: z.union([boolean(), z.array(envName, { error: 'expected true, false or a list of names' })]).default(false),
  /** Relative paths are resolved against the config file's folder (see load.ts). */
  cwd: nonEmptyString().optional(),
  ...upstreamCommon,
  /**
   * "end": restarting a stateful server silently loses its state (open resources, subscriptions),
   * so by default the session ends and the client re-initialises knowingly.
   */
  onExit: z.enum(['end', 'restart'], { error: 'expected "end" or "restart"' }).default('end'),
  /** 3: enough to ride out a flaky start, few enough that a crash loop ends quickly. */
  maxRestarts: nonNegative().default(3),
  /** 2 s, as the MCP TypeScript SDK waits between closing stdin, SIGTERM and SIGKILL. */
  shutdownGraceMs: nonNegative(MAX_DURATION_MS).default(2_000),
  /** 32 MiB: a base64 image or a large resource fits; a runaway line cannot exhaust memory. */
  maxMessageBytes: positive().default(32 * MiB),
  /** 50/s: a chatty server cannot flood the log; 0 drops stderr (still counted). */
  stderrLinesPerSecond: nonNegative().default(50),
  /**
   * false: stderr often prints environment values, paths and request text, so clients get the
   * exit code and a correlation id, and the lines go to the log. Opt in per target when its stderr
   * is known to be safe for every client. Never in shared mode (see checkStderrInErrors).
   */
  stderrInErrors: boolean().default(false),
  /**
   * 16 MiB waiting for a child that is not reading its stdin: one request of the largest body a
   * downstream may send. Past it requests fail at once with GW_UPSTREAM_BUSY instead of growing
   * the gateway's memory; a lone message is always taken.
   */
  maxQueuedBytes: positive().default(16 * MiB),
  upstream: z
    .strictObject(
      {
        /**
         * "per-session": a server may keep state per client (open files, subscriptions, log level,
         * roots); only a child of its own keeps one client's state from another's. Sharing is an
         * explicit choice for servers known to be stateless.
         */
        mode: z.enum(['per-session', 'shared'], { error: 'expected "per-session" or "shared"' }).default('per-session'),
        /** 1: one child serves many sessions (a small server is rarely the bottleneck); at most 64. Shared mode only. */
        children: positive(64).default(1),
      },
      anObject,
    )
    .prefault({}),
});

/** An absolute http(s) URL without credentials in it (they belong in `headers`, which are redacted). */
const remoteUrl = nonEmptyString().refine(
  (value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
    } catch {
      return false;
    }
  },
  { error: 'expected an absolute http:// or https:// URL without user:password@' },
);

/**
 * Headers the transport itself owns (framing, MCP session and version, resumption): a configured
 * value would break the protocol, so they are refused rather than silently overridden.
 */
export const RESERVED_UPSTREAM_HEADERS = [
  'accept', 'connection', 'content-length', 'content-type', 'host', 'keep-alive', 'last-event-id',
  'mcp-protocol-version', 'mcp-session-id', 'transfer-encoding', 'upgrade',
] as const;
const headerName = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { error: 'header names are HTTP tokens (letters, digits and !#$%&\'*+.^_`|~-)' })
  .refine((name) => !(RESERVED_UPSTREAM_HEADERS as readonly string[]).includes(name.toLowerCase()), {
    error: 'this header is set by the gateway itself',
  });
/** No CR, LF or NUL: a header value must not be able to inject another header. */
const headerValue = scalarString().refine((value) => !/[\r\n\0]/.test(value), { error: 'header values must not contain CR, LF or NUL' });

/** Keys of both remote kinds (`http`, `sse`). */
const remoteCommon = {
  url: remoteUrl,
  /** Sent on every request to this server (`${ENV}` interpolated). Values are secrets: never logged. */
  headers: z
    .record(headerName, headerValue, { error: 'expected an object of strings' })
    .refine((headers) => new Set(Object.keys(headers).map((k) => k.toLowerCase())).size === Object.keys(headers).length, {
      error: 'a header is given twice (names are case-insensitive)',
    })
    .default({}),
  /**
   * false: the gateway is the downstream's audience, not the upstream's; passing its token on would
   * be token passthrough, which the MCP authorization spec forbids (Security Best Practices).
   */
  forwardAuthorization: boolean().default(false),
  /** {}: none. Per-principal headers: `{sub}` and `{principal}` in a value become the caller's subject and id. */
  principalHeaders: z.record(headerName, headerValue, { error: 'expected an object of strings' }).default({}),
  /**
   * 0 = no cap. Every session of the target holds one connection for its GET stream for as long
   * as it lives, so any fixed cap below sessions x (1 + concurrent requests) queues requests
   * behind streams; set it when the upstream limits its clients.
   */
  maxConnections: nonNegative().default(0),
  ...upstreamCommon,
  /**
   * "end": the upstream session is gone (its stream could not be recovered, or it expired holding
   * state); a new one would silently lose that state, so the client re-initialises knowingly.
   */
  onExit: z.enum(['end', 'restart'], { error: 'expected "end" or "restart"' }).default('end'),
  /** 3: as for stdio, rides out a blip without looping on a dead server. */
  maxRestarts: nonNegative().default(3),
  /** 32 MiB, as for stdio: one JSON body or one SSE event. */
  maxMessageBytes: positive().default(32 * MiB),
};

/** Streamable HTTP (2025-03-26 and later). */
export const httpServerSchema = z.strictObject({ type: z.literal('http'), ...remoteCommon });
/** Legacy HTTP+SSE (2024-11-05). */
export const sseServerSchema = z.strictObject({ type: z.literal('sse'), ...remoteCommon });

const serverVariants = z.discriminatedUnion('type', [stdioServerSchema, httpServerSchema, sseServerSchema], {
  error: 'expected an object',
});

/**
 * `type` is optional in the Claude Desktop shape: an entry without one is a stdio server, unless it
 * has a `url` (the Cursor / VS Code shape), which makes it Streamable HTTP. `streamable-http` is the
 * spelling some clients write for `http`.
 */
const withDefaultType = (value: unknown): unknown => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  if (!('type' in value)) return { type: 'url' in value ? 'http' : 'stdio', ...value };
  return value.type === 'streamable-http' ? { ...value, type: 'http' } : value;
};

export const serverSchema = z.preprocess(withDefaultType, serverVariants);

export type ServerEntry = z.output<typeof serverSchema>;

// ---------------------------------------------------------------------------------------------
// Gateway (`gateway`)

const limitsSchema = z.strictObject({
  /** 16 MiB: room for large tool arguments (file contents, images) without unbounded buffering. */
  maxBodyBytes: positive().default(16 * MiB),
  /** 1000: each session may own child processes; cap them before the machine runs out. */
  maxSessions: positive().default(1_000),
  /** 512 events / 8 MiB per session for SSE resumption: a reconnect after a short drop loses nothing. 0 disables. */
  replayEvents: nonNegative().default(512),
  replayBytes: nonNegative().default(8 * MiB),
  /** 256: server-to-client messages held until the client opens its GET stream; 0 drops them. */
  pendingServerMessages: nonNegative().default(256),
  /**
   * 30 s to receive a whole request, headers and body: a 16 MiB body fits on a slow link, and a
   * client that starts a request and never finishes it (slowloris) loses its socket with a 408.
   * Answers may take as long as they take: this bounds only what the client sends.
   */
  requestTimeoutMs: positive(MAX_DURATION_MS).default(30_000),
  /** 4096 open connections in all: well inside a default descriptor limit, above maxSessions' needs. */
  maxConnections: positive().default(4_096),
  /**
   * 1024 per client address: one client cannot take every connection. Behind a proxy every client
   * shares the proxy's address: raise it there, or set 0 (no per-address cap).
   */
  maxConnectionsPerAddress: nonNegative().default(1_024),
  /**
   * 256 requests in flight per session: room for a client that fans out a hundred calls at once
   * (agents, batch jobs), while it takes 16 such sessions to fill `maxInflight`. Over it: 503
   * GW_OVERLOADED.
   */
  maxInflightPerSession: positive().default(256),
  /**
   * 4096 requests in flight in all: each holds an entry upstream and a response stream here, so
   * the gateway's memory under a burst stays bounded; above what 1000 sessions use in practice.
   */
  maxInflight: positive().default(4_096),
}, anObject);

/** Sessions the gateway holds for 2026 clients (docs/eras.md). */
const statelessSchema = z.strictObject({
  /**
   * 4 per endpoint, principal and declared client capabilities: each is one upstream session (for a
   * stdio target, one child), and a call that may ask the client for input holds one alone.
   */
  hostsPerCaller: positive().default(4),
  /** 60 s: a burst of stateless calls reuses its upstream session; a quiet caller's child goes soon. */
  hostIdleMs: positive(MAX_DURATION_MS).default(60_000),
  /** 120 s: time for a person to answer an elicitation; the waiting upstream call is cancelled after it. */
  inputWaitMs: positive(MAX_DURATION_MS).default(120_000),
  /** 256 open `subscriptions/listen` streams: each holds a connection and keeps an upstream session open. */
  maxListenStreams: positive().default(256),
}, anObject);

const sessionSchema = z.strictObject({
  /** 30 minutes: a client that went away without DELETE should not keep children alive for long. */
  idleTtlMs: positive(MAX_DURATION_MS).default(1_800_000),
  /** 15 s: below the 30-60 s idle timeouts of common proxies and load balancers. */
  keepAliveMs: positive(MAX_DURATION_MS).default(15_000),
  // Bounds on abandoned and never-used sessions (src/session/limits.ts).
  /**
   * 5 minutes: a client that never opened a GET stream (one session per command, SDK close()
   * without DELETE) rarely comes back; if it does, it gets 404 and re-initializes as the spec intends.
   */
  shortIdleTtlMs: positive(MAX_DURATION_MS).default(300_000),
  /** 10 s: a WebSocket or legacy SSE session that has sent no initialize by then holds a slot for nothing. */
  initDeadlineMs: positive(MAX_DURATION_MS).default(10_000),
  /** 64: un-initialized sessions at once; beyond it the oldest is ended, so idle sockets cannot fill maxSessions. */
  maxUninitialized: positive().default(64),
  /**
   * 32 per-session stdio children at once (a Node server takes 50-100 MiB): when a new session
   * needs room, the least recently used idle session is ended first.
   */
  maxChildren: positive().default(32),
  /** 16: one heavy server (a browser, a language server) cannot take the whole budget of children. */
  maxChildrenPerTarget: positive().default(16),
  /** How 2026-07-28 (stateless) requests are served on 2025 upstreams (src/session/stateless/). */
  stateless: statelessSchema.prefault({}),
}, anObject);

/** WebSocket downstreams (`/servers/<name>/ws`); see docs/downstreams.md. */
const websocketSchema = z.strictObject({
  /**
   * 15 s, as session.keepAliveMs: a ping this often keeps proxies with 30-60 s idle timeouts from
   * cutting a quiet socket, and a peer that misses one pong is known dead within two intervals.
   */
  pingIntervalMs: positive(MAX_DURATION_MS).default(15_000),
  /**
   * 16 MiB, as the cap on an SSE stream's unsent bytes: a large tool result fits, but a reader that
   * stopped reading cannot make the gateway buffer without bound (the socket is closed with 1013).
   */
  maxBufferedBytes: positive().default(16 * MiB),
}, anObject);

/** Readiness (`/readyz`) and the per-target health snapshot (upstream/target-health.ts). */
const healthSchema = z.strictObject({
  /**
   * 10 s: a remote target's reachability (a TCP connect to its URL's host and port) is probed when
   * health is asked for and kept this long, so a load balancer polling /readyz every second costs
   * one connect per target per 10 s. stdio targets are never started to answer it.
   */
  probeCacheMs: positive(MAX_DURATION_MS).default(10_000),
  /** 2 s: a connect that takes longer counts as unreachable; only a target's first probe is waited for. */
  probeTimeoutMs: positive(MAX_DURATION_MS).default(2_000),
}, anObject);

const aggregateSchema = z.strictObject({
  /**
   * "__": inside both the spec's tool name set (A-Z a-z 0-9 _ - .) and the stricter
   * `^[a-zA-Z0-9_-]{1,64}$` model APIs enforce, which rejects ".".
   */
  separator: z.string({ error: 'expected a string' }).regex(/^[A-Za-z0-9_-]{1,8}$/, {
    error: 'expected 1-8 letters, digits, "_" or "-" (characters every client accepts in a tool name)',
  }).default('__'),
  /** false: a session starts a server when it first needs it, so unused servers cost nothing. */
  eager: boolean().default(false),
  /** 10 s: a slow server is left out of a merged list rather than holding up the others. */
  listTimeoutMs: positive(MAX_DURATION_MS).default(10_000),
}, anObject);

/** The operator's pages: /metrics, /status (with /status/events) and /tools; see docs/operations.md. */
const adminSchema = z.strictObject({
  /** true: Prometheus metrics at /metrics (collection costs no more than noise in `npm run bench`). */
  metrics: boolean().default(true),
  /** true: the status page at /status, its live updates at /status/events, and the tool listing at /tools. */
  status: boolean().default(true),
  /** With gateway.auth: the scope a credential needs for these pages (clients calling tools need not have it). */
  scope: scope.default('switchboard:admin'),
  /**
   * false: without gateway.auth the pages are served only while the gateway listens on loopback;
   * they name sessions, principals and tools, which is for the operator, not for the network.
   */
  exposeWithoutAuth: boolean().default(false),
  /** 64 distinct values per metric label (tool, target, method, endpoint, code); later ones count as "other". */
  maxLabelValues: positive(10_000).default(64),
  /** 50 recent errors on the status page (oldest dropped). */
  recentErrors: positive(1_000).default(50),
  /** 8 live /status/events readers at once; one more gets 503. */
  maxStatusStreams: positive(100).default(8),
}, anObject);

const groupName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, {
  error: 'invalid group name: use 1-64 letters, digits, "_" or "-", starting with a letter or digit (it becomes a URL path segment)',
});

const groupSchema = z.strictObject({
  servers: z.array(nonEmptyString(), { error: 'expected a list of server names' }).min(1, { error: 'a group needs at least one server' }),
}, anObject);

const loggingSchema = z.strictObject({
  level: z.enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  /**
   * "auto": an audit line per tool call, prompt get and resource read when gateway.auth is on (there
   * is then someone to hold to account), none otherwise (a line per call costs on the hot path).
   */
  audit: z.enum(['auto', 'on', 'off'], { error: 'expected "auto", "on" or "off"' }).default('auto'),
}, anObject);

export const gatewaySchema = z.strictObject({
  /**
   * Loopback only: the MCP Streamable HTTP transport says local servers SHOULD bind to localhost.
   * Exposing the gateway is a decision the operator makes explicitly.
   */
  host: nonEmptyString().default('127.0.0.1'),
  /** 8080: the conventional unprivileged HTTP port. 0 picks a free port. */
  port: integer(0, 65_535).default(8080),
  /** Unset: loopback origins only (DNS-rebinding protection the transport spec requires). */
  allowedOrigins: z.array(origin, { error: 'expected a list of origins' }).optional(),
  /**
   * [] (off): browsers may not read the gateway's answers. Origins listed here get CORS headers and
   * preflight answers, and pass the Origin check too. "*" is allowed but never a default: with no
   * client authentication it lets any web page the user visits call every tool.
   */
  corsOrigins: z.array(origin, { error: 'expected a list of origins' }).default([]),
  /** Unset: loopback names only when bound to loopback, any Host otherwise. */
  allowedHosts: z.array(hostHeader, { error: 'expected a list of host names' }).optional(),
  /** Unset: no client authentication. See docs/security.md. */
  auth: authSchema.optional(),
  /** Unset: every caller reaches every server and name its filters show. See docs/security.md. */
  policy: policySchema.optional(),
  /** Unset: no rate limits. */
  rateLimits: rateLimitsSchema.optional(),
  limits: limitsSchema.prefault({}),
  session: sessionSchema.prefault({}),
  websocket: websocketSchema.prefault({}),
  health: healthSchema.prefault({}),
  /** 10 s: in-flight calls get time to finish, within the 30 s a container orchestrator usually allows. */
  shutdownGraceMs: nonNegative(MAX_DURATION_MS).default(10_000),
  logging: loggingSchema.prefault({}),
  /** Unset: no key set, so the standard OTEL_* variables decide (docs/operations.md, "Traces"). */
  telemetry: telemetrySchema.optional(),
  aggregate: aggregateSchema.prefault({}),
  admin: adminSchema.prefault({}),
  /** {}: no curated bundles; `/mcp` serves every server. */
  groups: z.record(groupName, groupSchema, { error: 'expected an object of groups by name' }).default({}),
}, anObject);

// ---------------------------------------------------------------------------------------------
// The document

const targetName = z.string().regex(TARGET_NAME_PATTERN, {
  error: 'invalid server name: use 1-64 letters, digits, "_" or "-", starting with a letter or digit (it becomes a URL path segment)',
});

export const configFileSchema = z
  .strictObject(
    {
      /** The shape Claude Desktop, Cursor and Cline use, so existing files work unchanged. */
      mcpServers: z.record(targetName, serverSchema, { error: 'expected an object of servers by name' }),
      gateway: gatewaySchema.prefault({}),
    },
    { error: 'expected an object with an "mcpServers" key' },
  )
  .superRefine((config, ctx) => {
    if (!Object.values(config.mcpServers).some((server) => !server.disabled)) {
      ctx.addIssue({ code: 'custom', path: ['mcpServers'], message: 'at least one enabled server is required' });
    }
    checkAggregate(config, ctx);
    checkStderrInErrors(config.mcpServers, ctx);
  });

export type ConfigFile = z.output<typeof configFileSchema>;

/** A shared child's stderr mixes every session's traffic: it must never reach one session's errors. */
function checkStderrInErrors(servers: Record<string, ServerEntry>, ctx: z.RefinementCtx): void {
  for (const [name, server] of Object.entries(servers)) {
    if (server.type === 'stdio' && server.stderrInErrors && server.upstream.mode === 'shared') {
      ctx.addIssue({
        code: 'custom',
        path: ['mcpServers', name, 'stderrInErrors'],
        message: 'cannot be true with upstream.mode "shared": a shared child\'s stderr carries every session\'s traffic',
      });
    }
  }
}

/** Group members must exist; two servers must not share a (non-empty) prefix. */
function checkAggregate(config: { mcpServers: Record<string, ServerEntry>; gateway: z.output<typeof gatewaySchema> }, ctx: z.RefinementCtx): void {
  for (const [name, group] of Object.entries(config.gateway.groups)) {
    group.servers.forEach((server, i) => {
      if (!Object.hasOwn(config.mcpServers, server)) {
        ctx.addIssue({ code: 'custom', path: ['gateway', 'groups', name, 'servers', i], message: `unknown server "${server}"` });
      }
    });
  }
  const byPrefix = new Map<string, string>();
  for (const [name, server] of Object.entries(config.mcpServers)) {
    if (server.disabled) continue;
    const prefix = server.prefix ?? name;
    if (prefix === '') continue;
    const other = byPrefix.get(prefix);
    if (other !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['mcpServers', name, 'prefix'],
        message: `servers "${other}" and "${name}" would both expose their names under the prefix "${prefix}"`,
      });
    } else byPrefix.set(prefix, name);
  }
}
