/**
 * The WebSocket endpoint of one target: each socket is one 2025-era session, one JSON-RPC message
 * per UTF-8 text frame both ways (the framing of the TS SDK v1 `WebSocketClientTransport` and the
 * Python SDK's `websocket_client`, which both ask for the `mcp` subprotocol).
 *
 * Close codes (RFC 6455 section 7.4.1), listed in docs/downstreams.md:
 * 1000 the client closed; 1001 the gateway is shutting down; 1003 a binary frame; 1007 a text
 * frame that is not UTF-8 and 1009 a frame over limits.maxBodyBytes (both sent by `ws` itself);
 * 1008 the session ended before it initialized (the init deadline, or room made for others);
 * 1011 the session ended on the gateway's side (upstream gone); 1013 the client reads too slowly,
 * or no session could be opened (limit reached); a socket that misses a pong is dropped without a
 * close frame (it is not listening).
 */
import type { WebSocket } from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RequestLimits } from '../auth/rate-limit.ts';
import { GatewayError, toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import type { Session } from '../session/session.ts';
import type { SessionStore } from '../session/store.ts';
import { createChannel, isRejected, parseOneMessage, type ChannelWire } from './channel.ts';
import { endpointOf, openEndpointOf, type ResolveEndpoint } from './mcp-route.ts';
import { replyError } from './reply-error.ts';
import { downstreamAuthorization } from './auth-hook.ts';

/** The subprotocol MCP WebSocket clients ask for. */
export const WS_SUBPROTOCOL = 'mcp';

const OPEN = 1;

export interface WsRouteOptions {
  /** A fastify path, with `:name` for a family of endpoints (`/servers/:name/ws`). */
  path: string;
  /**
   * What the request's path serves now (as for registerMcpRoute). A socket holds its session
   * itself, so it is resolved once, when it opens.
   */
  resolve: ResolveEndpoint;
  store: SessionStore;
  heartbeat: WsHeartbeat;
  /** Unsent bytes a socket may hold before it is closed with 1013. */
  maxBufferedBytes: number;
  /** False while the gateway drains: sessions ended then close with 1001 rather than 1011. */
  isReady: () => boolean;
  logger: Logger;
  /** Rate limits per principal (gateway.rateLimits); undefined: none. */
  limits?: RequestLimits | undefined;
}

/** Pings every socket on one timer; a socket that has not answered the previous ping is dropped. */
export interface WsHeartbeat {
  add(socket: WebSocket): void;
  delete(socket: WebSocket): void;
  stop(): void;
}

export function createWsHeartbeat(intervalMs: number, logger: Logger): WsHeartbeat {
  const awaitingPong = new Map<WebSocket, boolean>();
  const timer = setInterval(() => {
    for (const [socket, waiting] of awaitingPong) {
      if (waiting) {
        logger.info({ intervalMs }, 'WebSocket missed a pong; dropping it');
        awaitingPong.delete(socket);
        socket.terminate();
        continue;
      }
      awaitingPong.set(socket, true);
      socket.ping();
    }
  }, intervalMs);
  timer.unref();
  return {
    add(socket) {
      awaitingPong.set(socket, false);
      socket.on('pong', () => {
        if (awaitingPong.has(socket)) awaitingPong.set(socket, false);
      });
    },
    delete: (socket) => void awaitingPong.delete(socket),
    stop: () => clearInterval(timer),
  };
}

/** Picks `mcp` when the client offers it; otherwise no subprotocol (a client that asked for none still connects). */
export function pickSubprotocol(offered: Set<string>): string | false {
  return offered.has(WS_SUBPROTOCOL) ? WS_SUBPROTOCOL : false;
}

export function registerWsRoute(app: FastifyInstance, options: WsRouteOptions): void {
  const { path, resolve } = options;
  const log = options.logger.child({ component: 'ws' });

  app.route({
    method: 'GET',
    url: path,
    // Before the upgrade: an unknown or removed endpoint is a plain 404, as on the other transports.
    preValidation: async (request) => void openEndpointOf(request, resolve),
    // A plain GET (no upgrade): say what this endpoint is, in the same envelope as every error.
    handler: async (_request, reply) => {
      reply.header('upgrade', 'websocket');
      return replyError(reply, new GatewayError('GW_UPGRADE_REQUIRED'));
    },
    wsHandler: (socket: WebSocket, request: FastifyRequest) => onSocket(socket, request, options, log),
  });
}

function onSocket(socket: WebSocket, request: FastifyRequest, options: WsRouteOptions, log: Logger): void {
  const { resolve, store, heartbeat } = options;
  let session: Session;
  let endpoint: string;
  try {
    const entry = endpointOf(request, resolve);
    endpoint = entry.endpoint;
    session = store.create(entry.factory, { authorization: downstreamAuthorization(request), principal: request.principal, transport: 'websocket' });
  } catch (err) {
    // Session limit or shutdown: say why in a frame, then close with "try again later".
    const error = toGatewayError(err);
    socket.send(JSON.stringify(toErrorResponse(null, error)));
    socket.close(1013, error.code);
    return;
  }
  const wire = new SocketWire(socket, session, options, log);
  const principal = request.principal?.id ?? 'anonymous';
  const limits = options.limits;
  const channel = createChannel(session, wire, log, limits && ((message) => limits.check(principal, [message])));
  heartbeat.add(socket);
  log.debug({ session: session.id, endpoint, protocol: socket.protocol }, 'WebSocket session opened');

  socket.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      socket.close(1003, 'binary frames are not accepted; send JSON-RPC as text');
      return;
    }
    // binaryType is the default 'nodebuffer': a text frame arrives as one Buffer, already UTF-8 checked.
    const message = parseOneMessage(data.toString('utf8'));
    if (isRejected(message)) {
      // The socket stays open: one bad frame is the client's bug, not the session's end.
      wire.send(JSON.stringify(toErrorResponse(message.id, message.rejected)));
      return;
    }
    // The socket's credential was checked at the upgrade: its scopes are every message's.
    void channel.receive(message, request.principal);
  });

  socket.on('close', (code: number) => {
    heartbeat.delete(socket);
    if (!session.ended) void session.end(`WebSocket closed (${code})`);
  });
}

/** The channel's wire over one socket (the channel calls its methods as methods). */
class SocketWire implements ChannelWire {
  readonly socket: WebSocket;
  readonly session: Session;
  readonly options: WsRouteOptions;
  readonly log: Logger;
  overflowed = false;
  wasRefused = false;

  constructor(socket: WebSocket, session: Session, options: WsRouteOptions, log: Logger) {
    this.socket = socket;
    this.session = session;
    this.options = options;
    this.log = log;
  }

  send(data: string): void {
    // Checked before sending: memory stays below the cap plus one message, and one large
    // answer to a reader that keeps up still goes out.
    if (this.overflowed) return;
    const { socket, options } = this;
    if (socket.bufferedAmount > options.maxBufferedBytes) {
      this.overflowed = true;
      this.log.warn({ session: this.session.id, bufferedBytes: socket.bufferedAmount, maxBufferedBytes: options.maxBufferedBytes }, 'WebSocket reader too slow; closing it (1013)');
      socket.close(1013, 'reader too slow');
      void this.session.end('WebSocket reader too slow');
      return;
    }
    socket.send(data);
  }

  get closed(): boolean {
    return this.overflowed || this.socket.readyState !== OPEN;
  }

  close(): void {
    const { socket, options } = this;
    if (socket.readyState !== OPEN) return;
    // No room for its child: the same "try again later" as a refusal before the session existed.
    if (this.wasRefused) socket.close(1013, 'GW_SESSION_LIMIT');
    // Ended before initialize completed: the init deadline or room for others (session/limits.ts).
    else if (options.isReady() && this.session.protocolVersion === undefined) socket.close(1008, 'session not initialized in time');
    else if (options.isReady()) socket.close(1011, 'session ended');
    else socket.close(1001, 'gateway shutting down');
  }

  refused(): void {
    this.wasRefused = true;
  }
}
