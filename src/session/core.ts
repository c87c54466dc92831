/**
 * The session core: one downstream peer and N >= 1 upstream members. One implementation, whatever
 * the endpoint, of what every session does: the in-flight map by client id, forwarding to the
 * member that owns a request (its correlator rewrites ids and progress tokens), cancel translation
 * in both directions, server->client requests and their answers (server-messages.ts), and ending
 * (cancel what runs upstream, close the members, end the streams).
 *
 * What differs between endpoints is a `Flavour` (flavour.ts): how the 2025 initialize is answered,
 * which member owns a request (or whether the gateway answers it itself), and how a member's answer
 * is written. The session built here is era-neutral; era-2025.ts puts the 2025 layer on top.
 * A single-target endpoint (single.ts) forwards to its one member, names untouched; an aggregate
 * (aggregate-session.ts) namespaces, merges lists and routes by name.
 */
import { GatewayError, toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import { cancelledRequestId, idKey, isObject } from '../jsonrpc/envelope.ts';
import type { JsonRpcNotification, JsonRpcRequest } from '../jsonrpc/types.ts';
import type { PendingHandler } from '../upstream/correlator.ts';
import { withEra2025 } from './era-2025.ts';
import { createEventLog } from './event-log.ts';
import type { CoreOptions, CoreParts, Flavour, LocalAnswer, Pending } from './flavour.ts';
import { ownsChild } from './limits.ts';
import type { Member, MemberHooks } from './member.ts';
import { createServerMessages } from './server-messages.ts';
import type { Session, SessionCore } from './session.ts';
import { createStreamSet, type OutStream } from './streams.ts';


const DUPLICATE = 'A request with this id is already in flight in this session';

/**
 * Builds a session: the era-neutral core, the flavour `build` makes from its parts, and the 2025
 * layer (era-2025.ts) on top.
 */
export function createSessionCore(options: CoreOptions, build: (parts: CoreParts) => Flavour): Session {
  const { id, endpoint, limits, logger, onended } = options;
  let protocolVersion: string | undefined;
  const streams = createStreamSet({
    log: createEventLog(limits.replayEvents, limits.replayBytes),
    logger,
    priming: () => protocolVersion !== undefined && protocolVersion >= '2025-11-25',
    keepFinished: 64,
    onabandon: (stream) => {
      for (const rec of inflight.values()) if (rec.stream === stream) withdraw(rec, 'The client closed the response stream');
    },
  });
  const inflight = new Map<string, Pending>();
  let ended = false;
  let endPromise: Promise<void> | undefined;
  let opening = false;
  /** The client opened a standalone stream at least once (limits.ts: TTL class). */
  let streamed = false;
  const messages = createServerMessages({
    streams,
    limits,
    logger,
    tables: options.tables,
    live: () => !ended && protocolVersion !== undefined,
    namespaced: options.namespaced,
  });

  const deliver = (rec: Pending, text: string) => {
    inflight.delete(rec.key);
    if (!rec.cancelled) streams.deliver(rec.stream, text, true);
  };
  const fail = (rec: Pending, err: unknown) => {
    const error = toGatewayError(err);
    if (error.code === 'GW_INTERNAL') logger.error({ err, correlationId: error.details.correlationId }, 'request failed');
    else logger.info({ code: error.code, clientId: rec.clientId }, error.message);
    deliver(rec, JSON.stringify(toErrorResponse(rec.clientId, error)));
  };

  const handler: PendingHandler<Pending> = {
    onresponse(response, rec) {
      deliver(rec, flavour.answerText(rec, response));
    },
    onerror(error, rec) {
      fail(rec, error);
    },
    onprogress(notification, rec) {
      if (!rec.cancelled) streams.deliver(rec.stream, JSON.stringify(notification), false);
    },
  };

  const send = (rec: Pending, member: Member, request: JsonRpcRequest) => {
    if (rec.cancelled) return;
    const connection = member.connection;
    if (connection === undefined) return fail(rec, new GatewayError('GW_UPSTREAM_CLOSED', undefined, { target: member.name }));
    rec.member = member;
    rec.upstreamId = connection.correlator.request(request, handler, rec, member.target.timeouts);
  };

  const forward = (rec: Pending, member: Member, request: JsonRpcRequest) => {
    // Hot path: an open member takes the request at once; only a first use (or a restart) waits.
    if (member.connection !== undefined) return send(rec, member, request);
    member.connect().then(
      () => send(rec, member, request),
      (err: unknown) => fail(rec, err),
    );
  };

  const dispatch = (request: JsonRpcRequest, stream: OutStream) => {
    const key = idKey(request.id);
    if (inflight.has(key)) {
      const error = new GatewayError('GW_INVALID_REQUEST', DUPLICATE, { reason: 'duplicate id' });
      streams.deliver(stream, JSON.stringify(toErrorResponse(request.id, error)), true);
      return;
    }
    const rec: Pending = { key, clientId: request.id, stream, method: request.method, member: undefined, upstreamId: 0, cancelled: false };
    inflight.set(key, rec);
    let routed: Member | Promise<Member | LocalAnswer>;
    try {
      routed = flavour.route(request);
    } catch (err) {
      return fail(rec, err);
    }
    if (!(routed instanceof Promise)) return forward(rec, routed, request);
    routed.then(
      (to) => {
        if ('local' in to) deliver(rec, JSON.stringify({ jsonrpc: '2.0', id: rec.clientId, result: to.local }));
        else if ('refuse' in to) deliver(rec, JSON.stringify({ jsonrpc: '2.0', id: rec.clientId, error: to.refuse }));
        else forward(rec, to, request);
      },
      (err: unknown) => fail(rec, err),
    );
  };

  /** A request the client no longer wants: cancel it upstream, answer nothing more. */
  const withdraw = (rec: Pending, reason: string | undefined) => {
    inflight.delete(rec.key);
    rec.cancelled = true;
    if (rec.member !== undefined) rec.member.connection?.correlator.cancel(rec.upstreamId, reason);
    const error = new GatewayError('GW_REQUEST_CANCELLED', undefined, rec.member ? { target: rec.member.name } : {});
    streams.drop(rec.stream, JSON.stringify(toErrorResponse(rec.clientId, error)));
  };

  /** The client's notifications/cancelled. */
  const cancel = (params: unknown) => {
    const requestId = cancelledRequestId(params);
    if (requestId === undefined || !isObject(params)) {
      logger.warn('notifications/cancelled from the client without a usable requestId; dropped');
      return;
    }
    const rec = inflight.get(idKey(requestId));
    if (rec === undefined) return; // already answered, or never seen: nothing to cancel
    withdraw(rec, typeof params.reason === 'string' ? params.reason : undefined);
  };

  /** Any other notification concerns every member the session has opened. */
  const broadcast = async (notification: JsonRpcNotification) => {
    const initialized = notification.method === 'notifications/initialized';
    const to: Member[] = [];
    for (const m of flavour.members()) {
      // Each member got its own `initialized`, except one the client's own initialize opened.
      if (initialized ? m.transparent : m.connection !== undefined || (m.transparent && m.failure === undefined)) to.push(m);
    }
    const one = to.length === 1;
    await Promise.all(
      to.map((m) => m.connect().then((c) => c.correlator.send(one ? notification : structuredClone(notification)), () => undefined)),
    );
  };

  const hooks: MemberHooks = {
    onrequest: messages.request,
    onnotification: messages.notification,
    onexit: (member, reason, final) => flavour.memberExit(member, reason, final),
    onready: (member) => flavour.memberReady(member),
  };

  const session: SessionCore = {
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
      if (opening || inflight.size > 0 || streams.busy) return true;
      for (const m of flavour.members()) if ((m.connection?.correlator.inflight ?? 0) > 0) return true;
      return false;
    },
    get usage() {
      const children: string[] = [];
      for (const m of flavour.members()) if (m.live && ownsChild(m.target)) children.push(m.name);
      return { initializing: opening, streamed, children };
    },
    serve(requests, sink, streamOptions) {
      const stream = streams.open(sink, requests.length, streamOptions);
      for (const request of requests) dispatch(request, stream);
    },
    async handleNotification(notification) {
      if (notification.method === 'notifications/cancelled') return cancel(notification.params);
      await broadcast(notification);
    },
    handleResponse(response) {
      return messages.answer(response);
    },
    async idle() {
      await Promise.all([...flavour.members()].map((m) => m.connection?.correlator.idle()));
    },
    end(reason) {
      if (endPromise) return endPromise;
      ended = true;
      messages.stop();
      logger.info({ reason }, 'session ended');
      endPromise = (async () => {
        try {
          // The downstream went away with calls still running: tell each owning member, so it
          // stops work nobody will read (basic/utilities/cancellation). Pending entries stay:
          // closing the member still answers each one onto its stream.
          await Promise.all(
            [...inflight.values()].map((rec) =>
              rec.member?.connection?.correlator
                .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: rec.upstreamId, reason: `Session ended: ${reason}` } })
                .catch(() => undefined),
            ),
          );
          await Promise.all([...flavour.members()].map((m) => m.close(reason)));
        } finally {
          streams.endAll();
          onended(session);
        }
      })();
      return endPromise;
    },
  };

  const flavour = build({
    logger,
    streams,
    messages,
    hooks,
    session,
    negotiated(version) {
      protocolVersion = version;
    },
    opening(on) {
      opening = on;
    },
  });
  return withEra2025(session, {
    streams,
    initialize: (request) => flavour.initialize(request),
    streamed: () => {
      streamed = true;
    },
  });
}
