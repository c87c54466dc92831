/**
 * The session core's downstream requests: the in-flight map by client id, routing each request to
 * the member that owns it (or the gateway's own answer), forwarding it to that member's correlator
 * (which rewrites ids and progress tokens), delivering the answer to the request's stream, and
 * withdrawing a request the client no longer wants (a cancel, or a cancelOnClose stream that lost
 * its client). With tracing on, each request gets a SERVER span and its upstream call a CLIENT
 * child whose W3C context goes upstream with it (telemetry/tracing.ts); off, none of that runs.
 * The way from a routed request to its member and of its answer back (the judgments: entrance,
 * step-up, limit, pinning, hooks, send, response hooks, redaction) is the chain (chain/chain.ts);
 * the audit line of every request is written here, as it ends.
 */
import { GatewayError, toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import { cancelledRequestId, idKey, isObject } from '../jsonrpc/envelope.ts';
import { isAudited, namedBy, subjectOf } from '../jsonrpc/methods.ts';
import type { JsonObject, JsonRpcErrorObject, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import type { AuditSink } from '../log/audit-record.ts';
import {
  eraOf,
  ownOrigin,
  parentCarrier,
  startRequestSpan,
  type RequestOrigin,
  type TraceCarrier,
} from '../telemetry/tracing.ts';
import type { Observer, RequestOutcome } from '../log/observer.ts';
import type { Flavour, LocalAnswer, Pending } from './flavour.ts';
import type { Principal } from '../upstream/caller.ts';
import type { ChainGates } from './chain/gates.ts';
import type { InflightBudget } from './inflight.ts';
import type { Member } from './member.ts';
import type { SessionCore } from './session.ts';
import type { OutStream, StreamSet } from './streams.ts';
import { endSpans, endSpansWith } from './request-spans.ts';
import { createChain, type Traced } from './chain/chain.ts';
import { askedOf } from '../router/exposure.ts';
import { auditEntryOf } from './audit-entry.ts';

const DUPLICATE = 'A request with this id is already in flight in this session';

/** The requests that get an audit record (jsonrpc/methods.ts): what they name, from when, and their arguments if captured. */
function auditedOf(request: JsonRpcRequest, audit: AuditSink): Pending['audited'] {
  if (!isAudited(request.method)) return undefined;
  const args = audit.capture.arguments ? request.params?.arguments : undefined;
  return { name: namedBy(request.method, request.params) ?? '', started: performance.now(), ...(args === undefined ? {} : { arguments: args }) };
}

/** What an observed request names (ObservedRequest.subject); list requests: their cursor, if any. */
function observedSubject(request: JsonRpcRequest): string | undefined {
  if (subjectOf(request.method) !== undefined) return namedBy(request.method, request.params);
  const cursor = request.method.endsWith('/list') ? request.params?.cursor : undefined;
  return typeof cursor === 'string' ? cursor : undefined;
}

export interface Requests {
  /** Client id key -> the request being served. */
  readonly inflight: Map<string, Pending>;
  /** The flavour that routes and answers; set once, right after the core builds it. */
  flavour: Flavour | undefined;
  /** `carrier`: where the client's trace context may be besides `_meta` (the HTTP request's headers). */
  dispatch(request: JsonRpcRequest, stream: OutStream, session: SessionCore, carrier?: TraceCarrier, caller?: Principal): void;
  /** Cancels `rec` upstream and answers nothing more (HTTP still gets its fallback answer). */
  withdraw(rec: Pending, reason: string | undefined): void;
  /** The client's notifications/cancelled. */
  cancel(params: unknown): void;
  /** The session has ended: whatever is still in the map is counted out of the gateway's caps. */
  releaseAll(): void;
}

/** What a request's bookkeeping reports to, besides its stream. */
export interface RequestsOptions {
  /** The gateway's in-flight count, kept as requests enter and leave the map. */
  readonly budget: InflightBudget;
  /** Where audit entries go (one per audited request as it ends: log/audit-record.ts); undefined: none. */
  readonly audit: AuditSink | undefined;
  /** Told as each request starts and ends (log/observer.ts). */
  readonly observer: Observer;
  /** Tracing on (spans per request and upstream call); undefined: off. */
  readonly traced: Traced | undefined;
  /** The chain's gates (rate limit, step-up, hooks and redaction), judged once a request is routed. */
  readonly gates: ChainGates;
  /** Several targets behind one endpoint (CoreOptions.namespaced). */
  readonly namespaced: boolean;
}

export function createRequests(streams: StreamSet, logger: Logger, { budget, audit, observer, traced, gates, namespaced }: RequestsOptions): Requests {
  const inflight = new Map<string, Pending>();
  // Clock reads only for someone who reads them.
  const timed = observer.observing;

  /** Out of the map and the count, once (a late answer after a withdraw must not remove a newer request with the same id). */
  const release = (rec: Pending) => {
    if (rec.settled) return;
    rec.settled = true;
    inflight.delete(rec.key);
    budget.active--;
  };

  /** Tells the observer, and hands the audit entry of a request that ends to the trail (`result`: a captured answer). */
  const record = (rec: Pending, outcome: RequestOutcome, code?: string, correlationId?: string, result?: unknown) => {
    // A withdrawn request was reported as cancelled: whatever it still runs into is not news.
    if (timed && !rec.cancelled) {
      rec.endedAt = performance.now();
      // A failing observer (metrics, status page) must never keep an answer from its client.
      try {
        observer.requestEnded(rec, outcome, code, correlationId);
      } catch (err) {
        logger.error({ err }, 'an observer failed on a request that ended; the request is answered anyway');
      }
    }
    if (rec.audited === undefined || audit === undefined) return;
    audit.record(auditEntryOf(rec, outcome, code, correlationId, result));
  };

  const deliver = (rec: Pending, answer: JsonObject) => {
    release(rec);
    if (!rec.cancelled) streams.send(rec.stream, answer, true);
  };
  const origins = new Map<string, RequestOrigin>();
  const fail = (rec: Pending, err: unknown) => {
    const error = toGatewayError(err);
    // Counted where it happened: the session's own child, or a shared upstream's breaker, per caller.
    if (error.code === 'GW_UPSTREAM_TIMEOUT') rec.member?.timedOut(rec.session.principal ?? rec.session.id, rec.probe);
    if (error.code === 'GW_INTERNAL') logger.error({ err, correlationId: error.details.correlationId }, 'request failed');
    else logger.info({ code: error.code, clientId: rec.clientId, era: eraOf(rec.protocolVersion) }, error.message);
    const correlationId = error.details.correlationId;
    record(rec, 'error', error.code, typeof correlationId === 'string' ? correlationId : undefined);
    const answer = toErrorResponse(rec.clientId, error);
    if (rec.span !== undefined) endSpans(rec, answer.error);
    deliver(rec, answer as unknown as JsonObject);
  };

  /** A member's answer, as the client gets it (after the response hooks, if any). */
  const answer = (rec: Pending, response: JsonRpcResponse) => {
    const captured = rec.audited !== undefined && audit?.capture.results === true ? (response.result ?? response.error) : undefined;
    if (timed || rec.audited !== undefined) record(rec, 'error' in response ? 'error' : 'ok', undefined, undefined, captured);
    if (rec.span !== undefined) endSpansWith(rec, response);
    deliver(rec, (requests.flavour as Flavour).answer(rec, response) as unknown as JsonObject);
  };

  /** Filtered or denied by policy: the client sees "unknown", the audit line says what it was. */
  const refuse = (rec: Pending, refusal: JsonRpcErrorObject) => {
    record(rec, 'denied');
    if (rec.span !== undefined) endSpans(rec, refusal);
    deliver(rec, { jsonrpc: '2.0', id: rec.clientId as JsonObject[string], error: refusal as unknown as JsonObject });
  };

  const forward = createChain({ streams, logger, observer, timed, traced, gates, namespaced, fail, answer, refuse, record, release });

  const answerLocally = (rec: Pending, to: LocalAnswer) => {
    if ('refuse' in to) return refuse(rec, to.refuse);
    if (timed || rec.audited !== undefined) record(rec, 'ok');
    if (rec.span !== undefined) endSpans(rec, undefined);
    deliver(rec, { jsonrpc: '2.0', id: rec.clientId as JsonObject[string], result: to.local });
  };

  const requests: Requests = {
    inflight,
    flavour: undefined,

    dispatch(request, stream, session, carrier, caller) {
      // A request whose era is its own (2026) has no session id space: its id is unique in its stream.
      const version = stream.options.protocolVersion;
      const key = version === undefined ? idKey(request.id) : `${stream.id}\u0000${idKey(request.id)}`;
      if (inflight.has(key)) {
        const error = new GatewayError('GW_INVALID_REQUEST', DUPLICATE, { reason: 'duplicate id' });
        streams.send(stream, toErrorResponse(request.id, error) as unknown as JsonObject, true);
        return;
      }
      // Progressive discovery: a call through the `call_tool` meta-tool becomes the call it names
      // before anything reads the request, so every judgment and the audit line see the real tool.
      requests.flavour?.unwrap?.(request);
      const audited = audit === undefined ? undefined : auditedOf(request, audit);
      // Before routing: an aggregate rewrites the names, and the span carries the client's.
      const span = traced === undefined ? undefined : startRequestSpan(traced.tracing, request, parentCarrier(carrier, request), version === undefined ? traced.origin : ownOrigin(traced.origin, version, origins));
      const rec: Pending = {
        key,
        clientId: request.id,
        stream,
        method: request.method,
        session,
        protocolVersion: version ?? session.protocolVersion,
        member: undefined,
        upstreamId: 0,
        cancelled: false,
        settled: false,
        probe: false,
        audited,
        span,
        upstreamSpan: undefined,
        subject: timed ? observedSubject(request) : undefined,
        caller,
        asked: askedOf(request),
        task: undefined,
        judged: undefined,
        startedAt: timed ? performance.now() : 0,
        sentAt: 0,
        upstreamMs: 0,
        endedAt: 0,
      };
      inflight.set(key, rec);
      budget.active++;
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
      release(rec);
      rec.cancelled = true;
      if (rec.member !== undefined) rec.member.connection?.correlator.cancel(rec.upstreamId, reason);
      const error = new GatewayError('GW_REQUEST_CANCELLED', undefined, rec.member ? { target: rec.member.name } : {});
      const answer = toErrorResponse(rec.clientId, error);
      if (rec.span !== undefined) endSpans(rec, answer.error);
      streams.drop(rec.stream, answer as unknown as JsonObject);
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

    releaseAll() {
      for (const rec of inflight.values()) release(rec);
    },
  };
  return requests;
}
