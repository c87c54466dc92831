/**
 * The audit trail's tamper evidence (docs/operations.md, "Verifying a chain"): every record carries
 * its chain's id, its sequence number, the previous record's hash and its own, the SHA-256 of its
 * canonical JSON (keys sorted at every depth, governance/canonical.ts) without `hash`. Editing a
 * record breaks its hash; deleting, inserting or reordering records breaks `seq` and `prev`; a
 * rewritten tail, rehashed from the edit on, is caught only against a copy kept elsewhere (an HTTP
 * or OTLP sink): the chain proves order and integrity, not who wrote it.
 *
 * `verifyLines` reads JSON lines as the sinks write them: a record on its own, or a gateway log line
 * carrying one (`"audit":true` plus the record's fields). Other lines are skipped, so a whole log
 * can be checked. Several chains (replicas, restarts) may be interleaved: each is checked alone.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../governance/canonical.ts';
import { duplicateKey } from './duplicate-keys.ts';
import { AUDIT_SCHEMA, AUDIT_SCHEMAS, auditRecordSchema, type AuditRecord } from '../../log/audit-record.ts';

export const GENESIS = '0'.repeat(64);

/** Every key a record may have but `hash`, sorted, with its JSON prefix: sorted once, not per record. */
const ORDER = Object.keys(auditRecordSchema.shape)
  .filter((key) => key !== 'hash')
  .sort()
  .map((key) => [key, `${JSON.stringify(key)}:`] as const);

/**
 * The canonical JSON of a record without `hash`: the same text as canonicalJson (keys sorted at
 * every depth), written from the pre-sorted keys, a third of its cost on the path of every call.
 * Keys outside the schema are not written: verify refuses a record that has any before hashing.
 */
export function canonicalRecord(body: Omit<AuditRecord, 'hash'>): string {
  const fields = body as Record<string, unknown>;
  let out = '';
  for (const [key, prefix] of ORDER) {
    const value = fields[key];
    if (value === undefined) continue;
    out += (out === '' ? '{' : ',') + prefix + (typeof value === 'object' && value !== null ? canonicalJson(value) : JSON.stringify(value));
  }
  return `${out}}`;
}

export const hashOf = (record: Omit<AuditRecord, 'hash'>): string => createHash('sha256').update(canonicalRecord(record)).digest('hex');

/** One chain being written: `stamp` fills in the chain fields of the next record. */
export function createChain(id: string) {
  let seq = 0;
  let prev = GENESIS;
  return {
    id,
    /** Completes `unstamped` in place (it is the record's only copy) and returns it. */
    stamp(unstamped: Omit<AuditRecord, 'chain' | 'seq' | 'prev' | 'hash'>): AuditRecord {
      seq++;
      const record = unstamped as AuditRecord;
      record.chain = id;
      record.seq = seq;
      record.prev = prev;
      record.hash = hashOf(record);
      prev = record.hash;
      return record;
    },
  };
}

/** A log line's own fields (pino's): not part of the record it carries. */
const ENVELOPE = ['level', 'time', 'pid', 'hostname', 'name', 'msg', 'audit'];

/** The record a JSON line carries, undefined for a line that carries none. */
function recordOf(line: unknown): Record<string, unknown> | undefined {
  if (typeof line !== 'object' || line === null || Array.isArray(line)) return undefined;
  const fields = line as Record<string, unknown>;
  if (!(AUDIT_SCHEMAS as readonly unknown[]).includes(fields.schema) && fields.audit !== true) return undefined;
  // A pin decision is an audit line of another kind (governance/pin-registry.ts): not in a chain.
  if (fields.schema === undefined) return undefined;
  if (fields.audit !== true) return fields;
  const record: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (!ENVELOPE.includes(key)) record[key] = value;
  return record;
}

export interface VerifyReport {
  readonly ok: boolean;
  /** Records checked, per chain. */
  readonly chains: ReadonlyMap<string, number>;
  readonly records: number;
  /** The first broken record: its line (1-based) and why. */
  readonly broken?: { readonly line: number; readonly chain: string | undefined; readonly seq: number | undefined; readonly why: string };
  /** Chains whose first record here is not seq 1 (a rotated log): checked from there on. */
  readonly startsLate: readonly string[];
}

/** A verifier fed one line at a time (a file of any size is read as a stream); `report` says where it stands. */
export function createVerifier() {
  const last = new Map<string, { seq: number; hash: string }>();
  const chains = new Map<string, number>();
  const startsLate: string[] = [];
  let records = 0;
  let lineNo = 0;
  let broken: VerifyReport['broken'];
  const fail = (chain: string | undefined, seq: number | undefined, why: string) => void (broken = { line: lineNo, chain, seq, why });

  const check = (raw: string): void => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // A record's own line that no longer parses is an edit; anything else is not ours.
      return raw.includes('switchboard.audit/') ? fail(undefined, undefined, 'not valid JSON') : undefined;
    }
    const fields = recordOf(parsed);
    if (fields === undefined) return;
    const twice = duplicateKey(raw);
    if (twice !== undefined) return fail(typeof fields.chain === 'string' ? fields.chain : undefined, typeof fields.seq === 'number' ? fields.seq : undefined, `the key ${JSON.stringify(twice)} is written twice (a reader and the hash would see different records)`);
    const checked = auditRecordSchema.safeParse(fields);
    const chain = typeof fields.chain === 'string' ? fields.chain : undefined;
    const seq = typeof fields.seq === 'number' ? fields.seq : undefined;
    if (!checked.success) {
      const issue = checked.error.issues[0];
      return fail(chain, seq, `not a ${AUDIT_SCHEMA} record (${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''})`);
    }
    const record = checked.data;
    const { hash, ...body } = record;
    if (hashOf(body) !== hash) return fail(record.chain, record.seq, 'its hash does not match its content (edited)');
    const before = last.get(record.chain);
    if (before === undefined) {
      if (record.seq !== 1) startsLate.push(record.chain);
      else if (record.prev !== GENESIS) return fail(record.chain, record.seq, 'the first record of a chain must have prev 0…0');
    } else {
      if (record.seq !== before.seq + 1) return fail(record.chain, record.seq, `expected seq ${before.seq + 1} (a record is missing, repeated or moved)`);
      if (record.prev !== before.hash) return fail(record.chain, record.seq, 'its prev is not the hash of the record before it');
    }
    last.set(record.chain, { seq: record.seq, hash });
    chains.set(record.chain, (chains.get(record.chain) ?? 0) + 1);
    records++;
  };

  return {
    /** Checks one line; false once a record is broken (later lines are not read). */
    push(line: string): boolean {
      if (broken !== undefined) return false;
      lineNo++;
      const raw = line.trim();
      if (raw !== '') check(raw);
      return broken === undefined;
    },
    report: (): VerifyReport => ({ ok: broken === undefined, chains, records, startsLate, ...(broken === undefined ? {} : { broken }) }),
  };
}

/** Checks every chain in `text` (JSON lines); stops at the first broken record. */
export function verifyLines(text: string): VerifyReport {
  const verifier = createVerifier();
  for (const line of text.split('\n')) if (!verifier.push(line)) break;
  return verifier.report();
}
