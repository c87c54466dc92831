/**
 * The HTTP+SSE transport of protocol 2024-11-05, for clients that predate Streamable HTTP (the TS
 * SDK's SSEClientTransport, older Python clients): a GET opens a session and its event stream; the
 * first event, `endpoint`, names the URL to POST messages to; every message from the server,
 * answers included, is a `message` event on that one stream (2024-11-05 basic/transports, "HTTP
 * with SSE"). Closing the stream ends the session.
 *
 * The session behind it is the same kind as on /mcp: the protocol version is whatever the client
 * and the upstream negotiate; only the framing is old.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { RequestLimits } from '../auth/rate-limit.ts';
import { GatewayError, toErrorResponse } from '../errors/gateway-error.ts';
import { isRequest } from '../jsonrpc/envelope.ts';
import type { Logger } from '../log/logger.ts';
import type { SessionStore } from '../session/store.ts';
import { createChannel, isRejected, parseOneMessage, type Channel, type ChannelWire } from './channel.ts';
import { checkGetHeaders } from './guards.ts';
import type { Forward } from './hop-forward.ts';
import { endpointOf, type ResolveEndpoint } from './mcp-route.ts';
import { MAX_BUFFERED_BYTES, type KeepAlive, type Pingable } from './sink.ts';

export interface LegacySseRouteOptions {
  /** GET here opens a session (`/servers/:name/sse`); it ends in `/sse`. */
  ssePath: string;
  /** POST messages here (`/servers/:name/messages`); announced in the `endpoint` event. */
  messagesPath: string;
  /** What the request's path serves now (as for registerMcpRoute). */
  resolve: ResolveEndpoint;
  store: SessionStore;
  keepAlive: KeepAlive;
  logger: Logger;
  /** Rate limits per principal (gateway.rateLimits); undefined: none. */
  limits?: RequestLimits | undefined;
  /** Relays POSTs for a stream another replica holds (gateway.cluster); undefined: one process. */
  forward?: Forward | undefined;
}

/** The GET stream as the channel's wire: one `message` event per JSON-RPC message. */
function createSseWire(raw: ServerResponse, keepAlive: KeepAlive, onTooSlow: () => void): ChannelWire & Pingable {
  let lastWrite = Date.now();
  const write = (chunk: string) => {
    lastWrite = Date.now();
    raw.write(chunk);
    // A reader that stopped reading: drop the stream (which ends the session) before memory grows.
    if (raw.writableLength > MAX_BUFFERED_BYTES) {
      onTooSlow();
      raw.destroy();
    }
  };
  const wire: ChannelWire & Pingable = {
    send: (data) => write(`event: message\ndata: ${data}\n\n`),
    get closed() {
      return raw.writableEnded || raw.destroyed;
    },
    close() {
      keepAlive.delete(wire);
      if (!raw.writableEnded) raw.end();
    },
    ping(now, idleMs) {
      if (!wire.closed && now - lastWrite >= idleMs) write(': keep-alive\n\n');
    },
  };
  return wire;
}

const GONE = 'Session not found: it ended or never existed; open a new SSE stream';

export function registerLegacySseRoute(app: FastifyInstance, options: LegacySseRouteOptions): void {
  const { ssePath, messagesPath, resolve, store, keepAlive } = options;
  const log = options.logger.child({ component: 'legacy-sse' });
  /** This route's open sessions: a session of another endpoint is unknown here. */
  const channels = new Map<string, Channel>();

  app.get(ssePath, async (request, reply) => {
    const entry = endpointOf(request, resolve);
    checkGetHeaders(request.headers);
    const session = store.create(entry.factory, { authorization: request.headers.authorization, principal: request.principal, transport: 'sse' });
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // A path, resolved by the client against the URL it connected to (same origin by construction).
    // (The request's own path with `/sse` swapped for `/messages`: the name as the client spelt it.)
    const path = request.url.split('?', 1)[0] as string;
    raw.write(`event: endpoint\ndata: ${path.slice(0, -'sse'.length)}messages?sessionId=${session.id}\n\n`);
    const wire = createSseWire(raw, keepAlive, () =>
      log.warn({ session: session.id, maxBufferedBytes: MAX_BUFFERED_BYTES }, 'legacy SSE reader too slow; dropping the stream'),
    );
    channels.set(session.id, createChannel(session, wire, log));
    keepAlive.add(wire);
    raw.on('close', () => {
      keepAlive.delete(wire);
      channels.delete(session.id);
      if (!session.ended) void session.end('client closed the legacy SSE stream');
    });
    log.debug({ session: session.id }, 'legacy SSE session opened');
    return reply;
  });

  app.post(messagesPath, async (request, reply) => {
    const entry = endpointOf(request, resolve);
    const type = request.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();
    if (type !== 'application/json') {
      throw new GatewayError('GW_UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type: Content-Type must be application/json');
    }
    const sessionId = (request.query as Record<string, unknown>).sessionId;
    if (typeof sessionId !== 'string' || sessionId === '') {
      throw new GatewayError('GW_SESSION_REQUIRED', 'Bad Request: the sessionId query parameter is required');
    }
    const channel = channels.get(sessionId);
    // The stream lives where it was opened: a POST that landed elsewhere goes there.
    if (channel === undefined && options.forward !== undefined && (await options.forward(request, reply, sessionId, GONE, entry.needsCredential))) return reply;
    const session = store.get(sessionId, request.principal);
    if (channel === undefined || session === undefined || session.ended || !entry.owns(session)) {
      throw new GatewayError('GW_SESSION_NOT_FOUND', GONE);
    }
    // Its principal may have refreshed its token: the next token exchange presents this one.
    store.noteAuthorization(sessionId, request.principal, request.headers.authorization);
    const message = parseOneMessage(typeof request.body === 'string' ? request.body : '');
    if (isRejected(message)) {
      const error = message.rejected;
      return reply.code(error.httpStatus).header('content-type', 'application/json').send(JSON.stringify(toErrorResponse(message.id, error)));
    }
    const taking = options.limits?.check(request.principal?.id ?? 'anonymous', [message]);
    if (taking !== undefined) await taking;
    // The answer to initialize comes when the upstream is up; the POST need not wait for it. Any
    // other message is handed on before the 202, so the client's order is the upstream's order.
    // Each POST's own principal: step-up judges the token this message came with.
    if (isRequest(message) && message.method === 'initialize') void channel.receive(message, request.principal);
    else await channel.receive(message, request.principal);
    return reply.code(202).send();
  });
}
