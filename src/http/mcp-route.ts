/**
 * The Streamable HTTP endpoint (2025 era) of one path shape, such as `/servers/:name/mcp`: POST
 * carries messages, GET opens the standalone SSE stream (or resumes one with Last-Event-ID), DELETE
 * ends the session. Which sessions the path serves is looked up per request (config reload). A POST
 * of the 2026-07-28 revision on the same path goes to the stateless entry (mcp-modern.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { replyError } from './reply-error.ts';
import { onlyRequests, requestsOf, toMessages } from './post-messages.ts';
import type { RequestLimits } from '../auth/rate-limit.ts';
import { GatewayError, isGatewayError, toErrorResponse } from '../errors/gateway-error.ts';
import { isRequest } from '../jsonrpc/envelope.ts';
import { classifyPost } from '../jsonrpc/era.ts';
import type { StatelessServer } from '../session/stateless/serve.ts';
import type { Forward, ForwardRetry } from './hop-forward.ts';
import type { JsonRpcMessage, JsonRpcRequest } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { isSupportedVersion, SUPPORTED_PROTOCOL_VERSIONS } from '../jsonrpc/versions.ts';
import { BATCH_2025, POST_2025, type Session } from '../session/session.ts';
import type { RouteEndpoint } from '../session/endpoint-table.ts';
import { refusalIn } from '../session/room.ts';
import type { SessionStore } from '../session/store.ts';
import { checkGetHeaders, checkPostHeaders } from './guards.ts';
import { createHttpSink, type KeepAlive } from './sink.ts';
import {
  createModernEntry,
  isModernNonPost,
  modernIdOf,
  parseBody,
  refuseModern,
  SESSION_HEADER,
  VERSION_HEADER,
  type StepUpChallenge,
} from './mcp-modern.ts';

export type { StepUpChallenge } from './mcp-modern.ts';

export interface McpRouteOptions {
  /** A fastify path, with `:name` for a family of endpoints (`/servers/:name/mcp`). */
  path: string;
  /** What the request's path serves now (config reload); undefined: no such endpoint (404). */
  resolve: ResolveEndpoint;
  store: SessionStore;
  keepAlive: KeepAlive;
  logger: Logger;
  /** Rate limits per principal (gateway.rateLimits); undefined: none. */
  limits?: RequestLimits | undefined;
  /** Serves 2026-07-28 (stateless) requests on the same path. */
  stateless: StatelessServer;
  /** Relays requests for another replica's sessions (gateway.cluster); undefined: one process. */
  forward?: Forward | undefined;
  /** Relays 2026 retries to the replica holding their parked call (gateway.cluster); undefined: one process. */
  forwardRetry?: ForwardRetry | undefined;
  /** With gateway.auth.stepUp "http": the 403 challenge for a call of `request` lacking `missing` scopes; undefined: step-up answers a JSON-RPC error. */
  stepUpChallenge?: StepUpChallenge | undefined;
}

/** Finds the endpoint a request's path serves now (one Map lookup); undefined: none. */
export type ResolveEndpoint = (request: FastifyRequest) => RouteEndpoint | undefined;

/** The endpoint of `request`, or the same 404 as a path that was never routed. */
export function endpointOf(request: FastifyRequest, resolve: ResolveEndpoint): RouteEndpoint {
  const entry = resolve(request);
  if (entry === undefined) throw new GatewayError('GW_ROUTE_NOT_FOUND', `Not Found: ${request.method} ${request.url.split('?', 1)[0]}`);
  return entry;
}

/** As endpointOf, and a removed target or group (live sessions only) is a 404 too: for new sessions. */
export function openEndpointOf(request: FastifyRequest, resolve: ResolveEndpoint): RouteEndpoint {
  const entry = resolve(request);
  if (entry === undefined || !entry.open) throw new GatewayError('GW_ROUTE_NOT_FOUND', `Not Found: ${request.method} ${request.url.split('?', 1)[0]}`);
  return entry;
}

const GONE = 'Session not found: it ended or never existed; initialize a new one';

/** With a cluster: relays a request for another replica's session (hop-forward.ts); true when it did. */
async function forwarded(request: FastifyRequest, reply: FastifyReply, hop: Forward, entry: RouteEndpoint): Promise<boolean> {
  const id = request.headers[SESSION_HEADER];
  return typeof id === 'string' && id !== '' && hop(request, reply, id, GONE, entry.needsCredential);
}

function sessionOf(request: FastifyRequest, store: SessionStore, entry: RouteEndpoint): Session {
  const id = request.headers[SESSION_HEADER];
  if (typeof id !== 'string' || id === '') throw new GatewayError('GW_SESSION_REQUIRED');
  const session = store.get(id, request.principal);
  // A session of another endpoint is as unknown here as one that never existed.
  if (session === undefined || session.ended || !entry.owns(session)) throw new GatewayError('GW_SESSION_NOT_FOUND', GONE);
  // Its principal may have refreshed its token: the next token exchange presents this one.
  store.noteAuthorization(id, request.principal, request.headers.authorization);
  const version = request.headers[VERSION_HEADER];
  // 2025-06-18 "Protocol Version Header": absent means 2025-03-26; unknown or invalid means 400.
  if (typeof version === 'string' && !isSupportedVersion(version)) {
    throw new GatewayError('GW_UNSUPPORTED_PROTOCOL_VERSION', `Unsupported protocol version: ${version}`, {
      supported: [...SUPPORTED_PROTOCOL_VERSIONS],
    });
  }
  session.lastActivity = Date.now();
  return session;
}

/** Opens a session for an `initialize` (a stale Mcp-Session-Id of a live session is refused). */
async function initialize(
  store: SessionStore,
  entry: RouteEndpoint,
  reply: FastifyReply,
  request: JsonRpcRequest,
  staleId: string | undefined,
  from: FastifyRequest,
): Promise<FastifyReply> {
  if (staleId !== undefined && store.get(staleId, from.principal) !== undefined) {
    throw new GatewayError('GW_ALREADY_INITIALIZED', 'Session is already initialized; send initialize without Mcp-Session-Id');
  }
  const session = store.create(entry.factory, { authorization: from.headers.authorization, principal: from.principal, transport: 'streamable-http' });
  const answer = await session.initialize(request);
  // No room for its child: a refusal of the session (503 + Retry-After), not an upstream's answer.
  const refused = refusalIn(answer);
  if (refused !== undefined) return replyError(reply, refused, request.id);
  reply.code(200).header('content-type', 'application/json');
  if (!session.ended) reply.header('mcp-session-id', session.id);
  return reply.send(JSON.stringify(answer));
}

type ServeModern = ReturnType<typeof createModernEntry>;

/** Admits `requests` to `session` and serves them on the hijacked response. */
function serveRequests(options: McpRouteOptions, request: FastifyRequest, reply: FastifyReply, session: Session, requests: JsonRpcRequest[], batch: boolean): FastifyReply {
  // Over the in-flight caps: 503 with Retry-After for the whole POST, none of it runs.
  session.admit(requests.length);
  reply.hijack();
  const sink = createHttpSink(reply.raw, session.id, options.keepAlive, options.stepUpChallenge);
  // The headers go along as they are: a client's traceparent is read from them only when tracing
  // is on. The principal is this request's own: step-up judges the token it came with.
  session.serve(requests, sink, batch ? BATCH_2025 : POST_2025, request.headers, request.principal);
  return reply;
}

/** A 2025 POST to a live session, past the rate limits. Waits (a promise) only when it carries notifications or answers. */
function postToSession(options: McpRouteOptions, request: FastifyRequest, reply: FastifyReply, entry: RouteEndpoint, messages: JsonRpcMessage[], batch: boolean): Promise<FastifyReply> | undefined {
  const session = sessionOf(request, options.store, entry);
  // Batches exist only in 2025-03-26 (removed in 2025-06-18).
  if (batch && session.protocolVersion !== '2025-03-26') throw new GatewayError('GW_BATCH_NOT_ALLOWED');
  if (!onlyRequests(messages)) return postMixed(options, request, reply, session, messages, batch);
  for (let i = 0; i < messages.length; i++) if ((messages[i] as JsonRpcRequest).method === 'initialize') throw new GatewayError('GW_ALREADY_INITIALIZED');
  serveRequests(options, request, reply, session, messages, batch);
  return undefined;
}

/** A POST that carries notifications or answers: they go upstream first (a closure only on this path). */
async function postMixed(options: McpRouteOptions, request: FastifyRequest, reply: FastifyReply, session: Session, messages: JsonRpcMessage[], batch: boolean): Promise<FastifyReply> {
  const requests = await requestsOf(session, messages, options.logger);
  return requests === undefined ? reply.code(202).send() : serveRequests(options, request, reply, session, requests, batch);
}

/** The 2026 entry as before: its answer (a reply, or a promise of one) settles the handler's promise. */
async function modern(serve: ServeModern, ...args: Parameters<ServeModern>): Promise<FastifyReply> {
  return serve(...args);
}

/** A POST that waits for the rate limits first. */
async function postAfter(taking: Promise<void>, options: McpRouteOptions, request: FastifyRequest, reply: FastifyReply, entry: RouteEndpoint, messages: JsonRpcMessage[], batch: boolean): Promise<FastifyReply | undefined> {
  await taking;
  return postToSession(options, request, reply, entry, messages, batch);
}

/** The waiting part of a 2025 POST: a hop to another replica, a new session. */
async function postWaiting(options: McpRouteOptions, request: FastifyRequest, reply: FastifyReply, entry: RouteEndpoint, messages: JsonRpcMessage[], batch: boolean, init: boolean): Promise<FastifyReply | undefined> {
  const { forward: hop, limits, store } = options;
  // Another replica's session: its owner serves (and rate-limits) it. A new session is always this replica's.
  if (hop !== undefined && !init && (await forwarded(request, reply, hop, entry))) return reply;
  const taking = limits?.check(request.principal?.id ?? 'anonymous', messages);
  if (taking !== undefined) await taking;
  if (!init) return postToSession(options, request, reply, entry, messages, batch);
  if (batch) throw new GatewayError('GW_INVALID_REQUEST', 'Invalid Request: initialize must not be part of a batch');
  const sessionId = request.headers[SESSION_HEADER];
  return initialize(store, entry, reply, messages[0] as JsonRpcRequest, typeof sessionId === 'string' ? sessionId : undefined, request);
}

/**
 * The POST handler: a 2026 request goes to the stateless entry, a 2025 one to its session. Not an
 * async function: a call to a live session that waits for nothing (no replica hop, no rate-limit
 * wait, only requests) is served without a promise (issue 34); what waits returns one. fastify
 * refuses a throw here as it refuses a rejection (handle-request.js, wrap-thenable.js: `reply.send(err)`).
 */
function createPostHandler(options: McpRouteOptions, serveModern: ServeModern) {
  const { resolve, limits, forward: hop } = options;
  return (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> | undefined => {
    let entry: RouteEndpoint;
    try {
      entry = endpointOf(request, resolve);
    } catch (error) {
      // Refused before the body is read (an unknown or denied path); a 2026 answer still echoes the id.
      if (isGatewayError(error)) return void replyError(reply, error, modernIdOf(request));
      throw error;
    }
    checkPostHeaders(request.headers);
    const value = parseBody(request.body);
    const era = classifyPost(value, request.headers);
    if (!('era' in era) || era.era === '2026') return modern(serveModern, request, reply, value, era, entry);
    const batch = Array.isArray(value);
    const messages = toMessages(value, batch);
    const first = messages[0] as JsonRpcMessage;
    const init = isRequest(first) && first.method === 'initialize';
    if (init || hop !== undefined) return postWaiting(options, request, reply, entry, messages, batch, init);
    const taking = limits?.check(request.principal?.id ?? 'anonymous', messages);
    if (taking !== undefined) return postAfter(taking, options, request, reply, entry, messages, batch);
    return postToSession(options, request, reply, entry, messages, batch);
  };
}

export function registerMcpRoute(app: FastifyInstance, options: McpRouteOptions): void {
  const { path, resolve, store, keepAlive, logger, limits, stateless, forward: hop, forwardRetry, stepUpChallenge } = options;
  const serveModern = createModernEntry({ open: (request) => openEndpointOf(request, resolve), keepAlive, limits, stateless, stepUpChallenge, forwardRetry });
  app.post(path, createPostHandler(options, serveModern));

  app.get(path, async (request, reply) => {
    const entry = endpointOf(request, resolve);
    if (isModernNonPost(request)) return refuseModern(reply);
    checkGetHeaders(request.headers);
    if (hop !== undefined && (await forwarded(request, reply, hop, entry))) return reply;
    const session = sessionOf(request, store, entry);
    const lastEventId = request.headers['last-event-id'];
    reply.hijack();
    const sink = createHttpSink(reply.raw, session.id, keepAlive);
    if (!session.openStream(sink, typeof lastEventId === 'string' ? lastEventId : undefined)) {
      const error = new GatewayError('GW_STREAM_CONFLICT');
      reply.raw.writeHead(error.httpStatus, { 'content-type': 'application/json' });
      reply.raw.end(JSON.stringify(toErrorResponse(null, error)));
    }
    return reply;
  });

  app.delete(path, async (request, reply) => {
    if (isModernNonPost(request)) return refuseModern(endpointOf(request, resolve) && reply);
    const entry = endpointOf(request, resolve);
    if (hop !== undefined && (await forwarded(request, reply, hop, entry))) return reply;
    const session = sessionOf(request, store, entry);
    logger.debug({ session: session.id }, 'session deleted by the client');
    await session.end('deleted by the client');
    return reply.code(200).send();
  });

  // Anything else on the endpoint: 405 with the methods that exist.
  app.route({
    method: ['PUT', 'PATCH', 'OPTIONS'],
    url: path,
    handler: async (request, reply) => {
      endpointOf(request, resolve);
      reply.header('allow', 'GET, POST, DELETE');
      return replyError(reply, new GatewayError('GW_METHOD_NOT_ALLOWED'));
    },
  });
}
