/**
 * The console's side of the audit trail (docs/operations.md, "Audit"): an operator's action
 * (approve or reject a pin, end a session, restart a server, reload the config, disconnect an
 * upstream account, read the access view, sign in or out, a refused change) is a
 * `switchboard.audit/v1.1` admin record in the same chain as the calls, naming who did it; and the
 * console's "recent calls" are the trail's own recent records, mapped to the page's rows.
 */
import type { FastifyRequest } from 'fastify';
import type { AuditEntry, AuditRecord } from '../log/audit-record.ts';

/** What an admin record may say of what was acted on: names and hashes, never values. */
export type AdminDetails = Record<string, string | number | boolean | null | undefined | readonly string[]>;

/** The credential kind of an operator id (`key:<name>` an API key, `<issuer>#<sub>` a token; none without gateway.auth). */
function credentialOf(by: string | undefined): AuditEntry['credential'] {
  if (by === undefined) return 'none';
  return by.startsWith('key:') ? 'api-key' : 'jwt';
}

/** A value a principal or a config chose (a token's subject, a reload's server names): at most this long, lists at most this many. */
const MAX_DETAIL = 512;
const cut = (value: string) => (value.length > MAX_DETAIL ? `${value.slice(0, MAX_DETAIL)}…` : value);

/** `details` as the record holds them: defined values only, strings and lists bounded, lists copied. */
function plain(details: AdminDetails): Record<string, string | number | boolean | null | string[]> {
  const out: Record<string, string | number | boolean | null | string[]> = {};
  for (const [key, value] of Object.entries(details)) {
    if (value === undefined) continue;
    if (typeof value === 'string') out[key] = cut(value);
    else out[key] = typeof value === 'object' && value !== null ? value.slice(0, MAX_DETAIL).map(cut) : value;
  }
  return out;
}

/** How an action ended when not as asked: `failed` (it found nothing to act on) or `denied` (the console refused it), with its GW_* code. */
export interface AdminEnd {
  readonly outcome: 'error' | 'denied';
  readonly code: string;
}

/** The admin record of `action` by `by` (undefined: the local operator, no gateway.auth, or nobody known yet). */
export function adminEntryOf(request: FastifyRequest, by: string | undefined, action: string, details: AdminDetails, end?: AdminEnd): AuditEntry {
  const server = typeof details.target === 'string' ? details.target : null;
  return {
    principal: by ?? null,
    subject: by === undefined ? null : by.slice(by.lastIndexOf(by.startsWith('key:') ? ':' : '#') + 1),
    credential: credentialOf(by),
    endpoint: 'admin',
    era: null,
    transport: null,
    session: null,
    method: `admin/${action}`,
    server,
    upstreamAccount: typeof details.account === 'string' ? details.account : null,
    decision: end?.outcome === 'denied' ? 'deny' : 'allow',
    rule: null,
    reason: end?.outcome === 'denied' ? end.code : null,
    outcome: end?.outcome ?? 'ok',
    code: end?.code ?? null,
    latencyMs: 0,
    requestId: request.id,
    traceId: null,
    correlationId: null,
    admin: { action, details: plain(details) },
  };
}

/** One row of the console's recent calls (GET /admin/api/calls). */
export interface CallRow {
  readonly at: number;
  readonly principal: string | null;
  readonly endpoint: string;
  readonly era: string | null;
  readonly server: string | null;
  readonly method: string;
  /** Tool or prompt name, or resource URI, as the client sent it; an admin record's action. */
  readonly name: string | null;
  readonly outcome: string;
  readonly code: string | null;
  readonly ms: number;
  readonly decision: string;
  readonly rule: string | null;
  readonly reason: string | null;
}

export function callRowOf(record: AuditRecord): CallRow {
  return {
    at: Date.parse(record.timestamp),
    principal: record.principal,
    endpoint: record.endpoint,
    era: record.era,
    server: record.server,
    method: record.method,
    name: (record.tool ?? record.prompt ?? record.uri ?? record.admin?.action ?? null)?.slice(0, 512) ?? null,
    outcome: record.outcome,
    code: record.code,
    ms: record.latencyMs,
    decision: record.decision,
    rule: record.rule,
    reason: record.reason,
  };
}
