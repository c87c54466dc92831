/**
 * The report: medians across rounds per scenario and system, ratios against direct-http, every
 * goal of issue 34 (report-goals.ts) and target of issue 5 as met / not met, and the per-round spread. Markdown for docs/benchmarks.md
 * and the terminal.
 */
import type { LoadResult } from './load.ts';
import type { OpenResult } from './open.ts';
import type { RampResult } from './ramp.ts';
import { pairSpread, pairTable } from './report-cluster.ts';
import { goalLines } from './report-goals.ts';
import { cellKey, fmt, fmtInt, loadMedian, median, ratio, rampMedian, status, type Cell, type Results } from './results.ts';
import type { Scenario } from './scenarios.ts';
import type { SystemName } from './systems.ts';

export { cellKey, loadMedian, median, rampMedian, type Cell, type Results } from './results.ts';

function loadTable(results: Results, sc: Scenario): string[] {
  const lines = [
    `**${sc.name}** (${sc.about})`,
    '',
    '| system | calls/s | p50 ms | p90 ms | p99 ms | errors | server CPU ms/1k | gateway CPU ms/1k | throughput vs direct-http | p50 vs direct-http |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  const ref = (f: keyof LoadResult) => loadMedian(results, sc.name, 'direct-http', f);
  for (const system of sc.systems) {
    const cell = results.get(cellKey(sc.name, system));
    const why = status(cell);
    if (why !== undefined) {
      lines.push(`| ${system} | ${why} | | | | | | | | |`);
      continue;
    }
    const m = (f: keyof LoadResult) => loadMedian(results, sc.name, system, f);
    const errors = (cell as Cell).loads.reduce((n, r) => n + r.errors, 0);
    lines.push(
      `| ${system} | ${fmtInt(m('callsPerSecond'))} | ${fmt(m('p50'), 3)} | ${fmt(m('p90'), 3)} | ${fmt(m('p99'), 3)} | ${errors} | ${fmt(m('serverCpu'), 0)} | ${fmt(m('gatewayCpu'), 0)} | ${ratio(m('callsPerSecond') / ref('callsPerSecond'))} | ${ratio(m('p50') / ref('p50'))} |`,
    );
  }
  return lines;
}

function rampTable(results: Results, sc: Scenario): string[] {
  const lines = [
    `**${sc.name}** (${sc.about})`,
    '',
    '| system | sessions open | errors | sessions/s | gateway KiB per session | server RSS MiB | processes | p50 ms | p99 ms |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const system of sc.systems) {
    const cell = results.get(cellKey(sc.name, system));
    const why = status(cell);
    if (why !== undefined) {
      lines.push(`| ${system} | ${why} | | | | | | | |`);
      continue;
    }
    const m = (f: keyof RampResult) => rampMedian(results, sc.name, system, f);
    const errors = (cell as Cell).ramps.reduce((n, r) => n + r.errors, 0);
    lines.push(
      `| ${system} | ${fmtInt(m('opened'))} | ${errors} | ${fmtInt(m('setupPerSecond'))} | ${fmt(m('rssPerSessionKiB'), 1)} | ${fmt(m('treeRssMiB'), 0)} | ${fmtInt(m('processes'))} | ${fmt(m('p50'), 2)} | ${fmt(m('p99'), 2)} |`,
    );
  }
  return lines;
}

/** Issue 22: a session opens in at most 5 ms at the median with a warm spare configured. */
const OPEN_TARGET_MS = 5;

function openTable(results: Results, sc: Scenario): string[] {
  const lines = [
    `**${sc.name}** (${sc.about})`,
    '',
    '| system | sessions opened | errors | open p50 ms | open p90 ms | open max ms |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  const m = (system: SystemName, f: keyof OpenResult) => median((results.get(cellKey(sc.name, system))?.opens ?? []).map((r) => r[f] as number));
  for (const system of sc.systems) {
    const cell = results.get(cellKey(sc.name, system));
    const why = status(cell);
    if (why !== undefined) {
      lines.push(`| ${system} | ${why} | | | | |`);
      continue;
    }
    const errors = (cell as Cell).opens.reduce((n, r) => n + r.errors, 0);
    lines.push(`| ${system} | ${fmtInt(m(system, 'opened'))} | ${errors} | ${fmt(m(system, 'p50'), 2)} | ${fmt(m(system, 'p90'), 2)} | ${fmt(m(system, 'max'), 2)} |`);
  }
  const warm = m('switchboard-spare', 'p50');
  if (Number.isFinite(warm)) lines.push('', `Target (issue 22): open p50 <= ${OPEN_TARGET_MS} ms with a warm spare: ${fmt(warm, 2)} ms, **${warm <= OPEN_TARGET_MS ? 'met' : 'not met'}**`);
  return lines;
}

interface Target {
  what: string;
  figure: (system: SystemName) => number;
  /** True when the figure meets the target. */
  meets: (value: number) => boolean;
  show: (value: number, system: SystemName) => string;
}

const GATEWAYS: readonly SystemName[] = ['switchboard', 'switchboard-shared', 'switchboard-http'];

function targets(results: Results): Target[] {
  const tput = (sc: string) => (s: SystemName) => loadMedian(results, sc, s, 'callsPerSecond') / loadMedian(results, sc, 'direct-http', 'callsPerSecond');
  return [
    { what: 'Throughput at 1x32 >= 0.5x direct-http', figure: tput('1x32'), meets: (v) => v >= 0.5, show: ratio },
    { what: 'Throughput at 64x4 >= 0.5x direct-http', figure: tput('64x4'), meets: (v) => v >= 0.5, show: ratio },
    {
      what: 'Latency at 1x1: p50 <= 2x direct-http p50',
      figure: (s) => loadMedian(results, '1x1', s, 'p50') / loadMedian(results, '1x1', 'direct-http', 'p50'),
      meets: (v) => v <= 2,
      show: ratio,
    },
    {
      what: 'Gateway CPU per 1,000 small calls (1x32, gateway process alone) <= 2.5x direct-http (its whole server)',
      figure: (s) => loadMedian(results, '1x32', s, 'gatewayCpu') / loadMedian(results, '1x32', 'direct-http', 'serverCpu'),
      meets: (v) => v <= 2.5,
      show: ratio,
    },
    { what: '1 MiB results: throughput >= 0.6x direct-http', figure: tput('1MiB'), meets: (v) => v >= 0.6, show: ratio },
    {
      what: 'Gateway memory per open session (ramp, gateway process alone) <= 64 KiB',
      figure: (s) => rampMedian(results, 'ramp', s, 'rssPerSessionKiB'),
      meets: (v) => v <= 64,
      show: (v) => `${fmt(v, 1)} KiB`,
    },
    {
      what: 'Ramp: every session opened with no errors',
      figure: (s) => {
        const cell = results.get(cellKey('ramp', s));
        if (cell === undefined || cell.ramps.length === 0) return NaN;
        return cell.ramps.reduce((n, r) => n + r.errors, 0) + cell.failures.length;
      },
      meets: (v) => v === 0,
      show: (v, s) => `${fmtInt(rampMedian(results, 'ramp', s, 'opened'))} sessions, ${v} errors`,
    },
  ];
}

function targetLines(results: Results): string[] {
  const lines = ['| target | ' + GATEWAYS.join(' | ') + ' |', '| --- |' + ' --- |'.repeat(GATEWAYS.length)];
  for (const t of targets(results)) {
    const cells = GATEWAYS.map((s) => {
      const v = t.figure(s);
      if (!Number.isFinite(v)) return 'not measured';
      return `${t.show(v, s)}: **${t.meets(v) ? 'met' : 'not met'}**`;
    });
    lines.push(`| ${t.what} | ${cells.join(' | ')} |`);
  }
  lines.push(
    '| Shared upstream mode (one child or a pool, per target; per-session the default) | ' +
      GATEWAYS.map((s) => (s === 'switchboard-shared' ? (status(results.get(cellKey('1x1', s))) === undefined ? 'in use here: **met**' : 'not measured') : 'n/a')).join(' | ') +
      ' |',
  );
  return lines;
}

function spread(results: Results, list: readonly Scenario[], rounds: number): string[] {
  const lines = ['| scenario | system | ' + Array.from({ length: rounds }, (_, i) => `r${i + 1}`).join(' | ') + ' |', '| --- | --- |' + ' ---: |'.repeat(rounds)];
  for (const sc of list) {
    for (const system of sc.systems) {
      const cell = results.get(cellKey(sc.name, system));
      if (cell === undefined || status(cell) !== undefined) continue;
      const values =
        sc.kind === 'load'
          ? cell.loads.map((r) => fmtInt(r.callsPerSecond))
          : sc.kind === 'open'
            ? cell.opens.map((r) => `${fmt(r.p50, 2)} ms`)
            : sc.kind === 'ramp'
              ? cell.ramps.map((r) => fmtInt(r.setupPerSecond))
              : pairSpread(sc.kind, cell);
      lines.push(`| ${sc.name} | ${system} | ${values.join(' | ')} |`);
    }
  }
  return lines;
}

function scenarioTable(results: Results, sc: Scenario): string[] {
  switch (sc.kind) {
    case 'load':
      return loadTable(results, sc);
    case 'open':
      return openTable(results, sc);
    case 'ramp':
      return rampTable(results, sc);
    case 'relay':
    case 'replicas':
      return pairTable(results, { ...sc, kind: sc.kind });
  }
}

export interface ReportContext {
  date: string;
  elapsedSeconds: number;
  command: string;
  machine: string[];
  settings: string;
  rounds: number;
  chart: string | undefined;
}

export function renderReport(results: Results, list: readonly Scenario[], ctx: ReportContext): string {
  const out: string[] = [];
  out.push(`Run of ${ctx.date}, ${fmt(ctx.elapsedSeconds / 60, 1)} min in all: \`${ctx.command}\``);
  out.push('');
  out.push(...ctx.machine);
  out.push(`- ${ctx.settings}`);
  out.push('');
  out.push('Medians across rounds. "server CPU" is utime + stime of every server-side process (the gateway, its');
  out.push('children, a separately started upstream) per 1,000 calls; "gateway CPU" the gateway process alone');
  out.push('(for direct-http: the HTTP server). Ratios are against direct-http in the same run.');
  out.push('');
  if (ctx.chart !== undefined) out.push(`![Throughput and p99 per system and scenario](${ctx.chart})`, '');
  out.push('### Goals (issue 34)', '', ...goalLines(results), '');
  out.push('### Targets (issue 5)', '', ...targetLines(results), '');
  out.push('### Scenarios', '');
  for (const sc of list) out.push(...scenarioTable(results, sc), '');
  const notes: string[] = [];
  for (const sc of list) {
    for (const system of sc.systems) {
      const cell = results.get(cellKey(sc.name, system));
      if (cell?.unavailable !== undefined) notes.push(`- ${sc.name} / ${system}: unavailable: ${cell.unavailable}`);
      for (const f of cell?.failures ?? []) notes.push(`- ${sc.name} / ${system}: failed: ${f}`);
      const pairs = (cell?.pairs ?? []).flatMap((p) => [p.subject, p.reference]);
      const firstError = [...(cell?.loads ?? []), ...(cell?.ramps ?? []), ...(cell?.opens ?? []), ...pairs].find((r) => r.firstError !== undefined)?.firstError;
      if (firstError !== undefined) notes.push(`- ${sc.name} / ${system}: first error: ${firstError}`);
    }
  }
  if (notes.length > 0) out.push('### Unavailable, failed and errors', '', ...notes.map((n) => n.replace(/\s+/g, ' ').slice(0, 400)), '');
  out.push('### Spread: calls/s (ramps: sessions/s; open: p50; relay: p50 relayed / owner; replicas: calls/s 3 / 1) per round', '', ...spread(results, list, ctx.rounds));
  return out.join('\n');
}
