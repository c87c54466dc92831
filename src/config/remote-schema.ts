/**
 * The keys only remote servers (`http`, `sse`) have: the URL, the headers sent upstream (the ones the
 * transport owns are refused), forwarding or exchanging the caller's token, the connection cap, and
 * what an ended upstream session means. server-schema.ts puts them together with the keys all
 * upstream kinds share. Strict like the rest of the config, every default with its reason.
 */
import { z } from 'zod';
import { boolean, isPlainHttpUrl, MiB, nonEmptyString, nonNegative, positive, scalarString } from './schema-kit.ts';

/** An absolute http(s) URL without credentials in it (they belong in `headers`, which are redacted). */
const remoteUrl = nonEmptyString().refine(isPlainHttpUrl, { error: 'expected an absolute http:// or https:// URL without user:password@' });

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

/**
 * RFC 8693 token exchange for this upstream: the caller's token is exchanged at the authorization
 * server for one meant for the upstream, which then goes as `Authorization: Bearer`.
 */
const tokenExchangeSchema = z.strictObject(
  {
    tokenEndpoint: remoteUrl,
    /** The gateway's own client at the authorization server (client_secret_basic). */
    clientId: scalarString().pipe(z.string().min(1, { error: 'must not be empty' })),
    /** Usually `${ENV_VAR}`; never logged, never in error data. */
    clientSecret: scalarString().pipe(z.string().min(1, { error: 'must not be empty' })),
    /** Who the new token is for (RFC 8693 `audience`), as the authorization server names it. */
    audience: scalarString().pipe(z.string().min(1, { error: 'must not be empty' })).optional(),
    /** The upstream's URL as a resource indicator (RFC 8707). Unset with no audience: the target's url. */
    resource: remoteUrl.optional(),
    /** Space-separated scopes to ask for; unset: the server's default for that resource. */
    scope: scalarString().pipe(z.string().min(1, { error: 'must not be empty' })).optional(),
    /** 10000 exchanged tokens kept at most for this target (one per principal); the least recently used goes first. */
    maxCachedTokens: positive(1_000_000).default(10_000),
  },
  { error: 'expected an object' },
);

/**
 * The gateway as each user's OAuth client at this upstream (docs/upstreams.md, "Each user's own
 * account"): every principal connects their own account once; needs `gateway.oauth`.
 */
const userOAuthSchema = z.strictObject(
  {
    /** Must be true: the key says what it does (a shared account is `headers`). */
    perUser: z.literal(true, { error: 'expected true' }),
    /** Unset: what the upstream's 401 asks for, else the scopes its metadata lists. */
    scopes: z.array(scalarString().pipe(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, { error: 'a scope is printable ASCII without spaces, quotes or backslashes' })), { error: 'expected a list of scopes' }).optional(),
    /** A client registered for the gateway at the upstream's authorization server; unset: a Client ID Metadata Document or dynamic registration. */
    clientId: scalarString().pipe(z.string().min(1, { error: 'must not be empty' })).optional(),
    /** With `clientId`, for a confidential client (client_secret_basic); usually `${ENV_VAR}`; never logged. */
    clientSecret: scalarString().pipe(z.string().min(1, { error: 'must not be empty' })).optional(),
  },
  { error: 'expected an object' },
).refine((o) => o.clientSecret === undefined || o.clientId !== undefined, { error: '"clientSecret" needs "clientId"' });

/** Keys of both remote kinds (`http`, `sse`): how the gateway reaches the server. */
export const remoteConnectionKeys = {
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
  /** Unset: none. The caller's token is exchanged (RFC 8693) for one meant for this upstream. */
  tokenExchange: tokenExchangeSchema.optional(),
  /** Unset: none. Each principal's own account at the upstream, through the gateway as their OAuth client. */
  oauth: userOAuthSchema.optional(),
  /**
   * 0 = no cap. Every session of the target holds one connection for its GET stream for as long
   * as it lives, so any fixed cap below sessions x (1 + concurrent requests) queues requests
   * behind streams; set it when the upstream limits its clients.
   */
  maxConnections: nonNegative().default(0),
};

/** Keys of both remote kinds: what happens when the upstream session ends, and the message cap. */
export const remoteLifeKeys = {
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

/** With tokenExchange, the exchanged token is the upstream's Authorization: nothing else may set it. */
export const oneAuthorization = (server: { tokenExchange?: unknown; oauth?: unknown; forwardAuthorization: boolean; headers: Record<string, string>; principalHeaders: Record<string, string> }) =>
  (server.tokenExchange === undefined && server.oauth === undefined) ||
  (server.tokenExchange === undefined) !== (server.oauth === undefined) &&
  (!server.forwardAuthorization && ![...Object.keys(server.headers), ...Object.keys(server.principalHeaders)].some((k) => k.toLowerCase() === 'authorization'));
export const authorizationClash = { error: '"tokenExchange" and "oauth" set the upstream\'s Authorization themselves: use one, and drop "forwardAuthorization" and any Authorization header' };

