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
import { auditSchema } from './audit-schema.ts';
import { clusterSchema } from './cluster-schema.ts';
import { anObject, boolean, integer, MAX_DURATION_MS, MiB, nonEmptyString, nonNegative, positive, origin, hostHeader, TARGET_NAME_PATTERN, LOG_LEVELS } from './schema-kit.ts';
import { checkConfigFile } from './schema-checks.ts';
import { serverSchema } from './server-schema.ts';
import { virtualServerSchema } from './overrides-schema.ts';
import { discoverySchema } from './discovery-schema.ts';
import { limitsSchema, sessionSchema } from './session-schema.ts';

export { LOG_LEVELS, MAX_DURATION_MS, TARGET_NAME_PATTERN } from './schema-kit.ts';
export { httpServerSchema, serverSchema, sseServerSchema, stdioServerSchema, type ServerEntry } from './server-schema.ts';
export { RESERVED_UPSTREAM_HEADERS } from './remote-schema.ts';

// ---------------------------------------------------------------------------------------------
// Gateway (`gateway`)

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
  /**
   * "unambiguous": a call to a tool's own name (no prefix) reaches the one server that lists it, as
   * an MCP App (SEP-1865) calls its own server's tools by their names; "off": prefixed names only.
   */
  bareNames: z.enum(['unambiguous', 'off'], { error: 'expected "unambiguous" or "off"' }).default('unambiguous'),
  /** Progressive discovery on `/mcp` (discovery-schema.ts); absent: off. */
  discovery: discoverySchema.optional(),
}, anObject);

/**
 * The console (http/console-*.ts): sign-in by OpenID Connect against gateway.auth's issuer with this
 * client; without gateway.auth only `enabled: true` on a loopback listener (a local operator).
 */
const consoleSchema = z.strictObject({
  /** false: not served even when the rest is set. */
  enabled: boolean().default(true),
  /** The console's OpenID client at the issuer (authorization code + PKCE). */
  clientId: z.string({ error: 'expected a string' }).min(1).optional(),
  /** Its secret (client_secret_basic), usually `${ENV_VAR}`; unset: a public client. */
  clientSecret: z.string({ error: 'expected a string' }).min(1).optional(),
  /** The issuer to sign in at; unset: the first of gateway.auth.jwt.issuers. */
  issuer: z.url({ error: 'expected a URL' }).optional(),
  /** Unset: gateway.admin.scope decides who is an operator. Set: a token claim with one of these values does. */
  operatorClaim: z.strictObject({ name: z.string().min(1), values: z.array(z.string().min(1)).min(1) }, anObject).optional(),
  /** 8 hours: a console session lasts at most this long (it also ends with its access token). */
  sessionTtlSec: positive(86_400).default(28_800),
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
  /** The operator's console at /admin/ (docs/operations.md): off unless set. */
  console: consoleSchema.optional(),
}, anObject);

/** Definition pinning against silent changes ("rug pulls"): docs/governance.md. */
export const pinModeSchema = z.enum(['off', 'warn', 'block'], { error: 'expected "off", "warn" or "block"' });

/** `gateway.oauth`: what targets with `oauth.perUser` need (docs/upstreams.md, "Each user's own account"). */
const oauthSchema = z.strictObject({
  /** The vault's keys derive from it (HKDF, one per use); usually `${SWITCHBOARD_OAUTH_KEY}`. 32 characters at least. */
  key: z.string({ error: 'expected a string' }).min(32, { error: 'the vault key needs at least 32 characters (openssl rand -base64 32 makes one)' }),
  /** "switchboard-vault.json", next to the config file; with `cluster` the vault is in Redis instead. */
  vaultFile: nonEmptyString().default('switchboard-vault.json'),
  /** Unset: `auth.publicUrl`, else the address the gateway listens on. The callback is `<publicUrl>/oauth/callback`. */
  publicUrl: nonEmptyString().refine((v) => /^https?:\/\/[^/?#]+$/.test(v), { error: 'expected an origin such as https://mcp.example.com' }).optional(),
  /** 600 s: a user has ten minutes from the link to the callback; a link is single-use either way. */
  consentTtlSec: positive(86_400).default(600),
  /** "Switchboard": the name an authorization server shows on its consent page. */
  clientName: nonEmptyString().default('Switchboard'),
}, anObject);

const pinningSchema = z.strictObject({
  /**
   * "off": pinning needs a file the gateway may write and an operator who approves changes, and a
   * gateway that starts refusing tools after an upgrade would surprise those who did not ask for
   * it; with it off nothing is hashed and the hot path pays nothing. A target's own `pinning` wins.
   */
  mode: pinModeSchema.default('off'),
  /** "switchboard-pins.json", next to the config file (a relative path is read from there): the pins go with the config they pin. */
  file: nonEmptyString().default('switchboard-pins.json'),
  /** 10000 pinned items in all (a few hundred servers' tools); past it a new item is not pinned but waits for approval, so `block` withholds it. */
  maxItems: positive(1_000_000).default(10_000),
  /** 256 changes waiting for a decision (the oldest is forgotten, and judged again when a list shows it). */
  maxPending: positive(100_000).default(256),
}, anObject);

/** Packages that `npx`, `bunx`, `uvx` and `pipx run` targets run: installed once, run from here (docs/upstreams.md). */
const packagesSchema = z.strictObject({
  /**
   * ".switchboard/packages", next to the config file (a relative path is read from there): a
   * state folder the gateway owns, with the lock file that pins each package's exact version.
   */
  cacheDir: nonEmptyString().default('.switchboard/packages'),
  /** true: a runner target's package is installed at start or reload, never on a client's time, and run from the cache. */
  install: boolean().default(true),
}, anObject);

/** `/v0.1/servers`: the gateway's own servers in the MCP registry's API shape (docs/configuration.md). */
const registrySchema = z.strictObject({
  /** false: an inventory of what the gateway fronts is for those who ask for it. */
  serve: boolean().default(false),
  /** "local.switchboard": the namespace of the names listed (`<namespace>/<server>`), as the registry's reverse-DNS form. */
  namespace: z.string({ error: 'expected a string' }).regex(/^[A-Za-z0-9.-]{1,100}$/, { error: 'expected a reverse-DNS name such as com.example.gateway' }).default('local.switchboard'),
}, anObject);

const groupName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, {
  error: 'invalid group name: use 1-64 letters, digits, "_" or "-", starting with a letter or digit (it becomes a URL path segment)',
});

const groupSchema = z.strictObject({
  servers: z.array(nonEmptyString(), { error: 'expected a list of server names' }).min(1, { error: 'a group needs at least one server' }),
  /** Progressive discovery on the group's endpoint; absent: off. */
  discovery: discoverySchema.optional(),
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
  /**
   * Unset: loopback names at the gateway's own port only when bound to loopback (a DNS-rebinding
   * page, or a token for another local port, must not pass), any Host otherwise. An entry without
   * a port is that name bare or at the gateway's own port (http/own-origin.ts).
   */
  allowedHosts: z.array(hostHeader, { error: 'expected a list of host names' }).optional(),
  /** Unset: no client authentication. See docs/security.md. */
  auth: authSchema.optional(),
  /** Unset: every caller reaches every server and name its filters show. See docs/security.md. */
  policy: policySchema.optional(),
  /** Unset: no rate limits. */
  rateLimits: rateLimitsSchema.optional(),
  /** Unset: one process, no Redis (docs/scaling.md). */
  cluster: clusterSchema.optional(),
  /** Unset: no target may set `oauth` (each user's own upstream account). */
  oauth: oauthSchema.optional(),
  limits: limitsSchema.prefault({}),
  session: sessionSchema.prefault({}),
  websocket: websocketSchema.prefault({}),
  health: healthSchema.prefault({}),
  /** 10 s: in-flight calls get time to finish, within the 30 s a container orchestrator usually allows. */
  shutdownGraceMs: nonNegative(MAX_DURATION_MS).default(10_000),
  logging: loggingSchema.prefault({}),
  /** Unset: no key set, so the standard OTEL_* variables decide (docs/operations.md, "Traces"). */
  telemetry: telemetrySchema.optional(),
  /** Unset: `logging.audit` decides, records go to the log stream (docs/operations.md, "Audit"). */
  audit: auditSchema.optional(),
  aggregate: aggregateSchema.prefault({}),
  admin: adminSchema.prefault({}),
  registry: registrySchema.prefault({}),
  pinning: pinningSchema.prefault({}),
  packages: packagesSchema.prefault({}),
  /** {}: no curated bundles; `/mcp` serves every server. */
  groups: z.record(groupName, groupSchema, { error: 'expected an object of groups by name' }).default({}),
  /** {}: no virtual servers; each is served at `/virtual/<name>/mcp` with only what it picks. */
  virtualServers: z.record(groupName, virtualServerSchema, { error: 'expected an object of virtual servers by name' }).default({}),
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
  .superRefine(checkConfigFile);

export type ConfigFile = z.output<typeof configFileSchema>;
