/**
 * The audit entry of a server-to-client request (chain/server-asked.ts): its own file, beside the
 * request entry of audit-entry.ts, so the chain does not import the flavour's record type.
 */
import { eraOf } from '../../jsonrpc/versions.ts';
import type { AuditEntry } from '../../log/audit-record.ts';
import type { ObservedSession } from '../../log/observer.ts';
import type { Principal } from '../../upstream/caller.ts';

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
