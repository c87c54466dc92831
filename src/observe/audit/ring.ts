/**
 * The recent audit records of this replica, in memory, for the console and `GET /admin/api/audit`:
 * a fixed ring (gateway.audit.recent, default 1000) that overwrites the oldest, and a query that
 * filters by principal, server, tool (or prompt, or URI) and outcome, newest first. Bounded both
 * ways: what it keeps and what one query returns (at most MAX_QUERY_LIMIT).
 */
import type { AuditRecord } from '../../log/audit-record.ts';

export const MAX_QUERY_LIMIT = 1000;
export const DEFAULT_QUERY_LIMIT = 100;

export interface AuditQuery {
  readonly principal?: string | undefined;
  readonly server?: string | undefined;
  /** Matches the record's tool, prompt or URI. */
  readonly tool?: string | undefined;
  readonly outcome?: AuditRecord['outcome'] | undefined;
  /** At most this many (1..MAX_QUERY_LIMIT; default DEFAULT_QUERY_LIMIT). */
  readonly limit?: number | undefined;
}

export interface AuditRing {
  push(record: AuditRecord): void;
  /** Matching records, newest first. */
  query(query?: AuditQuery): AuditRecord[];
  readonly size: number;
  readonly capacity: number;
}

export function createAuditRing(capacity: number): AuditRing {
  const slots: (AuditRecord | undefined)[] = new Array<AuditRecord | undefined>(capacity);
  let next = 0;
  let size = 0;
  const matches = (r: AuditRecord, q: AuditQuery) =>
    (q.principal === undefined || r.principal === q.principal) &&
    (q.server === undefined || r.server === q.server) &&
    (q.tool === undefined || (r.tool ?? r.prompt ?? r.uri) === q.tool) &&
    (q.outcome === undefined || r.outcome === q.outcome);
  return {
    push(record) {
      if (capacity === 0) return;
      slots[next] = record;
      next = (next + 1) % capacity;
      if (size < capacity) size++;
    },
    query(query = {}) {
      const limit = Math.min(Math.max(1, query.limit ?? DEFAULT_QUERY_LIMIT), MAX_QUERY_LIMIT);
      const out: AuditRecord[] = [];
      for (let i = 1; i <= size && out.length < limit; i++) {
        const record = slots[(next - i + capacity) % capacity] as AuditRecord;
        if (matches(record, query)) out.push(record);
      }
      return out;
    },
    get size() {
      return size;
    },
    capacity,
  };
}
