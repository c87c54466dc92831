/**
 * The audit trail (docs/operations.md, "Audit"): the one `AuditSink` of a gateway. It turns each
 * entry a request's end hands it (session/audit-entry.ts; later the judging chain's last stage)
 * into a `switchboard.audit/v1` record: captured arguments and results copied, redacted with the
 * gateway's redaction (session/hooks/redact.ts: the built-in secret shapes plus the operator's
 * patterns) and cut to size; stamped with time and its place in this replica's chain (chain.ts);
 * kept in the recent ring (ring.ts) and handed to every configured sink. Synchronous and bounded:
 * sinks only queue, the ring overwrites, so a slow receiver never slows a call.
 */
import { randomUUID } from 'node:crypto';
import type { AuditConfig } from '../../config/audit-types.ts';
import { AUDIT_SCHEMA, type AuditEntry, type AuditOutlet, type AuditOutletStats, type AuditRecord, type AuditSink } from '../../log/audit-record.ts';
import { createAuditLogger, type Logger } from '../../log/logger.ts';
import { createRedactor, type Redactor } from '../../session/hooks/redact.ts';
import { createChain } from './chain.ts';
import { createTextScrubber } from './scrub-text.ts';
import { createAuditRing, type AuditQuery } from './ring.ts';

export interface AuditTrail extends AuditSink {
  /** This process's chain id (new at every start). */
  readonly chain: string;
  /** Recent records of this replica, newest first (the console, `/admin/api/audit`). */
  query(query?: AuditQuery): AuditRecord[];
  stats(): AuditOutletStats[];
  /** Hands on what the sinks hold, within `timeoutMs`. */
  close(timeoutMs: number): Promise<void>;
}

/** A captured value: redacted, then cut to `maxBytes` of its JSON (the cut is a string). */
function captureOf(value: unknown, redact: Redactor, maxBytes: number): { value: unknown; cut: boolean } {
  // A copy: the caller's object is the answer still on its way to the client.
  const holder = { structuredContent: structuredClone(value) as unknown };
  redact(holder);
  const text = JSON.stringify(holder.structuredContent) ?? 'null';
  if (Buffer.byteLength(text) <= maxBytes) return { value: holder.structuredContent, cut: false };
  return { value: Buffer.from(text).subarray(0, maxBytes).toString('utf8'), cut: true };
}

/**
 * Free text a client chooses (a name, a URI, its request id) or a token carries (a subject): cut
 * to this many characters, so that a 16 MiB tool name is not kept 1000 times in the ring or sent
 * on to every sink. Real names are far shorter (SEP-986: tool names of at most 128 characters).
 */
export const MAX_TEXT = 2048;
const TEXT_FIELDS = ['principal', 'subject', 'tool', 'prompt', 'uri', 'requestId', 'rule', 'reason'] as const;

/** Cuts the free text of `record` in place. */
function bound(record: Record<string, unknown>): void {
  for (const key of TEXT_FIELDS) {
    const value = record[key];
    if (typeof value === 'string' && value.length > MAX_TEXT) record[key] = `${value.slice(0, MAX_TEXT)}…`;
  }
}

export function createAuditTrail(config: AuditConfig, outlets: readonly AuditOutlet[], logger: Logger): AuditTrail {
  const chain = createChain(randomUUID());
  const ring = createAuditRing(config.recent);
  const { capture } = config;
  const capturing = capture.arguments || capture.results;
  const redact = capturing ? (createRedactor({ secrets: true, patterns: capture.patterns, marker: '[REDACTED]' }) as Redactor) : undefined;
  // The client's free text may hold a credential (a token in a URI's query): never kept (scrub-text.ts).
  const scrubText = createTextScrubber(capture.patterns, TEXT_FIELDS);

  const captured = (entry: AuditEntry): AuditRecord['capture'] => {
    if (redact === undefined) return undefined;
    const out: NonNullable<AuditRecord['capture']> = {};
    const truncated: ('arguments' | 'result')[] = [];
    if (capture.arguments && entry.arguments !== undefined) {
      const { value, cut } = captureOf(entry.arguments, redact, capture.maxBytes);
      out.arguments = value;
      if (cut) truncated.push('arguments');
    }
    if (capture.results && entry.result !== undefined) {
      const { value, cut } = captureOf(entry.result, redact, capture.maxBytes);
      out.result = value;
      if (cut) truncated.push('result');
    }
    if (truncated.length > 0) out.truncated = truncated;
    return Object.keys(out).length === 0 ? undefined : out;
  };

  return {
    chain: chain.id,
    capture: { arguments: capture.arguments, results: capture.results },
    record(entry) {
      try {
        const { arguments: _args, result: _result, ...fields } = entry;
        // One copy, completed in place: this runs once per audited call.
        const unstamped: Omit<AuditRecord, 'chain' | 'seq' | 'prev' | 'hash'> = { schema: AUDIT_SCHEMA, timestamp: new Date().toISOString(), ...fields };
        bound(unstamped);
        scrubText(unstamped);
        const taken = captured(entry);
        if (taken !== undefined) unstamped.capture = taken;
        const record = chain.stamp(unstamped);
        ring.push(record);
        for (const outlet of outlets) outlet.write(record);
      } catch (err) {
        // A value structuredClone cannot copy, a sink's bug: the call is answered anyway.
        logger.error({ err, method: entry.method }, 'could not write an audit record');
      }
    },
    query: (query) => ring.query(query),
    stats: () => outlets.map((o) => o.stats()),
    async close(timeoutMs) {
      await Promise.all(outlets.map((o) => o.close(timeoutMs)));
    },
  };
}

/** The log sink: one line per record on the gateway's stream, `"audit":true`, at info whatever `logging.level` says. */
export function createLogSink(logger: Logger): AuditOutlet {
  const out = createAuditLogger(logger);
  let sent = 0;
  return {
    name: 'log',
    write(record) {
      out.info(record, 'audit');
      sent++;
    },
    stats: () => ({ sink: 'log', sent, queued: 0, dropped: 0 }),
    close: async () => undefined,
  };
}
