/**
 * The way of one routed downstream request to its member (requests.ts keeps the records and the
 * answers): step-up (SEP-2350), the per-tool rate limit, the target's request hooks, then the
 * member's connection (opened on first use), its circuit breaker, and its correlator. The member's
 * answer comes back through the handler here (the response hooks, then requests.ts answers it).
 */
import { GatewayError } from '../errors/gateway-error.ts';
import type { TraceContext } from '../jsonrpc/trace-context.ts';
import type { JsonObject, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import type { Observer, RequestOutcome } from '../log/observer.ts';
import { setSpanTarget, startUpstreamSpan, traceContextOf, type RequestOrigin, type Tracing } from '../telemetry/tracing.ts';
import type { PendingHandler } from '../upstream/correlator.ts';
import { takeToolToken, type Pending, type StepUpCheck, type ToolLimit } from './flavour.ts';
import type { CallGuard } from './hooks/guard.ts';
import type { Member } from './member.ts';
import { endSpans } from './request-spans.ts';
import { stepUpRefusal } from './step-up.ts';
import type { StreamSet } from './streams.ts';

/** Tracing on: the gateway's tracer and what the spans say of the session. */
export interface Traced {
  readonly tracing: Tracing;
  readonly origin: RequestOrigin;
}

/** What the pipeline needs of requests.ts: its options, and how a request is failed, answered, recorded and released. */
export interface PipelineParts {
  readonly streams: StreamSet;
  readonly logger: Logger;
  readonly observer: Observer;
  /** Clock reads only for someone who reads them (observer.observing). */
  readonly timed: boolean;
  readonly traced: Traced | undefined;
  readonly limitTool: ToolLimit | undefined;
  readonly stepUp: StepUpCheck | undefined;
  readonly guard: CallGuard | undefined;
  readonly fail: (rec: Pending, err: unknown) => void;
  /** A member's answer, as the client gets it. */
  readonly answer: (rec: Pending, response: JsonRpcResponse) => void;
  readonly record: (rec: Pending, outcome: RequestOutcome, code?: string) => void;
  readonly release: (rec: Pending) => void;
}

/** Sends a routed request on its way to `member`; whatever happens ends in `fail`, `answer` or a step-up challenge. */
export type ForwardRequest = (rec: Pending, member: Member, request: JsonRpcRequest) => void;

export function createPipeline(parts: PipelineParts): ForwardRequest {
  const { streams, logger, observer, timed, traced, limitTool, stepUp, guard, fail, answer, record, release } = parts;

  const handler: PendingHandler<Pending> = {
    onresponse(response, rec) {
      if (rec.probe) rec.member?.breaker?.succeeded();
      if (timed) {
        rec.upstreamMs = performance.now() - rec.sentAt;
        if (rec.method.endsWith('/list') && 'result' in response && rec.member !== undefined) {
          observer.listed(rec.member.name, rec.method, response.result, rec.subject === undefined);
        }
      }
      // Hot path: one read when no target of the gateway has hooks or redaction (session/hooks/).
      const judged = guard === undefined || rec.member === undefined ? undefined : guard.response(rec, rec.session.principal, rec.member.target, rec.method, response);
      if (judged === undefined) return answer(rec, response);
      judged.then((judgedResponse) => rec.cancelled || answer(rec, judgedResponse), (err: unknown) => rec.cancelled || fail(rec, err));
    },
    onerror(error, rec) {
      fail(rec, error);
    },
    onprogress(notification, rec) {
      if (!rec.cancelled) streams.send(rec.stream, notification as unknown as JsonObject, false);
    },
  };

  const send = (rec: Pending, member: Member, request: JsonRpcRequest) => {
    if (rec.cancelled) return;
    const connection = member.connection;
    if (connection === undefined) return fail(rec, new GatewayError('GW_UPSTREAM_CLOSED', undefined, { target: member.name }));
    rec.member = member;
    // Hot path: one read while the circuit is closed. Open for timeouts: refused, or the probe.
    const breaker = member.breaker;
    if (breaker !== undefined && breaker.state !== 'closed') {
      try {
        rec.probe = breaker.admit('request');
      } catch (err) {
        return fail(rec, err);
      }
    }
    let trace: TraceContext | undefined;
    if (rec.span !== undefined && traced !== undefined) {
      setSpanTarget(rec.span, member.name);
      rec.upstreamSpan = startUpstreamSpan(traced.tracing, rec.span, request, member.target);
      trace = traceContextOf(traced.tracing, rec.upstreamSpan ?? rec.span);
    }
    if (timed) rec.sentAt = performance.now();
    rec.upstreamId = connection.correlator.request(request, handler, rec, member.target.timeouts, trace === undefined ? undefined : { trace });
  };

  /** SEP-2350: the caller's token lacks `scopes` this call needs; nothing goes upstream (step-up.ts). */
  const challenge = (rec: Pending, member: Member, scopes: readonly string[]) => {
    rec.member = member;
    const refusal = stepUpRefusal(rec, scopes, logger);
    record(rec, 'denied', 'GW_STEP_UP_REQUIRED');
    if (rec.span !== undefined) endSpans(rec, refusal.error);
    release(rec);
    if (!rec.cancelled) streams.challenge(rec.stream, refusal as unknown as JsonObject, scopes);
  };

  /** The target's hooks judge the routed request (hooks/guard.ts); without any, it goes on at once. */
  const guarded = (rec: Pending, member: Member, request: JsonRpcRequest) => {
    const judged = guard === undefined ? undefined : guard.request(rec, rec.session.principal, member.target, request);
    if (judged === undefined) return connectAndSend(rec, member, request);
    judged.then((judgedRequest) => rec.cancelled || connectAndSend(rec, member, judgedRequest), (err: unknown) => rec.cancelled || fail(rec, err));
  };

  const connectAndSend = (rec: Pending, member: Member, request: JsonRpcRequest) => {
    // Hot path: an open member takes the request at once; only a first use (or a restart) waits.
    if (member.connection !== undefined) return send(rec, member, request);
    member.connect().then(() => send(rec, member, request), (err: unknown) => fail(rec, err));
  };

  return (rec, member, request) => {
    // After routing: the aggregate restored the server's own name, so every path and spelling of
    // one item meets one step-up rule (step-up.ts) and one rate-limit bucket.
    const missing = stepUp === undefined ? undefined : stepUp(member.name, request, rec.caller);
    if (missing !== undefined) return challenge(rec, member, missing);
    let taking: Promise<void> | undefined;
    try {
      taking = takeToolToken(limitTool, member.name, request);
    } catch (err) {
      return fail(rec, err);
    }
    // Shared buckets (a cluster) answer later; a call cancelled meanwhile is never sent (send()).
    if (taking !== undefined) return void taking.then(() => guarded(rec, member, request), (err: unknown) => fail(rec, err));
    guarded(rec, member, request);
  };
}
