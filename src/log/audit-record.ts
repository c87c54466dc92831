/**
 * The audit record, schema `switchboard.audit/v1` (docs/operations.md, "Audit"; the JSON Schema is
 * docs/audit-record.schema.json, generated from `auditRecordSchema` and checked against it in the
 * tests). One record per audited request (tools/call, prompts/get, resources/read) as it ends:
 * who, with what credential, on which endpoint, era and transport, what it named on which server,
 * what the gateway decided and why, how it ended, how long it took, and the ids that find it in the
 * logs and traces. Flat, so a log line, an OTLP log record's attributes and a JSON line carry it the
 * same way; never `name`, `time`, `level` or `msg`, which belong to the log line around it.
 *
 * Tamper evidence: `seq` counts the records of one `chain` (one gateway process: a new id each start),
 * `prev` is the previous record's `hash`, and `hash` is the SHA-256 of the record's canonical JSON
 * without `hash` (observe/audit/chain.ts). Shared vocabulary (log/), so that the session core and
 * the judging chain can hand an entry to an `AuditSink` without knowing where records go.
 */
import { z } from 'zod';

/**
 * The version new records carry. v1.1 (a superset of v1) adds the `admin` records of operators'
 * actions (the console and its API): `method` `admin/<action>`, `endpoint` `admin`, `era` and
 * `transport` null, and the optional `admin` field. A v1 record is a valid v1.1 record, so `verify`
 * and receivers read old logs as they were.
 */
export const AUDIT_SCHEMA = 'switchboard.audit/v1.1';
/** Every version this gateway writes or has written (verify accepts them all). */
export const AUDIT_SCHEMAS = ['switchboard.audit/v1', AUDIT_SCHEMA] as const;

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);

export const auditRecordSchema = z
  .strictObject({
    schema: z.enum(AUDIT_SCHEMAS).describe('The record format and its version (v1.1 added admin records; a v1 record is a valid v1.1 record).'),
    timestamp: z.iso.datetime().describe('When the request ended (ISO 8601, UTC).'),
    chain: z.string().min(1).max(64).describe('The chain this record belongs to: one per gateway process (replica), new at every start.'),
    seq: z.int().min(1).describe('1 for the first record of the chain, one more for each next one.'),
    prev: hex64.describe('The hash of the record before it in the chain; 64 zeros for seq 1.'),
    hash: hex64.describe('SHA-256 (hex) of the canonical JSON (keys sorted at every depth) of this record without "hash".'),
    principal: z.string().nullable().describe('The principal id (<issuer>#<subject>, key:<name>, anonymous); null without gateway.auth.'),
    subject: z.string().nullable().describe("The token's sub or the API key's name; null without gateway.auth."),
    credential: z.enum(['jwt', 'api-key', 'anonymous', 'none']).describe('How the caller proved itself; none: gateway.auth is off.'),
    endpoint: z.string().describe('The downstream endpoint (target:<name>, group:<name>, aggregate, virtual:<name>).'),
    era: z.enum(['2025', '2026']).nullable().describe('The era of the request itself (a 2026 request on a held session is 2026); null for an admin record.'),
    transport: z.enum(['streamable-http', 'websocket', 'sse']).nullable().describe('How the client reached the gateway; null for an admin record.'),
    session: z.string().nullable().describe('The session id (a held session for 2026 requests).'),
    method: z.string().describe('The JSON-RPC method.'),
    server: z.string().nullable().describe('The server (mcpServers key) that took it; null when the gateway answered or refused it itself.'),
    tool: z.string().optional().describe('tools/call: the tool as the client named it.'),
    prompt: z.string().optional().describe('prompts/get: the prompt as the client named it.'),
    uri: z.string().optional().describe('resources/read: the resource URI.'),
    upstreamAccount: z.string().nullable().describe('The upstream account the call was made as, where the gateway knows one; null otherwise.'),
    decision: z.enum(['allow', 'deny']).describe("The gateway's judgment: deny when a policy, filter, step-up, limit, pin or hook refused it."),
    rule: z.string().nullable().describe('The rule that decided, where one is known.'),
    reason: z.string().nullable().describe('Why it was denied (a GW_* code or "policy"); null when allowed.'),
    outcome: z.enum(['ok', 'error', 'cancelled', 'denied']).describe('How it ended.'),
    code: z.string().nullable().describe("The GW_* code when the gateway failed or refused it; null for success and an upstream's own error."),
    latencyMs: z.number().min(0).describe('Milliseconds from arrival to answer, to 0.1 ms.'),
    requestId: z.union([z.string(), z.number()]).describe('The JSON-RPC id the client gave it.'),
    traceId: z.string().regex(/^[0-9a-f]{32}$/).nullable().describe("The W3C trace id of the request's span; null with tracing off."),
    correlationId: z.string().nullable().describe('The id of an internal error, as the client saw it in data.correlationId.'),
    admin: z
      .strictObject({
        action: z.string().describe('approve-pin, reject-pin, end-session, restart-server, reload-config, disconnect-account, read-access, sign-in, sign-out, refused.'),
        details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.string())])).optional().describe('What it acted on (a pin\'s target, kind, key and hash; a session\'s first 8 characters; an account\'s principal and server): names and hashes, never a value of the config or a credential.'),
      })
      .optional()
      .describe('v1.1, admin records only (method admin/<action>): the operator\'s action; the operator is `principal`.'),
    capture: z
      .strictObject({
        arguments: z.unknown().optional(),
        result: z.unknown().optional(),
        truncated: z.array(z.enum(['arguments', 'result'])).optional(),
      })
      .optional()
      .describe('With gateway.audit.capture: arguments and result, redacted; a value over maxBytes is its JSON text cut short.'),
  })
  .describe('One audited request or operator action (Switchboard audit record, v1.1).');

export type AuditRecord = z.output<typeof auditRecordSchema>;

/** The chain's own fields, stamped by the trail (observe/audit/chain.ts). */
type Stamped = 'schema' | 'timestamp' | 'chain' | 'seq' | 'prev' | 'hash' | 'capture';

/**
 * What a request's end hands the trail: the record but for its stamps, plus what may be captured
 * (raw: the trail copies, redacts and bounds it; nothing is captured unless the sink asks).
 */
export type AuditEntry = Omit<AuditRecord, Stamped> & { readonly arguments?: unknown; readonly result?: unknown };

/**
 * Where audit entries go: the audit trail (observe/audit/trail.ts) or nothing. Called once per audited
 * request, synchronously, as it ends; must return quickly and never throw (it only queues).
 */
export interface AuditSink {
  /** What the caller should hand over besides the record (off by default: nothing is kept). */
  readonly capture: { readonly arguments: boolean; readonly results: boolean };
  record(entry: AuditEntry): void;
}

/** What one configured sink reports (the `switchboard_audit_*` metrics). */
export interface AuditOutletStats {
  readonly sink: string;
  /** Records handed on (exported, posted, written). */
  readonly sent: number;
  /** Records waiting now. */
  readonly queued: number;
  /** Records dropped: the queue was full, or the exporter gave up on them. */
  readonly dropped: number;
}

/** One configured sink of the trail: the log stream, OTLP logs, an HTTP receiver. */
export interface AuditOutlet {
  /** `log`, `otlp`, `http:<host>`: the metrics' `sink` label (never a URL's path or query). */
  readonly name: string;
  /** Queues or writes `record`; returns at once, never throws. */
  write(record: AuditRecord): void;
  stats(): AuditOutletStats;
  /** Hands on what is queued, within `timeoutMs`, then stops. */
  close(timeoutMs: number): Promise<void>;
}

/** docs/audit-record.schema.json: the JSON Schema of a record, as receivers validate it (a test keeps the file equal to this). */
export function auditRecordJsonSchema(): Record<string, unknown> {
  return { $id: 'urn:switchboard:audit-record:v1.1', ...z.toJSONSchema(auditRecordSchema, { io: 'output' }) };
}
