/**
 * A downstream session: one peer's conversation, the upstream connection it opened (a child per
 * session for stdio targets), the map of its in-flight requests by client id, and the reverse map
 * for server->client requests.
 *
 * Era-neutral by construction: a session is created empty; `initialize` is just one way (the 2025
 * one) to open its upstream. Nothing here assumes every request follows an initialize.
 *
 * Routing of upstream messages to streams:
 * - an answer or a progress notification goes to the stream of the request it belongs to;
 * - a server->client request or a log line goes to the single open request stream when there is
 *   exactly one, else to the standalone GET stream (stdio carries no "related request" field);
 * - list_changed and resources/updated go to the standalone stream;
 * never to two streams.
 */
import { GatewayError, toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import { cancelledRequestId, idKey, isObject } from '../jsonrpc/envelope.ts';
import { toWireText } from '../jsonrpc/wire-text.ts';
import type {
  JsonObject,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  RequestId,
} from '../jsonrpc/types.ts';
import type { GatewayConfig, TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { PendingHandler } from '../upstream/correlator.ts';
import type { UpstreamConnection } from '../upstream/connection.ts';
import { openUpstream, type UpstreamFactory } from '../upstream/open.ts';
import { createEventLog } from './event-log.ts';
import { ownsChild, type SessionUsage } from './limits.ts';
import { explainStartupFailure, handshakeTimeouts as startupTimeouts } from '../upstream/startup-deadline.ts';
import { createStreamSet, type OutStream, type ResponseSink } from './streams.ts';

export type { ResponseSink } from './streams.ts';


export interface Session {
  readonly id: string;
  /**
   * The downstream endpoint that created the session (its path key). A session is unknown on every
   * other endpoint, exactly like one that never existed.
   */
  readonly endpoint: string;
  /** Negotiated in initialize; undefined before. */
  readonly protocolVersion: string | undefined;
  readonly ended: boolean;
  /** True while a request is in flight or a response stream is attached. */
  readonly busy: boolean;
  /** What the store's limits read (limits.ts). */
  readonly usage: SessionUsage;
  lastActivity: number;
  /** Opens the upstream and forwards the client's initialize; resolves with the answer to send. */
  initialize(request: JsonRpcRequest): Promise<JsonRpcResponse>;
  /** Forwards requests; their answers (and related messages) go to `sink`. */
  handleRequests(requests: JsonRpcRequest[], sink: ResponseSink, batch: boolean): void;
  /** Forwards a notification (a cancel is translated to the upstream's id). */
  handleNotification(notification: JsonRpcNotification): Promise<void>;
  /** Forwards the client's answer to a server->client request, with the upstream's id restored. */
  handleResponse(response: JsonRpcResponse): Promise<void>;
  /** GET stream; `lastEventId` resumes a lost stream. False: a standalone stream is already open. */
  openStream(sink: ResponseSink, lastEventId: string | undefined): boolean;
  /** Resolves once nothing is in flight upstream. */
  idle(): Promise<void>;
  /** Ends the session: closes its upstream, fails what is pending, ends its streams. Idempotent. */
  end(reason: string): Promise<void>;
}

export interface SessionOptions {
  id: string;
  /** See Session.endpoint. */
  endpoint: string;
  target: TargetConfig;
  limits: GatewayConfig['limits'];
  logger: Logger;
  /** Called once when the session has ended, whatever ended it. */
  onended: (session: Session) => void;
  /** What the downstream said about itself (its Authorization reaches opted-in remote targets). */
  downstream?: { readonly authorization: string | undefined };
  /** See SessionSeed.reserveChild. */
  reserveChild?: (target: TargetConfig) => void;
  /** Opens its upstream connection (default: the real transports). */
  open?: UpstreamFactory;
}

/** Per request in flight: what the correlator hands back with each outcome. */
interface InFlight {
  readonly key: string;
  readonly clientId: RequestId;
  readonly stream: OutStream;
  upstreamId: number;
}

interface ServerRequest {
  readonly upstreamId: RequestId;
  readonly stream: OutStream;
}

const BROADCAST_METHODS = new Set([
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
]);

export function createSession(options: SessionOptions): Session {
  const { id, endpoint, target, limits, onended } = options;
  const logger = options.logger.child({ session: id, target: target.name });
  const log = createEventLog(limits.replayEvents, limits.replayBytes);
  let protocolVersion: string | undefined;
  const streams = createStreamSet({
    log,
    logger,
    priming: () => protocolVersion !== undefined && protocolVersion >= '2025-11-25',
    keepFinished: 64,
  });
  const inflight = new Map<string, InFlight>();
  const serverRequests = new Map<number, ServerRequest>();
  const serverRequestIds = new Map<string, number>();
  let nextServerRequestId = 1;
  /** The upstream that takes requests: set only once its handshake is done. */
  let upstream: UpstreamConnection | undefined;
  /** An upstream being started (spawn + handshake), so that `end` can close it too. */
  let starting: UpstreamConnection | undefined;
  let ended = false;
  let endPromise: Promise<void> | undefined;
  let initParams: string | undefined;
  let restarts = 0;
  let ready: Promise<void> = Promise.resolve();
  /** True while the upstream is being opened (spawn + handshake) or restarted. */
  let opening = false;

  const handler: PendingHandler<InFlight> = {
    onresponse(response, rec) {
      inflight.delete(rec.key);
      // Pass-through: only the id changed, so a large answer's own text is forwarded (wire-text.ts).
      streams.deliver(rec.stream, toWireText(response), true);
    },
    onerror(error, rec) {
      inflight.delete(rec.key);
      logger.info({ code: error.code, clientId: rec.clientId }, error.message);
      streams.deliver(rec.stream, JSON.stringify(toErrorResponse(rec.clientId, error)), true);
    },
    onprogress(notification, rec) {
      streams.deliver(rec.stream, JSON.stringify(notification), false);
    },
  };

  const answerUpstream = (upstreamId: RequestId, error: GatewayError) => {
    upstream?.correlator.send(toErrorResponse(upstreamId, error)).catch(() => undefined);
  };

  const onServerRequest = (request: JsonRpcRequest) => {
    const stream = streams.pick(false);
    if (stream.standalone && streams.backlog >= limits.pendingServerMessages) {
      logger.warn({ method: request.method }, 'no downstream stream for a server->client request; refused');
      answerUpstream(request.id, new GatewayError('GW_DOWNSTREAM_UNAVAILABLE', undefined, { target: target.name }));
      return;
    }
    const downstreamId = nextServerRequestId++;
    serverRequests.set(downstreamId, { upstreamId: request.id, stream });
    serverRequestIds.set(idKey(request.id), downstreamId);
    request.id = downstreamId;
    streams.deliver(stream, JSON.stringify(request), false);
  };

  const onServerNotification = (notification: JsonRpcNotification) => {
    let stream: OutStream;
    if (notification.method === 'notifications/cancelled') {
      // The upstream withdraws one of its own server->client requests: translate to our id.
      const upstreamRequestId = cancelledRequestId(notification.params);
      if (upstreamRequestId === undefined) {
        logger.warn('notifications/cancelled from the upstream without a usable requestId; dropped');
        return;
      }
      const downstreamId = serverRequestIds.get(idKey(upstreamRequestId));
      const entry = downstreamId === undefined ? undefined : serverRequests.get(downstreamId);
      if (downstreamId === undefined || entry === undefined) return;
      serverRequestIds.delete(idKey(upstreamRequestId));
      serverRequests.delete(downstreamId);
      (notification.params as JsonObject).requestId = downstreamId;
      stream = entry.stream.complete ? streams.pick(false) : entry.stream;
    } else {
      stream = streams.pick(BROADCAST_METHODS.has(notification.method));
    }
    if (stream.standalone && streams.backlog >= limits.pendingServerMessages) {
      logger.warn({ method: notification.method }, 'standalone stream backlog full; notification dropped');
      return;
    }
    streams.deliver(stream, JSON.stringify(notification), false);
  };

  const connect = async (): Promise<UpstreamConnection> => {
    options.reserveChild?.(target);
    const connection = (options.open ?? openUpstream)({ target, logger, poolLogger: options.logger, authorization: options.downstream?.authorization });
    connection.correlator.onrequest = onServerRequest;
    connection.correlator.onnotification = onServerNotification;
    connection.onexit = (reason) => void onUpstreamExit(connection, reason);
    starting = connection;
    await connection.start();
    return connection;
  };

  const handshakeTimeouts = startupTimeouts(target);
  let streamed = false;

  /** Sends initialize (the client's, or a replay on restart) and waits for the answer. */
  const ask = (connection: UpstreamConnection, request: JsonRpcRequest): Promise<JsonRpcResponse> =>
    new Promise((resolve) => {
      const clientId = request.id;
      const explain = (error: GatewayError) => explainStartupFailure(error, connection, logger);
      connection.correlator.request(request, ownHandler, { resolve, clientId, explain }, handshakeTimeouts);
    });

  const onUpstreamExit = async (connection: UpstreamConnection, reason: GatewayError) => {
    if (ended || connection !== upstream) return;
    const policy = target.restart;
    if (protocolVersion === undefined || policy.onExit !== 'restart' || restarts >= policy.maxRestarts) {
      await session.end(reason.message);
      return;
    }
    let resolveReady!: () => void;
    ready = new Promise<void>((r) => (resolveReady = r));
    upstream = undefined;
    opening = true;
    while (!ended && restarts < policy.maxRestarts) {
      const delay = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** restarts);
      restarts++;
      logger.warn({ restarts, delayMs: delay, reason: reason.message }, 'restarting upstream');
      await new Promise((r) => setTimeout(r, delay));
      if (ended) break;
      let next: UpstreamConnection | undefined;
      try {
        next = await connect();
        const params = initParams === undefined ? {} : (JSON.parse(initParams) as Record<string, unknown>);
        const answer = await ask(next, { jsonrpc: '2.0', id: 0, method: 'initialize', params });
        if (!('result' in answer)) throw new Error(`initialize refused: ${JSON.stringify(answer.error)}`);
        await next.correlator.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        if (ended) break; // end() closed `starting` meanwhile
        // Only now may requests reach it: nothing goes to a server before its handshake.
        upstream = next;
        starting = undefined;
        opening = false;
        resolveReady();
        return;
      } catch (err) {
        logger.warn({ err }, 'upstream restart failed');
        starting = undefined;
        await next?.close('restart failed');
      }
    }
    opening = false;
    resolveReady();
    await session.end(`upstream could not be restarted: ${reason.message}`);
  };

  const dispatch = (requests: JsonRpcRequest[], stream: OutStream) => {
    const connection = upstream;
    for (const request of requests) {
      const key = idKey(request.id);
      if (inflight.has(key)) {
        const error = new GatewayError('GW_INVALID_REQUEST', 'A request with this id is already in flight in this session', {
          reason: 'duplicate id',
        });
        streams.deliver(stream, JSON.stringify(toErrorResponse(request.id, error)), true);
        continue;
      }
      const rec: InFlight = { key, clientId: request.id, stream, upstreamId: 0 };
      if (connection === undefined) {
        handler.onerror(new GatewayError('GW_UPSTREAM_CLOSED', 'Session has no upstream connection', { target: target.name }), rec);
        continue;
      }
      inflight.set(key, rec);
      rec.upstreamId = connection.correlator.request(request, handler, rec, target.timeouts);
    }
  };

  /**
   * The downstream went away with requests still running: tell the upstream, so it stops work
   * nobody will read (basic/utilities/cancellation). Their pending entries stay, so closing the
   * connection next still fails each one onto its stream.
   */
  const cancelInflight = async (connection: UpstreamConnection, reason: string) => {
    const sends: Array<Promise<void>> = [];
    for (const rec of inflight.values()) {
      const params = { requestId: rec.upstreamId, reason: `Session ended: ${reason}` };
      sends.push(connection.correlator.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params }).catch(() => undefined));
    }
    await Promise.all(sends);
  };

  const session: Session = {
    id,
    endpoint,
    lastActivity: Date.now(),
    get protocolVersion() {
      return protocolVersion;
    },
    get ended() {
      return ended;
    },
    get busy() {
      return opening || inflight.size > 0 || (upstream?.correlator.inflight ?? 0) > 0 || streams.busy;
    },
    get usage() {
      const children = ownsChild(target) && (upstream ?? starting) !== undefined ? [target.name] : [];
      return { initializing: opening, streamed, children };
    },

    async initialize(request) {
      const clientId = request.id;
      opening = true;
      try {
        const connection = await connect();
        // The client's own initialize goes first, and nothing else can arrive before its answer
        // (the session id is not out yet), so the connection is published at once.
        upstream = connection;
        starting = undefined;
        initParams = JSON.stringify(request.params ?? {});
        const answer = await ask(connection, request);
        const result = 'result' in answer ? answer.result : undefined;
        if (isObject(result) && typeof result.protocolVersion === 'string') {
          protocolVersion = result.protocolVersion;
          logger.info({ protocolVersion, pid: connection.pid }, 'session initialized');
        } else {
          await session.end('initialize failed');
        }
        return answer;
      } catch (err) {
        const error = toGatewayError(err);
        if (error.code === 'GW_INTERNAL') logger.error({ err, correlationId: error.details.correlationId }, 'initialize failed');
        await session.end('initialize failed');
        return toErrorResponse(clientId, error);
      } finally {
        opening = false;
      }
    },

    handleRequests(requests, sink, batch) {
      const stream = streams.open(sink, requests.length, batch);
      if (upstream === undefined && !ended) {
        void ready.then(() => dispatch(requests, stream));
        return;
      }
      dispatch(requests, stream);
    },

    async handleNotification(notification) {
      if (notification.method === 'notifications/cancelled') {
        const requestId = cancelledRequestId(notification.params);
        if (requestId === undefined) {
          logger.warn('notifications/cancelled from the client without a usable requestId; dropped');
          return;
        }
        const rec = inflight.get(idKey(requestId));
        if (rec === undefined) return; // already answered, or never seen: nothing to cancel
        inflight.delete(rec.key);
        const reason = typeof (notification.params as JsonObject).reason === 'string' ? ((notification.params as JsonObject).reason as string) : undefined;
        upstream?.correlator.cancel(rec.upstreamId, reason);
        const error = new GatewayError('GW_REQUEST_CANCELLED', undefined, { target: target.name });
        streams.drop(rec.stream, JSON.stringify(toErrorResponse(rec.clientId, error)));
        return;
      }
      await ready;
      await upstream?.correlator.send(notification);
    },

    async handleResponse(response) {
      const downstreamId = typeof response.id === 'number' ? response.id : NaN;
      const entry = serverRequests.get(downstreamId);
      if (entry === undefined) {
        logger.debug({ id: response.id }, 'answer to no server->client request of ours; dropped');
        return;
      }
      serverRequests.delete(downstreamId);
      serverRequestIds.delete(idKey(entry.upstreamId));
      response.id = entry.upstreamId;
      await upstream?.correlator.send(response);
    },

    openStream(sink, lastEventId) {
      streamed = true;
      if (lastEventId !== undefined && streams.resume(sink, lastEventId)) return true;
      return streams.attachStandalone(sink);
    },

    idle() {
      return upstream?.correlator.idle() ?? Promise.resolve();
    },

    end(reason) {
      if (endPromise) return endPromise;
      ended = true;
      const live = upstream;
      const connection = upstream ?? starting;
      upstream = undefined;
      starting = undefined;
      logger.info({ reason }, 'session ended');
      endPromise = (async () => {
        try {
          if (live !== undefined && inflight.size > 0) await cancelInflight(live, reason);
          // Closing the upstream fails what is pending (each answer reaches its stream) first.
          await connection?.close(reason);
        } finally {
          streams.endAll();
          onended(session);
        }
      })();
      return endPromise;
    },
  };
  return session;
}

/** The handshake (initialize, first or on restart): resolve with the answer or an error envelope. */
const ownHandler: PendingHandler<{ resolve: (r: JsonRpcResponse) => void; clientId: RequestId; explain: (e: GatewayError) => GatewayError }> = {
  onresponse(response, ctx) {
    ctx.resolve(response);
  },
  onerror(error, ctx) {
    ctx.resolve(toErrorResponse(ctx.clientId, ctx.explain(error)));
  },
};
