/**
 * The audit entry of a request that ends (log/audit-record.ts), from what its in-flight record
 * holds anyway: who (the request's own principal), where (endpoint, era, transport, session), what
 * (method, server, the tool, prompt or URI the client named), the judgment and how it ended. Built
 * only for audited requests (tools/call, prompts/get, resources/read) while a trail is on.
 */
import { eraOf } from '../jsonrpc/versions.ts';
import { subjectOf } from '../jsonrpc/methods.ts';
import type { AuditEntry } from '../log/audit-record.ts';
import type { RequestOutcome } from '../log/observer.ts';
import type { Pending } from './flavour.ts';

/** Codes that are a judgment of the gateway (policy, step-up, limits, pinning, hooks), not a failure. */
const JUDGED = new Set(['GW_STEP_UP_REQUIRED', 'GW_INSUFFICIENT_SCOPE', 'GW_RATE_LIMITED', 'GW_HOOK_DENIED', 'GW_DEFINITION_CHANGED', 'GW_REQUEST_REFUSED']);

export function auditEntryOf(rec: Pending, outcome: RequestOutcome, code: string | undefined, correlationId: string | undefined, result?: unknown): AuditEntry {
  const audited = rec.audited as NonNullable<Pending['audited']>;
  const principal = rec.caller;
  // A chain stage that refused it named its rule (chain/judged.ts); a refusal it did not name is judged by its code.
  const judged = rec.judged;
  const denied = judged !== undefined || outcome === 'denied' || (code !== undefined && JUDGED.has(code));
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
    rule: judged?.rule ?? null,
    reason: denied ? (judged?.reason ?? code ?? 'policy') : null,
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

