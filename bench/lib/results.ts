/**
 * What a benchmark run collects: one cell per scenario and system, a result per round, and the
 * medians across rounds that every table of the report is made of.
 */
import type { PairResult } from './cluster-scenarios.ts';
import type { LoadResult } from './load.ts';
import type { OpenResult } from './open.ts';
import type { RampResult } from './ramp.ts';
import type { SystemName } from './systems.ts';

export interface Cell {
  loads: LoadResult[];
  ramps: RampResult[];
  opens: OpenResult[];
  /** The cluster scenarios (relay, replicas): a subject and its reference per round. */
  pairs: PairResult[];
  /** Why the system could not run this scenario at all (not built yet, no such wire). */
  unavailable: string | undefined;
  /** Rounds that failed, with the reason. */
  failures: string[];
}

export type Results = Map<string, Cell>;
export const cellKey = (scenario: string, system: SystemName) => `${scenario}/${system}`;
export const emptyCell = (): Cell => ({ loads: [], ramps: [], opens: [], pairs: [], unavailable: undefined, failures: [] });

export function median(values: readonly number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export const fmt = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
export const fmtInt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
export const ratio = (n: number) => (Number.isFinite(n) ? `${n.toFixed(n < 0.1 ? 3 : 2)}x` : '-');

export function loadMedian(results: Results, scenario: string, system: SystemName, field: keyof LoadResult): number {
  const cell = results.get(cellKey(scenario, system));
  return median((cell?.loads ?? []).map((r) => r[field] as number));
}
export function rampMedian(results: Results, scenario: string, system: SystemName, field: keyof RampResult): number {
  const cell = results.get(cellKey(scenario, system));
  return median((cell?.ramps ?? []).map((r) => r[field] as number));
}
export function openMedian(results: Results, scenario: string, system: SystemName, field: keyof OpenResult): number {
  return median((results.get(cellKey(scenario, system))?.opens ?? []).map((r) => r[field] as number));
}
/** Median over rounds of subject / reference for one field of a cluster scenario's pairs. */
export function pairRatio(results: Results, scenario: string, system: SystemName, field: keyof LoadResult): number {
  return median((results.get(cellKey(scenario, system))?.pairs ?? []).map((p) => (p.subject[field] as number) / (p.reference[field] as number)));
}
export function pairMedian(results: Results, scenario: string, system: SystemName, side: keyof PairResult, field: keyof LoadResult): number {
  return median((results.get(cellKey(scenario, system))?.pairs ?? []).map((p) => p[side][field] as number));
}

/** Why a cell has no figures ("unavailable", "failed", "not run"), or undefined when it has some. */
export function status(cell: Cell | undefined): string | undefined {
  if (cell === undefined) return 'not run';
  if (cell.unavailable !== undefined) return 'unavailable';
  if (cell.loads.length === 0 && cell.ramps.length === 0 && cell.opens.length === 0 && cell.pairs.length === 0) return cell.failures.length > 0 ? 'failed' : 'not run';
  return undefined;
}
