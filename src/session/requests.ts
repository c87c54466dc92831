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
import { GatewayError, toErrorResponse } from '../errors/gateway-error.ts';
import { cancelledRequestId, idKey, isObject } from '../jsonrpc/envelope.ts';
import { isAudited, namedBy, subjectOf } from '../jsonrpc/methods.ts';
import type { JsonObject, JsonRpcRequest } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import type { AuditSink } from '../log/audit-record.ts';
import { ownOrigin, parentCarrier, startRequestSpan, type RequestOrigin, type TraceCarrier } from '../telemetry/tracing.ts';
import type { Observer } from '../log/observer.ts';
import type { Flavour, LocalAnswer, Pending } from './flavour.ts';
import type { Principal } from '../upstream/caller.ts';
import type { ChainGates } from './chain/gates.ts';
import type { InflightBudget } from './inflight.ts';
import type { Member } from './member.ts';
import type { SessionCore } from './session.ts';
import type { OutStream, StreamSet } from './streams.ts';
import { endSpans } from './request-spans.ts';
import type { ForwardRequest, Traced } from './chain/chain.ts';
import { askedOf } from '../router/exposure.ts';
import { answerLocally, chainOf, fail, record, release, type RequestsState } from './request-outcomes.ts';

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

export function createRequests(streams: StreamSet, logger: Logger, options: RequestsOptions): Requests {
  return new RequestTable(streams, logger, options);
}

/**
 * The table is its own state (RequestsState); its methods are on the class, one copy for every
 * session. How a request ends (fail, answer, refuse, record, release) is in request-outcomes.ts.
 */
class RequestTable implements Requests, RequestsState {
  readonly streams: StreamSet;
  readonly logger: Logger;
  readonly budget: InflightBudget;
  readonly audit: AuditSink | undefined;
  readonly observer: Observer;
  readonly traced: Traced | undefined;
  readonly timed: boolean;
  readonly inflight = new Map<string, Pending>();
  readonly origins = new Map<string, RequestOrigin>();
  flavour: Flavour | undefined = undefined;
  private readonly forward: ForwardRequest;

  constructor(streams: StreamSet, logger: Logger, { budget, audit, observer, traced, gates, namespaced }: RequestsOptions) {
    this.streams = streams;
    this.logger = logger;
    this.budget = budget;
    this.audit = audit;
    this.observer = observer;
    this.traced = traced;
    // Clock reads only for someone who reads them.
    this.timed = observer.observing;
    this.forward = chainOf(this, gates, namespaced);
  }

  dispatch(request: JsonRpcRequest, stream: OutStream, session: SessionCore, carrier?: TraceCarrier, caller?: Principal): void {
    const { inflight, audit, traced, timed } = this;
    // A request whose era is its own (2026) has no session id space: its id is unique in its stream.
    const version = stream.options.protocolVersion;
    const key = version === undefined ? idKey(request.id) : `${stream.id}\u0000${idKey(request.id)}`;
    if (inflight.has(key)) {
      const error = new GatewayError('GW_INVALID_REQUEST', DUPLICATE, { reason: 'duplicate id' });
      this.streams.send(stream, toErrorResponse(request.id, error) as unknown as JsonObject, true);
      return;
    }
    // Progressive discovery: a call through the `call_tool` meta-tool becomes the call it names
    // before anything reads the request, so every judgment and the audit line see the real tool.
    this.flavour?.unwrap?.(request);
    const audited = audit === undefined ? undefined : auditedOf(request, audit);
    // Before routing: an aggregate rewrites the names, and the span carries the client's.
    const span = traced === undefined ? undefined : startRequestSpan(traced.tracing, request, parentCarrier(carrier, request), version === undefined ? traced.origin : ownOrigin(traced.origin, version, this.origins));
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
    this.budget.active++;
    if (timed) this.observer.requestStarted(rec);
    let routed: Member | Promise<Member | LocalAnswer>;
    try {
      routed = (this.flavour as Flavour).route(request);
    } catch (err) {
      return fail(this, rec, err);
    }
    if (!(routed instanceof Promise)) return this.forward(rec, routed, request);
    routed.then(
      (to) => ('local' in to || 'refuse' in to ? answerLocally(this, rec, to) : this.forward(rec, to, request)),
      (err: unknown) => fail(this, rec, err),
    );
  }

  withdraw(rec: Pending, reason: string | undefined): void {
    record(this, rec, 'cancelled');
    release(this, rec);
    rec.cancelled = true;
    if (rec.member !== undefined) rec.member.connection?.correlator.cancel(rec.upstreamId, reason);
    const error = new GatewayError('GW_REQUEST_CANCELLED', undefined, rec.member ? { target: rec.member.name } : {});
    const answer = toErrorResponse(rec.clientId, error);
    if (rec.span !== undefined) endSpans(rec, answer.error);
    this.streams.drop(rec.stream, answer as unknown as JsonObject);
  }

  cancel(params: unknown): void {
    const requestId = cancelledRequestId(params);
    if (requestId === undefined || !isObject(params)) {
      this.logger.warn('notifications/cancelled from the client without a usable requestId; dropped');
      return;
    }
    const rec = this.inflight.get(idKey(requestId));
    if (rec === undefined) return; // already answered, or never seen: nothing to cancel
    this.withdraw(rec, typeof params.reason === 'string' ? params.reason : undefined);
  }

  releaseAll(): void {
    for (const rec of this.inflight.values()) release(this, rec);
  }
}
