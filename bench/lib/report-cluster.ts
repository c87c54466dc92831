/**
 * The tables of the cluster scenarios (relay, replicas): per build, the subject and its reference
 * side by side, and their ratios (the median over rounds of each round's ratio: both sides of a
 * round ran on the same machine state, one right after the other).
 */
import { cellKey, fmt, fmtInt, pairMedian, pairRatio, ratio, status, type Cell, type Results } from './results.ts';
import type { Scenario } from './scenarios.ts';

/** What the two sides of a pair are called in each cluster scenario. */
export const PAIR_NAMES: Record<'relay' | 'replicas', { subject: string; reference: string }> = {
  relay: { subject: 'relayed', reference: 'owner' },
  replicas: { subject: '3 replicas', reference: '1 replica' },
};

export function pairTable(results: Results, sc: Scenario & { kind: 'relay' | 'replicas' }): string[] {
  const { subject: s, reference: r } = PAIR_NAMES[sc.kind];
  const lines = [
    `**${sc.name}** (${sc.about})`,
    '',
    `| system | ${s} calls/s | ${r} calls/s | calls/s ${s} / ${r} | ${s} p50 ms | ${r} p50 ms | p50 ${s} / ${r} | ${s} CPU ms/1k | ${r} CPU ms/1k | CPU ${s} / ${r} | errors |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const system of sc.systems) {
    const cell = results.get(cellKey(sc.name, system));
    const why = status(cell);
    if (why !== undefined) {
      lines.push(`| ${system} | ${why} |${' |'.repeat(9)}`);
      continue;
    }
    const m = (side: 'subject' | 'reference', f: 'callsPerSecond' | 'p50' | 'serverCpu') => pairMedian(results, sc.name, system, side, f);
    const q = (f: 'callsPerSecond' | 'p50' | 'serverCpu') => ratio(pairRatio(results, sc.name, system, f));
    const errors = (cell as Cell).pairs.reduce((n, p) => n + p.subject.errors + p.reference.errors, 0);
    lines.push(
      `| ${system} | ${fmtInt(m('subject', 'callsPerSecond'))} | ${fmtInt(m('reference', 'callsPerSecond'))} | ${q('callsPerSecond')} | ${fmt(m('subject', 'p50'), 3)} | ${fmt(m('reference', 'p50'), 3)} | ${q('p50')} | ${fmt(m('subject', 'serverCpu'), 0)} | ${fmt(m('reference', 'serverCpu'), 0)} | ${q('serverCpu')} | ${errors} |`,
    );
  }
  lines.push('', 'CPU: every replica and its children (Redis and HAProxy not counted), per 1,000 calls.');
  if (sc.systems.includes('floor-relay')) {
    lines.push('floor-relay: the floor of the relay, no gateway: relayed = through a bare proxy (bench/floor-proxy.mjs) to floor-relay, owner = floor-relay directly; CPU of the proxy, floor-relay and its children on both sides.');
  }
  return lines;
}

/** One round's figure for the spread table: the relay's latency ratio, the replicas' throughput ratio. */
export function pairSpread(kind: 'relay' | 'replicas', cell: Cell): string[] {
  const field = kind === 'relay' ? 'p50' : 'callsPerSecond';
  return cell.pairs.map((p) => ratio(p.subject[field] / p.reference[field]));
}
