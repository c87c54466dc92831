/**
 * The gateway's fastify instance before any route (server.ts adds them): its limits and timeouts,
 * the WebSocket plugin's options, and how what fastify or Node's parser refuse is answered (in the
 * JSON-RPC error envelope, like every other refusal).
 */
import type { WebsocketPluginOptions } from '@fastify/websocket';
import { fastify, type FastifyError, type FastifyInstance } from 'fastify';
import type { Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { GatewayConfig } from '../config/types.ts';
import { GatewayError, isGatewayError, toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import { replyError } from './reply-error.ts';
import { pickSubprotocol } from './ws-route.ts';

export function newFastify(config: GatewayConfig): FastifyInstance {
  return fastify({
    // No fastify logger: it would build a child logger for every request even with request
    // logging off (about 2% of the gateway's time in the overhead benchmark). Sessions and this
    // module log what matters through `log`.
    logger: false,
    bodyLimit: config.limits.maxBodyBytes,
    // A request must arrive whole within requestTimeoutMs (408 past it); answers are not bounded.
    requestTimeout: config.limits.requestTimeoutMs,
    // Node checks that timeout every 30 s by default: a stalled body would hold its socket up to
    // 30 s past the limit.
    http: { connectionsCheckingInterval: Math.min(1_000, config.limits.requestTimeoutMs), headersTimeout: config.limits.requestTimeoutMs },
    clientErrorHandler: answerClientError,
    // A URL that is not valid percent-encoding (FST_ERR_BAD_URL) is refused before routing:
    // answer it in the envelope like every other refusal, not with fastify's own JSON.
    frameworkErrors: (_err, _request, reply) =>
      replyError(reply, new GatewayError('GW_INVALID_REQUEST', 'Bad Request: the URL is not valid percent-encoding')),
    return503OnClosing: true,
    // Streams are ended by the session store on shutdown; idle keep-alive sockets close at once.
    forceCloseConnections: 'idle',
  });
}

/** `relay`: the upgrade gate's server (upgrade-gate.ts), the only one the plugin hears. */
export function wsPluginOptions(config: GatewayConfig, relay: Server, log: Logger): WebsocketPluginOptions {
  return {
    options: {
      // The same cap as an HTTP body; `ws` closes a socket that sends more with 1009.
      maxPayload: config.limits.maxBodyBytes,
      handleProtocols: pickSubprotocol,
      // A peer that does not answer our close frame (it stopped reading) is dropped after this.
      closeTimeout: 2_000,
      // Only the upgrades the gate lets through (upgrade-gate.ts): the plugin never hears the port.
      server: relay,
    },
    // Sockets are not closed when the server starts closing: their sessions end (1001) once the
    // store has drained them, like every other stream.
    preClose: (done) => done(),
    // `ws` reports a frame it refuses (1009 over maxPayload, 1007 not UTF-8, 1002 bad framing) as
    // an 'error' after it has sent that close frame and begun closing (its closeTimeout bounds
    // it). The plugin's default handler destroyed the socket then, with the rest of a large
    // frame unread: the kernel answers with a reset, and the client could lose the close frame.
    errorHandler: (err, socket) => {
      log.debug({ err }, 'WebSocket frame refused; closing with its close code');
      if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.terminate();
    },
  };
}

/** The body parser and the answers to what no route takes (errors, unknown paths). */
export function registerErrorAnswers(app: FastifyInstance, log: Logger): void {
  // The body arrives as text and is parsed once by the route, so a parse error becomes -32700.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  app.setErrorHandler((err: unknown, _request, reply) => {
    const known = isGatewayError(err) ? err : fromFastifyError(err as FastifyError);
    const error = known ?? toGatewayError(err);
    if (known === undefined) log.error({ err, correlationId: error.details.correlationId }, 'unhandled error in a route');
    return replyError(reply, error);
  });

  app.setNotFoundHandler((request, reply) =>
    replyError(reply, new GatewayError('GW_ROUTE_NOT_FOUND', `Not Found: ${request.method} ${request.url.split('?', 1)[0]}`)),
  );
}

/** fastify's own error codes that are the client's fault, mapped onto the catalog. */
function fromFastifyError(err: FastifyError): GatewayError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('GW_BODY_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('GW_UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type: Content-Type must be application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('GW_PARSE_ERROR', 'Parse error: empty body');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('GW_INVALID_REQUEST', 'Invalid Request: Content-Length does not match the body');
    case 'ECONNRESET':
      // The body stopped arriving because the connection closed: the client left, or Node's
      // parser refused the rest of it (a bad chunk size) and answered it already.
      return new GatewayError('GW_INVALID_REQUEST', 'Bad Request: the connection closed before the body arrived');
    default:
      return undefined;
  }
}

/** HTTP status of a request Node's parser refused before any route saw it. */
function clientErrorStatus(code: string | undefined): number {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'HPE_URI_TOO_LONG') return 414;
  return 400;
}

/**
 * Requests Node's HTTP parser refuses (a body that did not arrive in time, headers too large,
 * malformed HTTP) never reach a route: answer them with a JSON-RPC error envelope as well, then
 * drop the socket, whose stream can no longer be trusted.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // A route may have answered already (a bad URL is refused before the body is read): a second
  // answer on the socket would be taken for the answer to a request never sent. Node's own
  // handler makes the same check on the same field.
  if ((socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true) {
    socket.destroy();
    return;
  }
  const status = clientErrorStatus(err.code);
  const code = status === 400 ? 'GW_INVALID_REQUEST' : 'GW_REQUEST_REFUSED';
  const message = status === 400 ? 'Bad Request: malformed HTTP' : (STATUS_CODES[status] ?? 'Bad Request');
  const body = JSON.stringify(toErrorResponse(null, new GatewayError(code, message, { status })));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
