/**
 * Which HTTP upgrades reach @fastify/websocket (issue 34 item 1). The plugin sends every upgrade
 * it hears through the whole router, so a route that does not speak WebSocket would answer on a
 * raw socket: the MCP GET would open an event stream on it, and after an HTTP answer nothing
 * would close it. The gate therefore holds the server's 'upgrade' event itself: a GET upgrade to
 * a WebSocket route is handed to the plugin (which listens on `relay`, a server that never
 * listens on a port) and meets that route's hooks (hop, Host, Origin, credential, endpoint) as
 * before; every other upgrade is answered here, without routing, and its socket closed: 404
 * where no route is, 400 `GW_WEBSOCKET_NOT_SERVED` where a route is that does not speak WebSocket.
 * Nothing here runs for a request that is not an upgrade.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';
import { Server, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError, toErrorResponse } from '../errors/gateway-error.ts';

export interface UpgradeGate {
  /** Where @fastify/websocket hears the upgrades it is given (its `options.server`). */
  readonly relay: Server;
}

/**
 * Writes one JSON-RPC error envelope as a whole HTTP answer on a socket no response owns, then
 * closes the socket: an upgrade's socket, or one whose request Node's parser refused.
 */
export function answerOnSocket(socket: Duplex, error: GatewayError, status = error.httpStatus): void {
  const body = JSON.stringify(toErrorResponse(null, error));
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json\r\n` + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  // Destroyed once written: a client that keeps its side open holds nothing here.
  socket.end(head + body, () => socket.destroy());
}

/**
 * The plugin answered the upgrade in HTTP rather than switching (a hook refused it: Origin, Host,
 * credential; or the router: a bad URL): close the socket once that answer is written. The
 * plugin's own onResponse hook does this only when its onRequest hook ran, and in its scope that
 * comes after the MCP scope's guards, so a 401 or 403 would leave the socket open. The response
 * is the one the plugin assigned to the socket, synchronously; a switched socket's response is
 * hijacked and never finishes.
 */
function closeAfterHttpAnswer(socket: Duplex): void {
  const response = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  response?.once('finish', () => socket.end(() => socket.destroy()));
}

/** A fastify route path as a whole-path pattern: `:name` one segment, `*` the rest. */
function patternOf(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z0-9_]+|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

/** Call before any route is added: it learns the routes as they are registered (onRoute). */
export function createUpgradeGate(app: FastifyInstance): UpgradeGate {
  const relay = new Server();
  const wsRoutes: RegExp[] = [];
  const otherRoutes: RegExp[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    // The HEAD twin fastify adds for a GET route carries the same wsHandler: only GET upgrades.
    const ws = route.wsHandler !== undefined && methods.includes('GET');
    (ws ? wsRoutes : otherRoutes).push(patternOf(route.url));
  });

  app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node removed its own socket error listener before emitting 'upgrade'.
    socket.on('error', () => socket.destroy());
    // The raw path, not decoded: an escaped spelling of a WebSocket path is refused here rather
    // than passed on, so what reaches the router is only ever a WebSocket route.
    const path = (request.url ?? '/').split('?', 1)[0] ?? '/';
    if (request.method === 'GET' && wsRoutes.some((route) => route.test(path))) {
      relay.emit('upgrade', request, socket, head);
      closeAfterHttpAnswer(socket);
      return;
    }
    const routed = otherRoutes.some((route) => route.test(path)) || wsRoutes.some((route) => route.test(path));
    answerOnSocket(
      socket,
      routed
        ? new GatewayError('GW_WEBSOCKET_NOT_SERVED')
        : new GatewayError('GW_ROUTE_NOT_FOUND', `Not Found: no WebSocket endpoint at ${request.method ?? 'GET'} ${path}`),
    );
  });
  return { relay };
}
