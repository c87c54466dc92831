/**
 * The 2026-07-28 (stateless) side of an MCP endpoint (mcp-route.ts): a POST classified as 2026 is
 * checked, rate-limited and handed to the stateless server; a 2026 GET or DELETE is a 405. Also the
 * body parsing both eras share, and the id a refusal of a 2026 request must echo.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestLimits } from '../auth/rate-limit.ts';
import { GatewayError, isGatewayError } from '../errors/gateway-error.ts';
import { isObject, isRequestId, parseJson, toMessage } from '../jsonrpc/envelope.ts';
import { checkModernRequest, classifyPost, type EraRejection } from '../jsonrpc/era.ts';
import type { JsonRpcRequest } from '../jsonrpc/types.ts';
import { isModernVersion } from '../jsonrpc/versions.ts';
import type { RouteEndpoint } from '../session/endpoint-table.ts';
import type { StatelessServer } from '../session/stateless/serve.ts';
import { createExchange } from './exchange.ts';
import type { KeepAlive } from './sink.ts';
import { replyError } from './reply-error.ts';
import { toParseFailure } from './parse-failure.ts';
import type { StepUpRequest } from './auth-hook.ts';
import type { ForwardRetry } from './hop-forward.ts';

export const SESSION_HEADER = 'mcp-session-id';
export const VERSION_HEADER = 'mcp-protocol-version';

/** `WWW-Authenticate` of a step-up 403 (auth-hook.ts stepUpChallenge, bound to the config). */
export type StepUpChallenge = (request: StepUpRequest, missing: readonly string[]) => string;

/** The body parsed once; a failure is -32700 (or -32600 for nesting past the limit). */
export function parseBody(body: unknown): unknown {
  if (typeof body !== 'string') throw new GatewayError('GW_PARSE_ERROR', 'Parse error: empty body');
  try {
    return parseJson(body);
  } catch (err) {
    throw toParseFailure(err);
  }
}

/**
 * The request id of a body, when it has a usable one (2026 errors must echo it): a string, a number,
 * or a big integer's exact text as parseJson kept it (envelope.ts).
 */
function idOf(value: unknown): JsonRpcRequest['id'] | null {
  const id = isObject(value) ? value.id : undefined;
  return isRequestId(id) ? id : null;
}

/** The id of a 2026 request's body, for an answer refused before the body was looked at; null otherwise. */
export function modernIdOf(request: FastifyRequest): JsonRpcRequest['id'] | null {
  try {
    const value = parseBody(request.body);
    const era = classifyPost(value, request.headers);
    return !('era' in era) || era.era === '2026' ? idOf(value) : null;
  } catch {
    return null;
  }
}

const eraError = (r: EraRejection) => new GatewayError(r.reject, r.message, r.data ?? {});

/** A GET or DELETE from a 2026 client (its header names a 2026 revision, it has no session): 405. */
export function isModernNonPost(request: FastifyRequest): boolean {
  const version = request.headers[VERSION_HEADER];
  return typeof version === 'string' && isModernVersion(version) && request.headers[SESSION_HEADER] === undefined;
}

/** 2026-07-28 has no GET stream and no session to delete: only POST. */
export function refuseModern(reply: FastifyReply): FastifyReply {
  reply.header('allow', 'POST');
  return replyError(reply, new GatewayError('GW_METHOD_NOT_ALLOWED', 'Method Not Allowed: the 2026-07-28 revision has no GET stream or session; POST only'));
}

type ModernMeta = Parameters<StatelessServer['serve']>[0]['meta'];

export interface ModernEntryOptions {
  /** The endpoint a request may open now (mcp-route.ts openEndpointOf, bound to the path's resolver). */
  open: (request: FastifyRequest) => RouteEndpoint;
  keepAlive: KeepAlive;
  limits?: RequestLimits | undefined;
  stateless: StatelessServer;
  stepUpChallenge?: StepUpChallenge | undefined;
  /** Relays 2026 retries to the replica holding their parked call (gateway.cluster); undefined: one process. */
  forwardRetry?: ForwardRetry | undefined;
}

/**
 * Serves a POST classified as 2026-07-28 (a request or a notification): checked, rate-limited, then
 * served statelessly. `resolved`: the endpoint the route found for this request just now (used
 * when nothing was awaited since; after a wait the path is looked up again, a reload may have closed it).
 */
export type ServeModern = (request: FastifyRequest, reply: FastifyReply, value: unknown, era: ReturnType<typeof classifyPost>, resolved?: RouteEndpoint) => FastifyReply | Promise<FastifyReply>;

/** Whether the retry's owner needs the caller's token (hop-forward.ts); a path closed since: it does not. */
function needsCredential(request: FastifyRequest, open: (request: FastifyRequest) => RouteEndpoint): boolean {
  try {
    return open(request).needsCredential;
  } catch {
    return false;
  }
}

export function createModernEntry(options: ModernEntryOptions): ServeModern {
  const { open, keepAlive, limits, stateless, stepUpChallenge, forwardRetry } = options;
  /** A 2026 request's challenge (a closure per request only with step-up over HTTP; a 2025 sink reads its own request). */
  const challengeOf = (request: FastifyRequest) => stepUpChallenge && ((missing: readonly string[]) => stepUpChallenge(request, missing));

  const admitModern = (request: FastifyRequest, reply: FastifyReply, message: JsonRpcRequest, meta: ModernMeta, refuse: (error: unknown) => FastifyReply, resolved?: RouteEndpoint) => {
    let entry: RouteEndpoint;
    try {
      // A removed target or group (live sessions only) is a 404 for new work: `open` says so.
      entry = resolved?.open === true ? resolved : open(request);
    } catch (error) {
      return refuse(error);
    }
    reply.hijack();
    const exchange = createExchange(reply.raw, keepAlive);
    stateless.serve({ endpoint: entry, request: message, meta, principal: request.principal, authorization: request.headers.authorization, headers: request.headers, exchange, challenge: challengeOf(request) });
    return reply;
  };

  return (request, reply, value, era, resolved) => {
    const id = idOf(value);
    if ('reject' in era) return replyError(reply, eraError(era), id);
    if (!('request' in era)) return reply.code(202).send(); // 2026 notifications have no session to reach
    const msg = toMessage(value);
    if (typeof msg === 'string') return replyError(reply, new GatewayError('GW_INVALID_REQUEST', `Invalid Request: ${msg}`), id);
    const refused = checkModernRequest(era.request, era.version, request.headers);
    if (refused !== undefined) return replyError(reply, eraError(refused), id);
    // A rate limit or a path closed by a reload: still an answer that echoes the request's id.
    const refuse = (error: unknown) => {
      if (isGatewayError(error)) return replyError(reply, error, id);
      throw error;
    };
    // A retry of another replica's parked call: its owner serves (and rate-limits) it.
    const relayed = forwardRetry?.(request, reply, era.request, () => needsCredential(request, open));
    if (relayed !== undefined) return relayed.then(() => reply, refuse);
    let taking: Promise<void> | undefined;
    try {
      taking = limits?.check(request.principal?.id ?? 'anonymous', [era.request]);
    } catch (error) {
      return refuse(error);
    }
    // A promise only when the buckets are shared (a cluster): in one process the check is decided at once.
    if (taking !== undefined) return taking.then(() => admitModern(request, reply, era.request, era.meta, refuse), refuse);
    return admitModern(request, reply, era.request, era.meta, refuse, resolved);
  };
}
