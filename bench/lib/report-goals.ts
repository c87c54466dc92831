/**
 * The goals of issue 34 ("speed where users feel it"), one row per row of the issue's table: the
 * goal, the figure this run measured for this build (`switchboard`, `switchboard-spare` for the
 * session opens) and, in a before/after run, for the build before (`-before`), each met or not.
 * Ratios are against direct-http in the same run, as in the issue; the cluster rows are ratios
 * within the same build (relayed / owner, 3 replicas / 1).
 *
 * Rows 1-5 also show their floor, measured in the same run: the same ratio for floor-relay (the
 * least any stdio gateway does, floor-relay.mjs) and, for the relayed call, for a bare proxy in
 * front of floor-relay; and how much of that floor this build reaches. The goals stay the issue's.
 */
import { cellKey, loadMedian, openMedian, pairRatio, ratio, fmt, status, type Results } from './results.ts';
import type { SystemName } from './systems.ts';

export type Build = 'after' | 'before';

/** What one build measured for one goal: the figure as shown, and whether it meets the goal. */
export interface GoalFigure {
  readonly text: string;
  readonly met: boolean;
}

/** One figure of a row for any system (this build's gateway, the floor): a ratio, and which way is better. */
export interface Measure {
  /** '' for a row with one figure; 'p50', 'CPU' for the relayed call. */
  readonly label: string;
  readonly value: number;
  readonly higherIsBetter: boolean;
}

export interface Goal {
  /** The row of the issue's table. */
  readonly what: string;
  readonly goal: string;
  /** Undefined: not measured in this run (scenario or system not run, unavailable, failed). */
  figure(results: Results, build: Build): GoalFigure | undefined;
  /** Rows with a floor: the row's figures for `system`, undefined when not measured. */
  readonly measures?: (results: Results, system: SystemName) => readonly Measure[] | undefined;
}

/** The system that measures the floor: floor-relay in the load scenarios, the bare proxy pair in `relay`. */
export const FLOOR: SystemName = 'floor-relay';

const GATEWAY: Record<Build, SystemName> = { after: 'switchboard', before: 'switchboard-before' };
const SPARE: Record<Build, SystemName> = { after: 'switchboard-spare', before: 'switchboard-spare-before' };

/** Errors and failed rounds of a cell: the goals that say "0 errors" count both. */
function errorsOf(results: Results, scenario: string, system: SystemName): number {
  const cell = results.get(cellKey(scenario, system));
  if (cell === undefined) return 0;
  const counted = [...cell.loads, ...cell.opens, ...cell.pairs.flatMap((p) => [p.subject, p.reference])];
  return counted.reduce((n, r) => n + r.errors, 0) + cell.failures.length;
}

/** A ratio against direct-http for one load field; undefined when either side has no figure. */
function vsDirect(results: Results, scenario: string, system: SystemName, field: 'callsPerSecond' | 'p50'): number | undefined {
  const v = loadMedian(results, scenario, system, field) / loadMedian(results, scenario, 'direct-http', field);
  return Number.isFinite(v) ? v : undefined;
}

/** The measure of a load row: one ratio against direct-http. */
const directMeasure =
  (scenario: string, field: 'callsPerSecond' | 'p50') =>
  (results: Results, system: SystemName): Measure[] | undefined => {
    const v = vsDirect(results, scenario, system, field);
    return v === undefined ? undefined : [{ label: '', value: v, higherIsBetter: field === 'callsPerSecond' }];
  };

/** The measures of the relayed call: relayed / owner, p50 and CPU per call. */
function relayMeasures(results: Results, system: SystemName): Measure[] | undefined {
  const p50 = pairRatio(results, 'relay', system, 'p50');
  const cpu = pairRatio(results, 'relay', system, 'serverCpu');
  if (!Number.isFinite(p50) || !Number.isFinite(cpu)) return undefined;
  return [
    { label: 'p50', value: p50, higherIsBetter: false },
    { label: 'CPU', value: cpu, higherIsBetter: false },
  ];
}

const atLeast = (scenario: string, min: number, what: string): Goal => ({
  what,
  goal: `>= ${min}x direct-http`,
  figure: (results, build) => {
    const v = vsDirect(results, scenario, GATEWAY[build], 'callsPerSecond');
    return v === undefined ? undefined : { text: ratio(v), met: v >= min };
  },
  measures: directMeasure(scenario, 'callsPerSecond'),
});

const openGoal = (scenario: string, what: string): Goal => ({
  what: `session open with \`spares: 2\`, ${what}`,
  goal: '<= 10 ms (p50), no errors',
  figure: (results, build) => {
    const system = SPARE[build];
    if (status(results.get(cellKey(scenario, system))) !== undefined) return undefined;
    const p50 = openMedian(results, scenario, system, 'p50');
    const errors = errorsOf(results, scenario, system);
    return { text: `${fmt(p50, 2)} ms${errors > 0 ? `, ${errors} errors` : ''}`, met: p50 <= 10 && errors === 0 };
  },
});

export const GOALS: readonly Goal[] = [
  atLeast('1x1', 0.8, '1 session x 1 in flight, calls/s'),
  {
    what: '1x1 median latency',
    goal: '<= 1.2x direct-http',
    figure: (results, build) => {
      const v = vsDirect(results, '1x1', GATEWAY[build], 'p50');
      return v === undefined ? undefined : { text: ratio(v), met: v <= 1.2 };
    },
    measures: directMeasure('1x1', 'p50'),
  },
  atLeast('1x32', 0.9, '1 x 32 in flight'),
  {
    what: '64 sessions x 4, defaults',
    goal: '>= 0.7x direct-http, 0 errors',
    figure: (results, build) => {
      const v = vsDirect(results, '64x4', GATEWAY[build], 'callsPerSecond');
      if (v === undefined) return undefined;
      const errors = errorsOf(results, '64x4', GATEWAY[build]);
      return { text: `${ratio(v)}, ${errors} errors`, met: v >= 0.7 && errors === 0 };
    },
    measures: directMeasure('64x4', 'callsPerSecond'),
  },
  {
    what: 'relayed call vs call on its owner (`relay`, 1x1)',
    goal: '<= 1.3x, latency (p50) and CPU per call',
    figure: (results, build) => {
      const p50 = pairRatio(results, 'relay', GATEWAY[build], 'p50');
      const cpu = pairRatio(results, 'relay', GATEWAY[build], 'serverCpu');
      if (!Number.isFinite(p50) && !Number.isFinite(cpu)) return undefined;
      const errors = errorsOf(results, 'relay', GATEWAY[build]);
      return { text: `p50 ${ratio(p50)}, CPU ${ratio(cpu)}${errors > 0 ? `, ${errors} errors` : ''}`, met: p50 <= 1.3 && cpu <= 1.3 && errors === 0 };
    },
    measures: relayMeasures,
  },
  {
    what: '3 replicas behind HAProxy vs 1 (`replicas`, affinity)',
    goal: '>= 0.8x calls/s on this machine',
    figure: (results, build) => {
      const v = pairRatio(results, 'replicas', GATEWAY[build], 'callsPerSecond');
      if (!Number.isFinite(v)) return undefined;
      const errors = errorsOf(results, 'replicas', GATEWAY[build]);
      return { text: `${ratio(v)}${errors > 0 ? `, ${errors} errors` : ''}`, met: v >= 0.8 && errors === 0 };
    },
  },
  openGoal('open', 'bare client (`open`)'),
  openGoal('open-roots', 'client declaring roots on 2025-06-18 (`open-roots`)'),
  openGoal('open-full', 'sampling + elicitation + roots (`open-full`)'),
  {
    what: '2026 path vs 2025 path at 1x32 (`2026-1x32` / `1x32`)',
    goal: '>= 0.95x',
    figure: (results, build) => {
      const v = loadMedian(results, '2026-1x32', GATEWAY[build], 'callsPerSecond') / loadMedian(results, '1x32', GATEWAY[build], 'callsPerSecond');
      return Number.isFinite(v) ? { text: ratio(v), met: v >= 0.95 } : undefined;
    },
  },
];

/** True when the run has figures of the build before (`--before`, `--before-ref`). */
export function hasBefore(results: Results): boolean {
  return [...results.keys()].some((key) => key.endsWith('-before'));
}

/** The floor's figures, and how much of it this build reaches (100%: at the floor; latency and CPU inverted so that more is better). */
function floorCells(goal: Goal, results: Results): [string, string] {
  if (goal.measures === undefined) return ['', ''];
  const floor = goal.measures(results, FLOOR);
  if (floor === undefined) return ['not measured', 'not measured'];
  const show = (list: readonly Measure[], text: (m: Measure, i: number) => string) => list.map((m, i) => (m.label === '' ? '' : `${m.label} `) + text(m, i)).join(', ');
  const ours = goal.measures(results, GATEWAY.after);
  const floorText = show(floor, (m) => ratio(m.value));
  if (ours === undefined) return [floorText, 'not measured'];
  const reach = (m: Measure, i: number) => {
    const f = (floor[i] as Measure).value;
    return `${Math.round((m.higherIsBetter ? m.value / f : f / m.value) * 100)}%`;
  };
  return [floorText, show(ours, reach)];
}

/** What the floor columns mean, under the table. */
export const FLOOR_NOTE =
  '- Floor: `floor-relay` (bench/floor-relay.mjs) in the same run is the least any stdio gateway must do: node:http, one child per session, ' +
  "each call parsed, given the child's id, written to the child's stdin, its answer parsed and given the client's id back; no validation, " +
  'auth, policy, limits, audit, logging, SSE or batches. Rows 1-4: its ratio to direct-http; row 5: a bare proxy (node:http + undici, ' +
  'bench/floor-proxy.mjs) in front of floor-relay against floor-relay itself, p50 and CPU of both and the children. "switchboard / floor": ' +
  'the share of that floor this build reaches (calls/s: switchboard / floor; latency and CPU: floor / switchboard; 100% = at the floor; ' +
  "above 100% in row 5: the build's relayed / owner ratio is below the floor's, whose owner is faster).";

/** The goals table, and a line per build naming the goals not met and those not measured. */
export function goalLines(results: Results): string[] {
  const builds: Build[] = hasBefore(results) ? ['after', 'before'] : ['after'];
  const head = [...builds.map((b) => (b === 'after' ? 'switchboard (this build)' : 'switchboard-before')), 'floor (floor-relay)', 'switchboard / floor'];
  const lines = [`| row of the issue's table | goal | ${head.join(' | ')} |`, `| --- | --- |${' --- |'.repeat(head.length)}`];
  const tally = new Map<Build, { met: number; notMet: number[]; notMeasured: number[] }>(builds.map((b) => [b, { met: 0, notMet: [], notMeasured: [] }]));
  GOALS.forEach((goal, i) => {
    const cells = builds.map((build) => {
      const f = goal.figure(results, build);
      const t = tally.get(build) as { met: number; notMet: number[]; notMeasured: number[] };
      if (f === undefined) t.notMeasured.push(i + 1);
      else if (f.met) t.met++;
      else t.notMet.push(i + 1);
      return f === undefined ? 'not measured' : `${f.text}: **${f.met ? 'met' : 'not met'}**`;
    });
    lines.push(`| ${i + 1}. ${goal.what} | ${goal.goal} | ${[...cells, ...floorCells(goal, results)].join(' | ')} |`);
  });
  lines.push('');
  for (const [build, t] of tally) {
    const parts = [`${t.met} of ${GOALS.length} goals met`];
    if (t.notMet.length > 0) parts.push(`not met: rows ${t.notMet.join(', ')}`);
    if (t.notMeasured.length > 0) parts.push(`not measured in this run: rows ${t.notMeasured.join(', ')}`);
    lines.push(`- ${build === 'after' ? 'This build' : 'The build before'}: ${parts.join('; ')}`);
  }
  lines.push(FLOOR_NOTE);
  return lines;
}
