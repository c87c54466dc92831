/**
 * The schema of one server entry (`mcpServers.<name>`): stdio, Streamable HTTP and legacy SSE, the
 * keys they share, and their filters (the remote-only keys: remote-schema.ts). Strict like the rest
 * of the config (schema.ts), every default with its reason.
 */
import { z } from 'zod';
import { containmentKeys } from './containment-schema.ts';
import { requiredScopesSchema } from './step-up-schema.ts';
import { guardrailKeys } from './hooks-schema.ts';
import { overridesSchema } from './overrides-schema.ts';
import { authorizationClash, oneAuthorization, remoteConnectionKeys, remoteLifeKeys } from './remote-schema.ts';
import { anObject, boolean, envName, MAX_DURATION_MS, MiB, nonEmptyString, nonNegative, positive, scalarString } from './schema-kit.ts';

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
    /** Unset: tools, prompts, serverInfo and instructions as the server gives them (docs/governance.md, "Overrides"). */
    overrides: overridesSchema.optional(),
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
     * and then does not. On a shared upstream they open the circuit (with `timeoutCallers`); on a
     * per-session child they end that session's child (restarted if `onExit: restart` allows).
     * 0 disables this trigger.
     */
    timeouts: nonNegative().default(5),
    /**
     * 2: timeouts count against a shared upstream (remote, shared child) only when at least two
     * distinct callers (principals; sessions without auth) timed out in the window: one caller's
     * timeouts may be its own long work, and must not refuse everyone. 1: any caller's count.
     * A per-session child's timeouts never count here (its own session restarts or ends it).
     */
    timeoutCallers: positive().default(2),
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
  /** Unset: `gateway.pinning.mode`. "off", "warn" or "block" for this server alone (docs/governance.md). */
  pinning: z.enum(['off', 'warn', 'block'], { error: 'expected "off", "warn" or "block"' }).optional(),
  requiredScopes: requiredScopesSchema,
  /** hooks, redact: hooks-schema.ts. */
  ...guardrailKeys,
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
        /**
         * 0: no child runs before a session asks for one. N: that many children are started and
         * initialized ahead of need, so a session opens without waiting for a spawn (upstream/spares.ts).
         * At most 8: each is a whole process nobody uses yet, counted in the child caps; past a few,
         * raise the caps or consider shared mode. Per-session mode without principalEnv only (see checkSpares).
         */
        spares: nonNegative(8).default(0),
      },
      anObject,
    )
    .prefault({}),
  /** sandbox, limits: containment-schema.ts. */
  ...containmentKeys,
});

/** Keys of both remote kinds (`http`, `sse`); the remote-only ones are remote-schema.ts. */
const remoteCommon = {
  ...remoteConnectionKeys,
  ...upstreamCommon,
  ...remoteLifeKeys,
};

/** Streamable HTTP (2025-03-26 and later, and the stateless 2026-07-28). */
export const httpServerSchema = z.strictObject({
  type: z.literal('http'),
  ...remoteCommon,
  /**
   * "auto": a server/discover probe tells a 2026-07-28 server from a 2025 one, so the config need
   * not know; the answer is remembered, and an inconclusive one (401/403, 5xx, timeout) falls back
   * to 2025 for that connection only.
   */
  protocol: z.enum(['auto', '2025', '2026'], { error: 'expected "auto", "2025" or "2026"' }).default('auto'),
}).refine(oneAuthorization, authorizationClash);
/** Legacy HTTP+SSE (2024-11-05). */
export const sseServerSchema = z.strictObject({ type: z.literal('sse'), ...remoteCommon }).refine(oneAuthorization, authorizationClash);

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
