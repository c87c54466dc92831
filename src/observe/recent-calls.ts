/**
 * The console's audit view until the audit records land (issue 35, part 2): a bounded ring of the
 * last calls (`tools/call`, `prompts/get`, `resources/read`) heard on the observation seam, newest
 * last. Read through `query` only, so the console can be pointed at the audit helper's recent-records
 * query instead by swapping one function (http/console-sources.ts `audit`).
 *
 * Kept per call: when, who (principal id), the endpoint, the server, the method, the name or URI
 * as the client sent it, the outcome and its GW_* code, the latency. Never arguments or results.
 */
import type { Observer } from '../log/observer.ts';
import { NOOP_OBSERVER } from '../log/observer.ts';
import { eraOf } from './metrics.ts';

export const MAX_RECENT_CALLS = 1_000;
const AUDITED = new Set(['tools/call', 'prompts/get', 'resources/read']);

export interface CallRecord {
  readonly at: number;
  readonly principal: string | undefined;
  readonly endpoint: string;
  readonly era: string;
  readonly server: string | undefined;
  readonly method: string;
  /** Tool or prompt name, or resource URI, as the client sent it. */
  readonly name: string | undefined;
  readonly outcome: string;
  readonly code: string | undefined;
  readonly ms: number;
}

export interface CallFilter {
  readonly principal?: string | undefined;
  readonly server?: string | undefined;
  readonly tool?: string | undefined;
  readonly outcome?: string | undefined;
  /** At most this many, newest first (default and cap: MAX_RECENT_CALLS). */
  readonly limit?: number | undefined;
}

export interface RecentCalls {
  readonly observer: Observer;
  query(filter: CallFilter): CallRecord[];
}

export function createRecentCalls(max = MAX_RECENT_CALLS): RecentCalls {
  const ring: CallRecord[] = [];
  let next = 0;
  const observer: Observer = {
    ...NOOP_OBSERVER,
    observing: true,
    requestEnded(r, outcome, code) {
      if (!AUDITED.has(r.method)) return;
      const record: CallRecord = {
        at: Math.round(performance.timeOrigin + r.endedAt),
        principal: r.session.principal,
        endpoint: r.session.endpoint,
        era: eraOf(r.protocolVersion),
        server: r.member?.name,
        method: r.method,
        name: r.subject?.slice(0, 512),
        outcome,
        code,
        ms: Math.round((r.endedAt - r.startedAt) * 10) / 10,
      };
      if (ring.length < max) ring.push(record);
      else ring[next] = record;
      next = (next + 1) % max;
    },
  };
  return {
    observer,
    query(filter) {
      const limit = Math.min(Math.max(1, filter.limit ?? max), max);
      const out: CallRecord[] = [];
      for (let i = 1; i <= ring.length && out.length < limit; i++) {
        const r = ring[(next - i + ring.length * 2) % ring.length] as CallRecord;
        if (filter.principal !== undefined && r.principal !== filter.principal) continue;
        if (filter.server !== undefined && r.server !== filter.server) continue;
        if (filter.tool !== undefined && r.name !== filter.tool) continue;
        if (filter.outcome !== undefined && r.outcome !== filter.outcome) continue;
        out.push(r);
      }
      return out;
    },
  };
}
