/**
 * The audit entry of a request that ends (log/audit-record.ts), from what its in-flight record
 * holds anyway: who (the request's own principal), where (endpoint, era, transport, session), what
 * (method, server, the tool, prompt or URI the client named), the judgment and how it ended. Built
 * only for audited requests (tools/call, prompts/get, resources/read) while a trail is on.
 */
import { eraOf } from '../jsonrpc/versions.ts';
import { subjectOf } from '../jsonrpc/methods.ts';
import type { AuditEntry } from '../log/audit-record.ts';
import type { ObservedSession, RequestOutcome } from '../log/observer.ts';
import type { Principal } from '../upstream/caller.ts';
import type { Pending } from './flavour.ts';

/** Codes that are a judgment of the gateway (policy, step-up, limits, pinning, hooks), not a failure. */
const JUDGED = new Set(['GW_STEP_UP_REQUIRED', 'GW_INSUFFICIENT_SCOPE', 'GW_RATE_LIMITED', 'GW_HOOK_DENIED', 'GW_DEFINITION_CHANGED', 'GW_REQUEST_REFUSED']);

export function auditEntryOf(rec: Pending, outcome: RequestOutcome, code: string | undefined, correlationId: string | undefined, result?: unknown): AuditEntry {
  const audited = rec.audited as NonNullable<Pending['audited']>;
  const principal = rec.caller;
  const denied = outcome === 'denied' || (code !== undefined && JUDGED.has(code));
  const kind = subjectOf(rec.method)?.kind ?? 'tool';
  const traceId = rec.span?.spanContext().traceId;
  return {
    principal: principal?.id ?? rec.session.principal ?? null,
    subject: principal?.subject ?? null,
    credential: principal?.kind ?? 'none',
    endpoint: rec.session.endpoint,
    era: eraOf(rec.protocolVersion),
    transport: rec.session.transport,
    session: rec.session.id,
    method: rec.method,
    server: rec.member?.name ?? null,
    [kind]: audited.name,
    upstreamAccount: null,
    decision: denied ? 'deny' : 'allow',
    rule: null,
    reason: denied ? (code ?? 'policy') : null,
    outcome,
    code: code ?? null,
    latencyMs: Math.round((performance.now() - audited.started) * 10) / 10,
    requestId: typeof rec.clientId === 'object' ? rec.clientId.rawJSON : rec.clientId,
    traceId: traceId === undefined || /^0+$/.test(traceId) ? null : traceId,
    correlationId: correlationId ?? null,
    ...(audited.arguments === undefined ? {} : { arguments: audited.arguments }),
    ...(result === undefined ? {} : { result }),
  };
}

/**
 * The audit entry of a server-to-client request (sampling, elicitation, roots) as the client's
 * answer comes back: the method, the server that asked, the session's principal, how it ended.
 */
export function askedEntryOf(session: ObservedSession, caller: Principal | undefined, asked: { method: string; server: string; id: number; started: number }, failed: boolean): AuditEntry {
  return {
    principal: caller?.id ?? session.principal ?? null,
    subject: caller?.subject ?? null,
    credential: caller?.kind ?? 'none',
    endpoint: session.endpoint,
    era: eraOf(session.protocolVersion),
    transport: session.transport,
    session: session.id,
    method: asked.method,
    server: asked.server,
    upstreamAccount: null,
    decision: 'allow',
    rule: null,
    reason: null,
    outcome: failed ? 'error' : 'ok',
    code: null,
    latencyMs: Math.round((performance.now() - asked.started) * 10) / 10,
    requestId: asked.id,
    traceId: null,
    correlationId: null,
  };
}
