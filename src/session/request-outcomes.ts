/**
 * How a session's downstream request ends (requests.ts keeps the table and dispatch): released
 * from the in-flight map and count, recorded for the observer and the audit trail, and answered on
 * its stream: failed, answered by its member (through the flavour), refused, or answered by the
 * gateway itself. Module functions over the table's state; the chain (chain/chain.ts) gets them as
 * callbacks made once per session, never per request.
 */
import { toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import type { JsonObject, JsonRpcErrorObject, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { AuditSink } from '../log/audit-record.ts';
import type { Logger } from '../log/logger.ts';
import type { Observer, RequestOutcome } from '../log/observer.ts';
import { eraOf, type RequestOrigin } from '../telemetry/tracing.ts';
import { auditEntryOf } from './audit-entry.ts';
import { createChain, type ForwardRequest, type Traced } from './chain/chain.ts';
import type { ChainGates } from './chain/gates.ts';
import type { Flavour, LocalAnswer, Pending } from './flavour.ts';
import type { InflightBudget } from './inflight.ts';
import { endSpans, endSpansWith } from './request-spans.ts';
import type { StreamSet } from './streams.ts';

/** The state of one session's request table (requests.ts). */
export interface RequestsState {
  readonly streams: StreamSet;
  readonly logger: Logger;
  /** The gateway's in-flight count, kept as requests enter and leave the map. */
  readonly budget: InflightBudget;
  readonly audit: AuditSink | undefined;
  readonly observer: Observer;
  readonly traced: Traced | undefined;
  /** Clock reads only for someone who reads them. */
  readonly timed: boolean;
  /** Client id key -> the request being served. */
  readonly inflight: Map<string, Pending>;
  /** The trace origins of requests whose era is their own (telemetry/tracing.ts ownOrigin). */
  readonly origins: Map<string, RequestOrigin>;
  flavour: Flavour | undefined;
}

/** Out of the map and the count, once (a late answer after a withdraw must not remove a newer request with the same id). */
export function release(s: RequestsState, rec: Pending): void {
  if (rec.settled) return;
  rec.settled = true;
  s.inflight.delete(rec.key);
  s.budget.active--;
}

/** Tells the observer, and hands the audit entry of a request that ends to the trail (`result`: a captured answer). */
export function record(s: RequestsState, rec: Pending, outcome: RequestOutcome, code?: string, correlationId?: string, result?: unknown): void {
  // A withdrawn request was reported as cancelled: whatever it still runs into is not news.
  if (s.timed && !rec.cancelled) {
    rec.endedAt = performance.now();
    // A failing observer (metrics, status page) must never keep an answer from its client.
    try {
      s.observer.requestEnded(rec, outcome, code, correlationId);
    } catch (err) {
      s.logger.error({ err }, 'an observer failed on a request that ended; the request is answered anyway');
    }
  }
  if (rec.audited === undefined || s.audit === undefined) return;
  s.audit.record(auditEntryOf(rec, outcome, code, correlationId, result));
}

function deliver(s: RequestsState, rec: Pending, answer: JsonObject): void {
  release(s, rec);
  if (!rec.cancelled) s.streams.send(rec.stream, answer, true);
}

export function fail(s: RequestsState, rec: Pending, err: unknown): void {
  const error = toGatewayError(err);
  // Counted where it happened: the session's own child, or a shared upstream's breaker, per caller.
  if (error.code === 'GW_UPSTREAM_TIMEOUT') rec.member?.timedOut(rec.session.principal ?? rec.session.id, rec.probe);
  if (error.code === 'GW_INTERNAL') s.logger.error({ err, correlationId: error.details.correlationId }, 'request failed');
  else s.logger.info({ code: error.code, clientId: rec.clientId, era: eraOf(rec.protocolVersion) }, error.message);
  const correlationId = error.details.correlationId;
  record(s, rec, 'error', error.code, typeof correlationId === 'string' ? correlationId : undefined);
  const answer = toErrorResponse(rec.clientId, error);
  if (rec.span !== undefined) endSpans(rec, answer.error);
  deliver(s, rec, answer as unknown as JsonObject);
}

/** A member's answer, as the client gets it (after the response hooks, if any). */
export function answer(s: RequestsState, rec: Pending, response: JsonRpcResponse): void {
  const captured = rec.audited !== undefined && s.audit?.capture.results === true ? (response.result ?? response.error) : undefined;
  if (s.timed || rec.audited !== undefined) record(s, rec, 'error' in response ? 'error' : 'ok', undefined, undefined, captured);
  if (rec.span !== undefined) endSpansWith(rec, response);
  deliver(s, rec, (s.flavour as Flavour).answer(rec, response) as unknown as JsonObject);
}

/** Filtered or denied by policy: the client sees "unknown", the audit line says what it was. */
export function refuse(s: RequestsState, rec: Pending, refusal: JsonRpcErrorObject): void {
  record(s, rec, 'denied');
  if (rec.span !== undefined) endSpans(rec, refusal);
  deliver(s, rec, { jsonrpc: '2.0', id: rec.clientId as JsonObject[string], error: refusal as unknown as JsonObject });
}

export function answerLocally(s: RequestsState, rec: Pending, to: LocalAnswer): void {
  if ('refuse' in to) return refuse(s, rec, to.refuse);
  if (s.timed || rec.audited !== undefined) record(s, rec, 'ok');
  if (rec.span !== undefined) endSpans(rec, undefined);
  deliver(s, rec, { jsonrpc: '2.0', id: rec.clientId as JsonObject[string], result: to.local });
}

/** The session's chain (chain/chain.ts), with how its requests end as callbacks made once. */
export function chainOf(s: RequestsState, gates: ChainGates, namespaced: boolean): ForwardRequest {
  const { streams, logger, observer, timed, traced } = s;
  return createChain({
    streams,
    logger,
    observer,
    timed,
    traced,
    gates,
    namespaced,
    fail: (rec, err) => fail(s, rec, err),
    answer: (rec, response) => answer(s, rec, response),
    refuse: (rec, refusal) => refuse(s, rec, refusal),
    record: (rec, outcome, code) => record(s, rec, outcome, code),
    release: (rec) => release(s, rec),
  });
}
