/**
 * The chain: the one ordered way every routed request takes to its member and every answer takes
 * back (docs/architecture.md, "The chain"). The session core (requests.ts) routes a request (the
 * owner known, the server's own names restored) and hands it here; then, in this order:
 *
 *   entrance   URIs in canonical spelling, filters / policy / virtual picks on every name (entrance.ts);
 *              a task id must be one of this session's (task-stage.ts)
 *   step-up    scopes the item needs beyond the token's (SEP-2350; step-up.ts)
 *   limit      the per-tool rate limit (gates.ts)
 *   pinning    a changed definition refused, an unread list read first (../pinning.ts)
 *   hooks      the target's request hooks (../hooks/guard.ts)
 *   send       the member's connection (opened on first use), breaker and correlator
 *   response   the target's response hooks, then redaction (../hooks/guard.ts); a `tasks/result`
 *              judged as the `tools/call` that created the task
 *   answer     the flavour's view of it (lists filtered, pins withheld), then the audit line (request-outcomes.ts)
 *
 * The stages are a list built once per session from the gates configured: a gateway without
 * step-up, limits or hooks has no such stage, and a stage that has nothing to judge for a request
 * returns undefined at once, so the hot path allocates nothing here. A stage throws to refuse, or
 * returns a promise to go on later (with the request it resolves to, if it replaced it).
 */
import { GatewayError } from '../../errors/gateway-error.ts';
import type { TraceContext } from '../../jsonrpc/trace-context.ts';
import type { JsonObject, JsonRpcErrorObject, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, JsonRpcSuccess } from '../../jsonrpc/types.ts';
import type { Logger } from '../../log/logger.ts';
import type { Observer, RequestOutcome } from '../../log/observer.ts';
import { setSpanTarget, startUpstreamSpan, traceContextOf, type RequestOrigin, type Tracing } from '../../telemetry/tracing.ts';
import type { PendingHandler } from '../../upstream/correlator.ts';
import type { Pending } from '../flavour.ts';
import { bare } from '../../router/exposure.ts';
import type { Member } from '../member.ts';
import { checkCall } from '../pinning.ts';
import { endSpans } from '../request-spans.ts';
import type { StreamSet } from '../streams.ts';
import { enter, Hidden } from './entrance.ts';
import { createTaskStage, type TaskStage } from './task-stage.ts';
import { takeToolToken, type ChainGates, type StepUpNeed } from './gates.ts';
import { dropRawText } from '../../jsonrpc/wire-text.ts';
import type { CallGuard } from '../hooks/guard.ts';
import { stepUpRefusal } from './step-up.ts';
import { errorJudged, hiddenJudged, stepUpJudged } from './judged.ts';

/** Tracing on: the gateway's tracer and what the spans say of the session. */
export interface Traced {
  readonly tracing: Tracing;
  readonly origin: RequestOrigin;
}

/** What the chain needs of requests.ts (request-outcomes.ts): its options, and how a request is failed, answered, refused, recorded and released. */
export interface ChainParts {
  readonly streams: StreamSet;
  readonly logger: Logger;
  readonly observer: Observer;
  /** Clock reads only for someone who reads them (observer.observing). */
  readonly timed: boolean;
  readonly traced: Traced | undefined;
  readonly gates: ChainGates;
  /** Several targets behind one endpoint: a hidden name is refused as the aggregate refuses an unknown one. */
  readonly namespaced: boolean;
  readonly fail: (rec: Pending, err: unknown) => void;
  /** A member's answer, as the client gets it. */
  readonly answer: (rec: Pending, response: JsonRpcResponse) => void;
  /** The gateway's own refusal of what the filters or policy hide (no member involved). */
  readonly refuse: (rec: Pending, refusal: JsonRpcErrorObject) => void;
  readonly record: (rec: Pending, outcome: RequestOutcome, code?: string) => void;
  readonly release: (rec: Pending) => void;
}

/** Sends a routed request down the chain to `member`; whatever happens ends in `fail`, `answer`, `refuse` or a step-up challenge. */
export type ForwardRequest = (rec: Pending, member: Member, request: JsonRpcRequest) => void;

/** A request stage: undefined to go on at once, a promise to go on once it settles (with its request, if replaced); a throw refuses. */
type Stage = (rec: Pending, member: Member, request: JsonRpcRequest) => Promise<JsonRpcRequest | void> | undefined;

/** A step-up stage's refusal: the scopes to name in the challenge. */
class StepUpNeeded extends Error {
  readonly need: StepUpNeed;
  constructor(need: StepUpNeed) {
    super('step-up');
    this.need = need;
  }
}

/** The request stages the gates call for, in chain order (see the file comment). */
function stagesOf(gates: ChainGates, tasks: TaskStage): Stage[] {
  const { stepUp, limitTool, guard } = gates;
  const stages: Stage[] = [
    (rec, member, request) => {
      enter(request, member.exposure, rec.asked);
      tasks.enter(rec, member, request);
      return undefined;
    },
  ];
  if (stepUp !== undefined) {
    stages.push((rec, member, request) => {
      const need = stepUp(member.name, request, rec.caller);
      if (need !== undefined) throw new StepUpNeeded(need);
      // A resumable request (a parked 2026 call): its retry's own token is judged on this item too.
      const sink = rec.stream.sink;
      if (sink !== undefined && 'stepUp' in sink) sink.stepUp = (caller) => stepUp(member.name, request, caller);
      return undefined;
    });
  }
  // Shared buckets (a cluster) answer later; a call cancelled meanwhile is never sent.
  if (limitTool !== undefined) stages.push((_rec, member, request) => takeToolToken(limitTool, member.name, request));
  // Pinning (off: no gate on the member, one read): a changed definition throws, an unread list is read first.
  stages.push((_rec, member, request) => (member.pins === undefined ? undefined : checkCall(member, request)));
  if (guard !== undefined) stages.push((rec, member, request) => guard.request(rec, rec.session.principal, member.target, request));
  return stages;
}

/**
 * A SEP-2663 `tasks/get` whose answer inlines the call's result: that result is judged as the
 * `tools/call` (response hooks, redaction) and put back; a refusal refuses the poll. Redaction works
 * in place on the inlined object, so the outer answer's kept wire text is dropped with it.
 */
function judgeInlined(guard: CallGuard, rec: Pending, member: Member, response: JsonRpcResponse, params: JsonObject | undefined): Promise<JsonRpcResponse> | undefined {
  // Only an answer with a result object is marked inlined (task-stage.ts).
  const success = response as JsonRpcSuccess;
  const outer = success.result;
  const inner: JsonRpcSuccess = { jsonrpc: '2.0', id: success.id, result: outer.result as JsonObject };
  const judged = guard.response(rec, rec.session.principal, member.target, 'tools/call', inner, params);
  if (judged === undefined) {
    dropRawText(response);
    return undefined;
  }
  return judged.then((j) => {
    if (!('result' in j)) return { ...j, id: response.id };
    dropRawText(response);
    outer.result = j.result;
    return response;
  });
}

export function createChain(parts: ChainParts): ForwardRequest {
  return new Chain(parts).forward;
}

/**
 * One session's chain: its stages and the correlator's handler of every request it sends (the
 * correlator calls onresponse, onerror and onprogress as methods, with the request's Pending).
 */
class Chain implements PendingHandler<Pending> {
  readonly parts: ChainParts;
  readonly guard: CallGuard | undefined;
  readonly tasks: TaskStage;
  readonly stages: Stage[];

  constructor(parts: ChainParts) {
    this.parts = parts;
    this.guard = parts.gates.guard;
    this.tasks = createTaskStage(parts.namespaced);
    this.stages = stagesOf(parts.gates, this.tasks);
  }

  /** An arrow field: the session core holds it as its ForwardRequest. */
  readonly forward: ForwardRequest = (rec, member, request) => this.run(rec, member, request, 0);

  onresponse(response: JsonRpcResponse, rec: Pending): void {
    const { timed, observer, answer, fail } = this.parts;
    if (rec.probe) rec.member?.breaker?.succeeded();
    if (timed) {
      rec.upstreamMs = performance.now() - rec.sentAt;
      if (rec.method.endsWith('/list') && 'result' in response && rec.member !== undefined) {
        observer.listed(rec.member.name, rec.method, response.result, rec.subject === undefined);
      }
    }
    // Hot path: one read when the request has nothing to do with tasks (task-stage.ts).
    const as = rec.task === undefined ? undefined : this.tasks.answered(rec, response);
    // Hot path: one read when no target of the gateway has hooks or redaction (hooks/).
    const guard = this.guard;
    const judged =
      guard === undefined || rec.member === undefined
        ? undefined
        : as?.inlined === true
          ? judgeInlined(guard, rec, rec.member, response, as.params)
          : guard.response(rec, rec.session.principal, rec.member.target, as?.method ?? rec.method, response, as?.params);
    if (judged === undefined) return answer(rec, response);
    judged.then((judgedResponse) => rec.cancelled || answer(rec, judgedResponse), (err: unknown) => rec.cancelled || fail(rec, err));
  }

  onerror(error: GatewayError, rec: Pending): void {
    this.parts.fail(rec, error);
  }

  onprogress(notification: JsonRpcNotification, rec: Pending): void {
    if (!rec.cancelled) this.parts.streams.send(rec.stream, notification as unknown as JsonObject, false);
  }

  run(rec: Pending, member: Member, request: JsonRpcRequest, from: number): void {
    const stages = this.stages;
    for (let i = from; i < stages.length; i++) {
      let later: Promise<JsonRpcRequest | void> | undefined;
      try {
        later = (stages[i] as Stage)(rec, member, request);
      } catch (err) {
        return this.refused(rec, member, request, err);
      }
      if (later !== undefined) {
        later.then((next) => rec.cancelled || this.run(rec, member, next ?? request, i + 1), (err: unknown) => rec.cancelled || this.refused(rec, member, request, err));
        return;
      }
    }
    // Hot path: an open member takes the request at once; only a first use (or a restart) waits.
    if (member.connection !== undefined) return this.send(rec, member, request);
    member.connect().then(() => this.send(rec, member, request), (err: unknown) => this.parts.fail(rec, err));
  }

  send(rec: Pending, member: Member, request: JsonRpcRequest): void {
    if (rec.cancelled) return;
    const { fail, traced, timed } = this.parts;
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
    rec.upstreamId = connection.correlator.request(request, this, rec, member.target.timeouts, trace === undefined ? undefined : { trace });
  }

  refused(rec: Pending, member: Member, request: JsonRpcRequest, err: unknown): void {
    const { gates, namespaced, fail, refuse } = this.parts;
    // The audit record names the rule that refused (judged.ts); only audited requests pay for it.
    if (rec.audited !== undefined) {
      rec.judged =
        err instanceof StepUpNeeded
          ? stepUpJudged(err.need)
          : err instanceof Hidden
            ? hiddenJudged(request, member.name, rec.session.endpoint, rec.caller, gates.policy?.())
            : errorJudged(err, member.name);
    }
    if (err instanceof StepUpNeeded) return this.challenge(rec, member, err.need);
    if (err instanceof Hidden) return namespaced ? fail(rec, err.error) : refuse(rec, bare(err.error));
    fail(rec, err);
  }

  /** SEP-2350: the caller's token lacks scopes this call needs; nothing goes upstream (step-up.ts). */
  challenge(rec: Pending, member: Member, need: StepUpNeed): void {
    const { logger, record, release, streams } = this.parts;
    rec.member = member;
    const refusal = stepUpRefusal(rec, need, logger);
    record(rec, 'denied', 'GW_STEP_UP_REQUIRED');
    if (rec.span !== undefined) endSpans(rec, refusal.error);
    release(rec);
    if (!rec.cancelled) streams.challenge(rec.stream, refusal as unknown as JsonObject, need.required);
  }
}
