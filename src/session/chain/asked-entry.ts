/**
 * The audit entry of a server-to-client request (chain/server-asked.ts): its own file, beside the
 * request entry of audit-entry.ts, so the chain does not import the flavour's record type.
 */
import { eraOf } from '../../jsonrpc/versions.ts';
import type { AuditEntry } from '../../log/audit-record.ts';
import type { ObservedSession } from '../../log/observer.ts';
import type { Principal } from '../../upstream/caller.ts';
import type { Judged } from './judged.ts';

/**
 * The audit entry of a server-to-client request (sampling, elicitation, roots) as the client's
 * answer comes back, or as a request hook refuses it (`judged`): the method, the server that
 * asked, the session's principal, how it ended.
 */
export function askedEntryOf(session: ObservedSession, caller: Principal | undefined, asked: { method: string; server: string; id: string | number; started: number }, failed: boolean, judged?: Judged): AuditEntry {
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
    decision: judged === undefined ? 'allow' : 'deny',
    rule: judged?.rule ?? null,
    reason: judged?.reason ?? null,
    outcome: judged === undefined ? (failed ? 'error' : 'ok') : 'denied',
    code: judged?.reason ?? null,
    latencyMs: Math.round((performance.now() - asked.started) * 10) / 10,
    requestId: asked.id,
    traceId: null,
    correlationId: null,
  };
}
