/**
 * The session core's downstream requests: the in-flight map by client id, routing each request to
 * the member that owns it (or the gateway's own answer), forwarding it to that member's correlator
 * (which rewrites ids and progress tokens), delivering the answer to the request's stream, and
 * withdrawing a request the client no longer wants (a cancel, or a cancelOnClose stream that lost
 * its client).
 */
import { GatewayError, toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import { cancelledRequestId, idKey, isObject } from '../jsonrpc/envelope.ts';
import type { JsonRpcRequest } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import type { Observer, RequestOutcome } from '../log/observer.ts';
import type { PendingHandler } from '../upstream/correlator.ts';
import type { Flavour, LocalAnswer, Pending } from './flavour.ts';
import type { Member } from './member.ts';
import type { SessionCore } from './session.ts';
import type { OutStream, StreamSet } from './streams.ts';

const DUPLICATE = 'A request with this id is already in flight in this session';

/** The requests that get an audit line (logging.audit), and what names their subject. */
const AUDITED: Readonly<Record<string, 'name' | 'uri'>> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

function auditedOf(request: JsonRpcRequest): Pending['audited'] {
  const field = AUDITED[request.method];
  if (field === undefined) return undefined;
  const name = request.params?.[field];
  return { name: typeof name === 'string' ? name : '', started: performance.now() };
}

/** What an observed request names (ObservedRequest.subject); list requests: their cursor, if any. */
function subjectOf(request: JsonRpcRequest): string | undefined {
  const field = AUDITED[request.method] ?? (request.method.endsWith('/list') ? 'cursor' : undefined);
  const value = field === undefined ? undefined : request.params?.[field];
  return typeof value === 'string' ? value : undefined;
}

export interface Requests {
  /** Client id key -> the request being served. */
  readonly inflight: Map<string, Pending>;
  /** The flavour that routes and answers; set once, right after the core builds it. */
  flavour: Flavour | undefined;
  dispatch(request: JsonRpcRequest, stream: OutStream, session: SessionCore): void;
  /** Cancels `rec` upstream and answers nothing more (HTTP still gets its fallback answer). */
  withdraw(rec: Pending, reason: string | undefined): void;
  /** The client's notifications/cancelled. */
  cancel(params: unknown): void;
}

/**
 * `audit`: where audit lines go (one per audited request as it ends); undefined: none.
 * `observer`: told as each request starts and ends (log/observer.ts).
 */
export function createRequests(streams: StreamSet, logger: Logger, audit: Logger | undefined, observer: Observer): Requests {
  const inflight = new Map<string, Pending>();
  // Clock reads only for someone who reads them.
  const timed = observer.observing;

  /** Tells the observer, and writes the audit line of a request that ends: who (the logger's bindings), what, how, how long. */
  const record = (rec: Pending, outcome: RequestOutcome, code?: string, correlationId?: string) => {
    // A withdrawn request was reported as cancelled: whatever it still runs into is not news.
    if (timed && !rec.cancelled) {
      rec.endedAt = performance.now();
      observer.requestEnded(rec, outcome, code, correlationId);
    }
    const a = rec.audited;
    if (a === undefined || audit === undefined) return;
    const ms = Math.round((performance.now() - a.started) * 10) / 10;
    audit.info({ method: rec.method, name: a.name, target: rec.member?.name, outcome, ...(code ? { code } : {}), ms }, 'audit');
  };

  const deliver = (rec: Pending, text: string) => {
    inflight.delete(rec.key);
    if (!rec.cancelled) streams.deliver(rec.stream, text, true);
  };
  const fail = (rec: Pending, err: unknown) => {
    const error = toGatewayError(err);
    if (error.code === 'GW_INTERNAL') logger.error({ err, correlationId: error.details.correlationId }, 'request failed');
    else logger.info({ code: error.code, clientId: rec.clientId }, error.message);
    const correlationId = error.details.correlationId;
    record(rec, 'error', error.code, typeof correlationId === 'string' ? correlationId : undefined);
    deliver(rec, JSON.stringify(toErrorResponse(rec.clientId, error)));
  };

  const handler: PendingHandler<Pending> = {
    onresponse(response, rec) {
      if (timed) {
        rec.upstreamMs = performance.now() - rec.sentAt;
        if (rec.method.endsWith('/list') && 'result' in response && rec.member !== undefined) {
          observer.listed(rec.member.name, rec.method, response.result, rec.subject === undefined);
        }
      }
      if (timed || rec.audited !== undefined) record(rec, 'error' in response ? 'error' : 'ok');
      deliver(rec, (requests.flavour as Flavour).answerText(rec, response));
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
    if (timed) rec.sentAt = performance.now();
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

  const answerLocally = (rec: Pending, to: LocalAnswer) => {
    if ('local' in to) {
      if (timed) record(rec, 'ok');
      deliver(rec, JSON.stringify({ jsonrpc: '2.0', id: rec.clientId, result: to.local }));
    } else {
      // Filtered or denied by policy: the client sees "unknown", the audit line says what it was.
      record(rec, 'denied');
      deliver(rec, JSON.stringify({ jsonrpc: '2.0', id: rec.clientId, error: to.refuse }));
    }
  };

  const requests: Requests = {
    inflight,
    flavour: undefined,

    dispatch(request, stream, session) {
      const key = idKey(request.id);
      if (inflight.has(key)) {
        const error = new GatewayError('GW_INVALID_REQUEST', DUPLICATE, { reason: 'duplicate id' });
        streams.deliver(stream, JSON.stringify(toErrorResponse(request.id, error)), true);
        return;
      }
      const audited = audit === undefined ? undefined : auditedOf(request);
      const rec: Pending = {
        key,
        clientId: request.id,
        stream,
        method: request.method,
        session,
        member: undefined,
        upstreamId: 0,
        cancelled: false,
        audited,
        subject: timed ? subjectOf(request) : undefined,
        startedAt: timed ? performance.now() : 0,
        sentAt: 0,
        upstreamMs: 0,
        endedAt: 0,
      };
      inflight.set(key, rec);
      if (timed) observer.requestStarted(rec);
      let routed: Member | Promise<Member | LocalAnswer>;
      try {
        routed = (requests.flavour as Flavour).route(request);
      } catch (err) {
        return fail(rec, err);
      }
      if (!(routed instanceof Promise)) return forward(rec, routed, request);
      routed.then(
        (to) => ('local' in to || 'refuse' in to ? answerLocally(rec, to) : forward(rec, to, request)),
        (err: unknown) => fail(rec, err),
      );
    },

    withdraw(rec, reason) {
      record(rec, 'cancelled');
      inflight.delete(rec.key);
      rec.cancelled = true;
      if (rec.member !== undefined) rec.member.connection?.correlator.cancel(rec.upstreamId, reason);
      const error = new GatewayError('GW_REQUEST_CANCELLED', undefined, rec.member ? { target: rec.member.name } : {});
      streams.drop(rec.stream, JSON.stringify(toErrorResponse(rec.clientId, error)));
    },

    cancel(params) {
      const requestId = cancelledRequestId(params);
      if (requestId === undefined || !isObject(params)) {
        logger.warn('notifications/cancelled from the client without a usable requestId; dropped');
        return;
      }
      const rec = inflight.get(idKey(requestId));
      if (rec === undefined) return; // already answered, or never seen: nothing to cancel
      requests.withdraw(rec, typeof params.reason === 'string' ? params.reason : undefined);
    },
  };
  return requests;
}
