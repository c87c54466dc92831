/**
 * The benchmark's report of issue 34's goals (bench/lib/report-goals.ts), its cluster tables
 * (report-cluster.ts) and the order in which a before/after run alternates the two builds
 * (scenarios.ts), from fixed inputs: pure logic, no process, no timing.
 */
import { describe, expect, it } from 'vitest';
import type { PairResult } from '../../../bench/lib/cluster-scenarios.ts';
import { missingPrograms } from '../../../bench/lib/cluster.ts';
import type { LoadResult } from '../../../bench/lib/load.ts';
import type { OpenResult } from '../../../bench/lib/open.ts';
import { pairTable } from '../../../bench/lib/report-cluster.ts';
import { goalLines, GOALS } from '../../../bench/lib/report-goals.ts';
import { cellKey, emptyCell, type Cell, type Results } from '../../../bench/lib/results.ts';
import { goalsOnly, roundOrder, scenarios, withBefore, type Scenario } from '../../../bench/lib/scenarios.ts';
import type { SystemName } from '../../../bench/lib/systems.ts';

const load = (callsPerSecond: number, p50 = 1, serverCpu = 100, errors = 0): LoadResult => ({
  calls: 1_000,
  errors,
  firstError: errors > 0 ? 'boom' : undefined,
  callsPerSecond,
  p50,
  p90: p50,
  p99: p50,
  serverCpu,
  gatewayCpu: serverCpu,
});
const open = (p50: number, errors = 0): OpenResult => ({ opened: 20, errors, firstError: undefined, p50, p90: p50, max: p50 });
const pair = (subject: LoadResult, reference: LoadResult): PairResult => ({ subject, reference });

function put(results: Results, scenario: string, system: SystemName, fill: Partial<Cell>): void {
  results.set(cellKey(scenario, system), { ...emptyCell(), ...fill });
}

/** A run where this build meets every goal and, with `before`, the build before meets none. */
function run(before: boolean): Results {
  const r: Results = new Map();
  put(r, '1x1', 'direct-http', { loads: [load(1_000, 1)] });
  put(r, '1x32', 'direct-http', { loads: [load(1_000)] });
  put(r, '64x4', 'direct-http', { loads: [load(1_000)] });
  put(r, '1x1', 'switchboard', { loads: [load(900, 1.1)] });
  put(r, '1x32', 'switchboard', { loads: [load(950)] });
  put(r, '64x4', 'switchboard', { loads: [load(800)] });
  put(r, '2026-1x32', 'switchboard', { loads: [load(960)] });
  put(r, 'relay', 'switchboard', { pairs: [pair(load(800, 1.2, 120), load(1_000, 1, 100))] });
  put(r, 'replicas', 'switchboard', { pairs: [pair(load(900), load(1_000))] });
  for (const sc of ['open', 'open-roots', 'open-full']) put(r, sc, 'switchboard-spare', { opens: [open(5)] });
  // The floor: floor-relay against direct-http, and the bare proxy pair in `relay`.
  put(r, '1x1', 'floor-relay', { loads: [load(950, 1.05)] });
  put(r, '1x32', 'floor-relay', { loads: [load(1_000)] });
  put(r, '64x4', 'floor-relay', { loads: [load(900)] });
  put(r, 'relay', 'floor-relay', { pairs: [pair(load(900, 1.1, 110), load(1_000, 1, 100))] });
  if (before) {
    put(r, '1x1', 'switchboard-before', { loads: [load(500, 2)] });
    put(r, '1x32', 'switchboard-before', { loads: [load(600)] });
    put(r, '64x4', 'switchboard-before', { loads: [load(800, 1, 100, 3)] });
    put(r, '2026-1x32', 'switchboard-before', { loads: [load(300)] });
    put(r, 'relay', 'switchboard-before', { pairs: [pair(load(300, 3, 600), load(1_000, 1, 100))] });
    put(r, 'replicas', 'switchboard-before', { pairs: [pair(load(300), load(1_000))] });
    for (const sc of ['open', 'open-roots', 'open-full']) put(r, sc, 'switchboard-spare-before', { opens: [open(40)] });
  }
  return r;
}

describe('the goals of issue 34 in the report', () => {
  it('has one row per row of the issue table, each met or not per build, side by side', () => {
    const lines = goalLines(run(true));
    expect(GOALS).toHaveLength(10);
    expect(lines[0]).toBe("| row of the issue's table | goal | switchboard (this build) | switchboard-before | floor (floor-relay) | switchboard / floor |");
    expect(lines).toContain('| 1. 1 session x 1 in flight, calls/s | >= 0.8x direct-http | 0.90x: **met** | 0.50x: **not met** | 0.95x | 95% |');
    expect(lines).toContain('| 2. 1x1 median latency | <= 1.2x direct-http | 1.10x: **met** | 2.00x: **not met** | 1.05x | 95% |');
    expect(lines).toContain('| 4. 64 sessions x 4, defaults | >= 0.7x direct-http, 0 errors | 0.80x, 0 errors: **met** | 0.80x, 3 errors: **not met** | 0.90x | 89% |');
    expect(lines).toContain('| 5. relayed call vs call on its owner (`relay`, 1x1) | <= 1.3x, latency (p50) and CPU per call | p50 1.20x, CPU 1.20x: **met** | p50 3.00x, CPU 6.00x: **not met** | p50 1.10x, CPU 1.10x | p50 92%, CPU 92% |');
    expect(lines).toContain('| 6. 3 replicas behind HAProxy vs 1 (`replicas`, affinity) | >= 0.8x calls/s on this machine | 0.90x: **met** | 0.30x: **not met** |  |  |');
    expect(lines).toContain('| 8. session open with `spares: 2`, client declaring roots on 2025-06-18 (`open-roots`) | <= 10 ms (p50), no errors | 5.00 ms: **met** | 40.00 ms: **not met** |  |  |');
    expect(lines).toContain('| 10. 2026 path vs 2025 path at 1x32 (`2026-1x32` / `1x32`) | >= 0.95x | 1.01x: **met** | 0.50x: **not met** |  |  |');
    expect(lines).toContain('- This build: 10 of 10 goals met');
    expect(lines).toContain('- The build before: 0 of 10 goals met; not met: rows 1, 2, 3, 4, 5, 6, 7, 8, 9, 10');
  });

  it('shows one build without a before run, and names what was not measured', () => {
    const r = run(false);
    r.delete(cellKey('replicas', 'switchboard'));
    put(r, 'open-full', 'switchboard-spare', { unavailable: 'refused' });
    const lines = goalLines(r);
    expect(lines[0]).toBe("| row of the issue's table | goal | switchboard (this build) | floor (floor-relay) | switchboard / floor |");
    expect(lines).toContain('| 6. 3 replicas behind HAProxy vs 1 (`replicas`, affinity) | >= 0.8x calls/s on this machine | not measured |  |  |');
    expect(lines).toContain('- This build: 8 of 10 goals met; not measured in this run: rows 6, 9');
    expect(lines.some((l) => l.includes('build before'))).toBe(false);
  });

  it('fails a goal on either half of it: the relay CPU alone, errors of a failed round, an open that erred', () => {
    const r = run(false);
    put(r, 'relay', 'switchboard', { pairs: [pair(load(900, 1.1, 150), load(1_000, 1, 100))] });
    put(r, '64x4', 'switchboard', { loads: [load(900)], failures: ['round 2: the gateway died'] });
    put(r, 'open', 'switchboard-spare', { opens: [open(4, 2)] });
    const lines = goalLines(r);
    expect(lines).toContain('| 5. relayed call vs call on its owner (`relay`, 1x1) | <= 1.3x, latency (p50) and CPU per call | p50 1.10x, CPU 1.50x: **not met** | p50 1.10x, CPU 1.10x | p50 100%, CPU 73% |');
    expect(lines).toContain('| 4. 64 sessions x 4, defaults | >= 0.7x direct-http, 0 errors | 0.90x, 1 errors: **not met** | 0.90x | 100% |');
    expect(lines).toContain('| 7. session open with `spares: 2`, bare client (`open`) | <= 10 ms (p50), no errors | 4.00 ms, 2 errors: **not met** |  |  |');
    expect(lines).toContain('- This build: 7 of 10 goals met; not met: rows 4, 5, 7');
  });
});

describe('the floor of issue 34 in the goals table', () => {
  it('shows the floor of rows 1-5 and how much of it this build reaches, leaving met / not met to the goals', () => {
    const r = run(false);
    // The gateway at half the floor's throughput and twice its latency: 50% of the reachable, goals unchanged.
    put(r, '1x1', 'switchboard', { loads: [load(475, 2.1)] });
    const lines = goalLines(r);
    expect(lines).toContain('| 1. 1 session x 1 in flight, calls/s | >= 0.8x direct-http | 0.47x: **not met** | 0.95x | 50% |');
    expect(lines).toContain('| 2. 1x1 median latency | <= 1.2x direct-http | 2.10x: **not met** | 1.05x | 50% |');
    expect(lines).toContain('| 3. 1 x 32 in flight | >= 0.9x direct-http | 0.95x: **met** | 1.00x | 95% |');
    expect(lines).toContain('- This build: 8 of 10 goals met; not met: rows 1, 2');
    expect(lines.at(-1)).toMatch(/^- Floor: `floor-relay` \(bench\/floor-relay.mjs\).*bench\/floor-proxy.mjs/);
  });

  it('says "not measured" for a floor that did not run, failed or was unavailable, and for a gateway without figures', () => {
    const r = run(false);
    r.delete(cellKey('1x1', 'floor-relay'));
    put(r, '1x32', 'floor-relay', { failures: ['floor-relay exited at start'] });
    put(r, 'relay', 'floor-relay', { unavailable: 'no undici' });
    r.delete(cellKey('64x4', 'switchboard'));
    const lines = goalLines(r);
    expect(lines).toContain('| 1. 1 session x 1 in flight, calls/s | >= 0.8x direct-http | 0.90x: **met** | not measured | not measured |');
    expect(lines).toContain('| 2. 1x1 median latency | <= 1.2x direct-http | 1.10x: **met** | not measured | not measured |');
    expect(lines).toContain('| 3. 1 x 32 in flight | >= 0.9x direct-http | 0.95x: **met** | not measured | not measured |');
    expect(lines).toContain('| 4. 64 sessions x 4, defaults | >= 0.7x direct-http, 0 errors | not measured | 0.90x | not measured |');
    expect(lines).toContain('| 5. relayed call vs call on its owner (`relay`, 1x1) | <= 1.3x, latency (p50) and CPU per call | p50 1.20x, CPU 1.20x: **met** | not measured | not measured |');
    expect(lines).toContain('- This build: 9 of 10 goals met; not measured in this run: rows 4');
    // No direct-http at all: neither the gateway's ratio nor the floor's exists.
    for (const sc of ['1x1', '1x32', '64x4']) r.delete(cellKey(sc, 'direct-http'));
    expect(goalLines(r)).toContain('| 1. 1 session x 1 in flight, calls/s | >= 0.8x direct-http | not measured | not measured | not measured |');
  });
});

describe('the cluster tables', () => {
  it('shows both sides and the median of the per-round ratios, and an unavailable build as such', () => {
    const r: Results = new Map();
    put(r, 'relay', 'switchboard', { pairs: [pair(load(500, 2, 400), load(1_000, 1, 100)), pair(load(600, 3, 300), load(1_000, 1, 100)), pair(load(700, 1.5, 200), load(1_000, 1, 100))] });
    put(r, 'relay', 'switchboard-before', { unavailable: 'redis-server not installed' });
    const sc = withBefore(scenarios(10)).find((s) => s.name === 'relay') as Scenario & { kind: 'relay' };
    const lines = pairTable(r, sc);
    expect(lines[2]).toContain('| relayed calls/s | owner calls/s |');
    expect(lines).toContain('| switchboard | 600 | 1,000 | 0.60x | 2.000 | 1.000 | 2.00x | 300 | 100 | 3.00x | 0 |');
    expect(lines).toContain('| switchboard-before | unavailable | | | | | | | | | |');
  });

  it('names the programs a cluster scenario lacks', () => {
    expect(missingPrograms(['no-such-program-7f3a'])).toBe('no-such-program-7f3a not installed (apt-get install no-such-program-7f3a)');
    expect(missingPrograms(['sh'])).toBeUndefined();
  });
});

describe('a before/after run', () => {
  it('adds each -before twin right after its system, wherever that system runs, and nowhere else', () => {
    const plain = scenarios(10);
    const both = withBefore(plain);
    for (const [i, sc] of both.entries()) {
      const was = (plain[i] as Scenario).systems;
      expect(sc.systems.includes('switchboard-before')).toBe(was.includes('switchboard'));
      expect(sc.systems.includes('switchboard-spare-before')).toBe(was.includes('switchboard-spare'));
      if (was.includes('switchboard')) expect(sc.systems[sc.systems.indexOf('switchboard') + 1]).toBe('switchboard-before');
    }
    expect(both.find((s) => s.name === 'relay')?.systems).toEqual(['switchboard', 'switchboard-before', 'floor-relay']);
    expect(both.find((s) => s.name === 'open-roots')?.systems).toEqual(['switchboard', 'switchboard-before', 'switchboard-spare', 'switchboard-spare-before']);
  });

  it('alternates which build runs first every round, while the rotation still moves every system', () => {
    const two: SystemName[] = ['switchboard', 'switchboard-before'];
    expect([0, 1, 2, 3].map((round) => roundOrder(two, round)[0])).toEqual(['switchboard', 'switchboard-before', 'switchboard', 'switchboard-before']);
    const four: SystemName[] = ['direct-http', 'switchboard', 'switchboard-before', 'supergateway'];
    const orders = [0, 1, 2, 3].map((round) => roundOrder(four, round));
    for (const [round, order] of orders.entries()) {
      expect([...order].sort()).toEqual([...four].sort());
      const afterFirst = order.indexOf('switchboard') < order.indexOf('switchboard-before');
      expect(afterFirst).toBe(round % 2 === 0);
    }
    expect(new Set(orders.map((o) => o[0])).size).toBe(4);
  });

  it('runs the floor in the scenarios the goals read, and moves it through the order like every system', () => {
    const plain = scenarios(10);
    expect(plain.filter((sc) => sc.systems.includes('floor-relay')).map((sc) => sc.name)).toEqual(['1x1', '1x32', '64x4', 'relay']);
    const systems = (plain.find((sc) => sc.name === '1x1') as Scenario).systems;
    const places = Array.from({ length: systems.length }, (_, round) => roundOrder(systems, round).indexOf('floor-relay'));
    expect(new Set(places).size).toBe(systems.length);
  });

  it('--goals keeps the scenarios of the issue table, each with the systems its rows read, and their twins', () => {
    const picked = withBefore(goalsOnly(scenarios(10)));
    expect(Object.fromEntries(picked.map((sc) => [sc.name, sc.systems]))).toEqual({
      '1x1': ['direct-http', 'floor-relay', 'switchboard', 'switchboard-before'],
      '1x32': ['direct-http', 'floor-relay', 'switchboard', 'switchboard-before'],
      '64x4': ['direct-http', 'floor-relay', 'switchboard', 'switchboard-before'],
      '2026-1x32': ['switchboard', 'switchboard-before'],
      open: ['switchboard-spare', 'switchboard-spare-before'],
      'open-roots': ['switchboard-spare', 'switchboard-spare-before'],
      'open-full': ['switchboard-spare', 'switchboard-spare-before'],
      relay: ['switchboard', 'switchboard-before', 'floor-relay'],
      replicas: ['switchboard', 'switchboard-before'],
    });
  });
});
