/**
 * The session core: one downstream peer and N >= 1 upstream members. One implementation, whatever
 * the endpoint, of what every session does: the in-flight map by client id, forwarding to the
 * member that owns a request (its correlator rewrites ids and progress tokens), cancel translation
 * in both directions, server->client requests and their answers (server-messages.ts), and ending
 * (cancel what runs upstream, close the members, end the streams).
 *
 * What differs between endpoints is a `Flavour`: how the 2025 initialize is answered, which member
 * owns a request (or whether the gateway answers it itself), and how a member's answer is written.
 * A single-target endpoint (single.ts) forwards to its one member, names untouched; an aggregate
 * (aggregate-session.ts) namespaces, merges lists and routes by name.
 */
import { GatewayError, toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import { cancelledRequestId, idKey, isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcErrorObject, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, RequestId } from '../jsonrpc/types.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { NameTable } from '../router/name-table.ts';
import type { PendingHandler } from '../upstream/correlator.ts';
import { createEventLog } from './event-log.ts';
import { ownsChild } from './limits.ts';
import type { Member, MemberHooks } from './member.ts';
import { createServerMessages, type ServerMessages } from './server-messages.ts';
import type { Session } from './session.ts';
import { createStreamSet, type OutStream, type StreamSet } from './streams.ts';

/** A downstream request being served: by the gateway itself, or forwarded to `member`. */
export interface Pending {
  readonly key: string;
  readonly clientId: RequestId;
  readonly stream: OutStream;
  readonly method: string;
  member: Member | undefined;
  upstreamId: number;
  cancelled: boolean;
}

/**
 * The gateway's own answer to a request, no member involved: a result (a merged list, a ping), or
 * an error object sent as it is (a filtered name refused in the words servers use for an unknown one).
 */
export type LocalAnswer = { readonly local: JsonObject } | { readonly refuse: JsonRpcErrorObject };

/** What makes one kind of session: see the file comment. */
export interface Flavour {
  /** Every member, in config order. */
  members(): Iterable<Member>;
  /** The 2025 initialize: resolves with the answer to send (and calls `negotiated` on success). */
  initialize(request: JsonRpcRequest): Promise<JsonRpcResponse>;
  /** The member that owns `request` (params rewritten for it), or the gateway's own answer. */
  route(request: JsonRpcRequest): Member | Promise<Member | LocalAnswer>;
  /** The text to deliver for a member's answer (ids already restored). */
  answerText(rec: Pending, response: JsonRpcResponse): string;
  /** A member went away; `final`: it will not come back in this session. */
  memberExit(member: Member, reason: GatewayError, final: boolean): void;
  memberReady(member: Member): void;
}

/** What the core hands the flavour it builds. */
export interface CoreParts {
  readonly logger: Logger;
  readonly streams: StreamSet;
  readonly messages: ServerMessages;
  /** Hooks for the members the flavour creates. */
  readonly hooks: MemberHooks;
  /** The 2025 handshake settled on this revision. */
  negotiated(version: string): void;
  /** Marks the session as opening upstreams (busy, and un-initialized for the limits). */
  opening(on: boolean): void;
  /** The session itself (to end it). */
  readonly session: Session;
}

export interface CoreOptions {
  id: string;
  endpoint: string;
  limits: GatewayConfig['limits'];
  /** Already bound to the session (and target or endpoint). */
  logger: Logger;
  onended: (session: Session) => void;
  /** Several targets behind one endpoint (server-messages.ts). */
  namespaced: boolean;
  tables: { readonly tools: NameTable; readonly prompts: NameTable };
}

const DUPLICATE = 'A request with this id is already in flight in this session';

export function createSessionCore(options: CoreOptions, build: (parts: CoreParts) => Flavour): Session {
  const { id, endpoint, limits, logger, onended } = options;
  let protocolVersion: string | undefined;
  const streams = createStreamSet({
    log: createEventLog(limits.replayEvents, limits.replayBytes),
    logger,
    priming: () => protocolVersion !== undefined && protocolVersion >= '2025-11-25',
    keepFinished: 64,
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

  /** The client withdraws one of its requests: cancel it upstream, answer nothing more. */
  const cancel = (params: unknown) => {
    const requestId = cancelledRequestId(params);
    if (requestId === undefined || !isObject(params)) {
      logger.warn('notifications/cancelled from the client without a usable requestId; dropped');
      return;
    }
    const rec = inflight.get(idKey(requestId));
    if (rec === undefined) return; // already answered, or never seen: nothing to cancel
    inflight.delete(rec.key);
    rec.cancelled = true;
    const reason = typeof params.reason === 'string' ? params.reason : undefined;
    if (rec.member !== undefined) rec.member.connection?.correlator.cancel(rec.upstreamId, reason);
    const error = new GatewayError('GW_REQUEST_CANCELLED', undefined, rec.member ? { target: rec.member.name } : {});
    streams.drop(rec.stream, JSON.stringify(toErrorResponse(rec.clientId, error)));
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
      if (opening || inflight.size > 0 || streams.busy) return true;
      for (const m of flavour.members()) if ((m.connection?.correlator.inflight ?? 0) > 0) return true;
      return false;
    },
    get usage() {
      const children: string[] = [];
      for (const m of flavour.members()) if (m.live && ownsChild(m.target)) children.push(m.name);
      return { initializing: opening, streamed, children };
    },
    initialize(request) {
      return flavour.initialize(request);
    },
    handleRequests(requests, sink, batch) {
      const stream = streams.open(sink, requests.length, batch);
      for (const request of requests) dispatch(request, stream);
    },
    async handleNotification(notification) {
      if (notification.method === 'notifications/cancelled') return cancel(notification.params);
      await broadcast(notification);
    },
    handleResponse(response) {
      return messages.answer(response);
    },
    openStream(sink, lastEventId) {
      streamed = true;
      if (lastEventId !== undefined && streams.resume(sink, lastEventId)) return true;
      return streams.attachStandalone(sink);
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
  return session;
}
