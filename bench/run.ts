/**
 * `npm run bench`: every system through every scenario, alternating, for several rounds; prints
 * the report and writes it to docs/benchmarks.md (between the bench:begin/end markers) with the
 * chart docs/benchmarks.svg. See bench/README.md for the options.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { httpConnector, statelessConnector, stdioConnector, wsConnector, type Connector } from './lib/clients.ts';
import { prepareBefore } from './lib/before.ts';
import { measureRelay, measureRelayFloor, measureReplicas, stopClusterScenarios } from './lib/cluster-scenarios.ts';
import { runLoad } from './lib/load.ts';
import { runOpen } from './lib/open.ts';
import { runRamp } from './lib/ramp.ts';
import { renderReport } from './lib/report.ts';
import { chart, DOC, machine, SVG, writeDoc } from './lib/report-output.ts';
import { cellKey, emptyCell, type Cell, type Results } from './lib/results.ts';
import { BEFORE, goalsOnly, roundOrder, scenarios as allScenarios, withBefore, type Scenario } from './lib/scenarios.ts';
import { summariseProfiles } from './lib/profile.ts';
import { CLI, ECHO_SERVER, killAll, ROOT, startSystem, SYSTEM_NAMES, Unavailable, type RunningSystem, type SystemName } from './lib/systems.ts';


const { values: argv } = parseArgs({
  options: {
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    'ramp-sessions': { type: 'string' },
    'open-sessions': { type: 'string' },
    'shared-children': { type: 'string' },
    systems: { type: 'string' },
    scenarios: { type: 'string' },
    quick: { type: 'boolean', default: false },
    goals: { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    before: { type: 'string' },
    'before-ref': { type: 'string' },
  },
});

const int = (name: string, text: string) => {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${text}`);
  return n;
};
/** A flag, else its environment variable, else the quick or the full default. */
const setting = (name: string, env: string, quick: string, full: string) =>
  int(name, (argv as Record<string, string | boolean | undefined>)[name] as string | undefined ?? process.env[env] ?? (argv.quick ? quick : full));
const settings = {
  rounds: setting('rounds', 'BENCH_ROUNDS', '1', '3'),
  durationMs: setting('duration', 'BENCH_DURATION_MS', '1000', '5000'),
  warmupMs: setting('warmup', 'BENCH_WARMUP_MS', '300', '2000'),
  rampSessions: setting('ramp-sessions', 'BENCH_RAMP_SESSIONS', '100', '1000'),
  openSessions: setting('open-sessions', 'BENCH_OPEN_SESSIONS', '20', '50'),
  sharedChildren: setting('shared-children', 'BENCH_SHARED_CHILDREN', '2', '2'),
};
const pickList = <T extends string>(text: string | undefined, all: readonly T[], what: string): T[] => {
  if (text === undefined) return [...all];
  const list = text.split(',').map((s) => s.trim()) as T[];
  for (const item of list) if (!all.includes(item)) throw new Error(`unknown ${what} "${item}"; known: ${all.join(', ')}`);
  return list;
};
/** The build before (`--before`, `--before-ref`): its `-before` systems run next to this build's. */
const before = prepareBefore({ path: argv.before, ref: argv['before-ref'] }, ROOT);
// Every way out: the processes first, then the worktree of --before-ref (nothing runs from it any more).
process.on('exit', () => {
  killAll();
  stopClusterScenarios();
  before?.cleanup();
});
const BEFORE_NAMES: readonly SystemName[] = [...BEFORE.values()];
const systems = (() => {
  const picked = argv.systems === undefined ? SYSTEM_NAMES.filter((s) => before !== undefined || !BEFORE_NAMES.includes(s)) : pickList(argv.systems, SYSTEM_NAMES, 'system');
  if (before === undefined && picked.some((s) => BEFORE_NAMES.includes(s))) throw new Error(`${BEFORE_NAMES.join(' and ')} need --before or --before-ref`);
  // A system picked in a before/after run brings its twin on the build before.
  const twins = before === undefined ? [] : picked.flatMap((s) => BEFORE.get(s) ?? []);
  return [...new Set([...picked, ...twins])];
})();
const scenarioList = (() => {
  const every = allScenarios(settings.rampSessions, settings.openSessions);
  const plain = argv.goals ? goalsOnly(every) : every;
  const all = before === undefined ? plain : withBefore(plain);
  const names = pickList(argv.scenarios, all.map((s) => s.name), 'scenario');
  return all.filter((s) => names.includes(s.name)).map((s) => ({ ...s, systems: s.systems.filter((x) => systems.includes(x)) }));
})();
/** BENCH_NODE_FLAGS: extra Node flags for Switchboard only (e.g. a V8 heap setting to compare). */
const nodeFlags = [
  ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
  ...(argv['cpu-prof'] === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${argv['cpu-prof']}`]),
];

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping every child\n`);
    process.exit(130);
  });
}

function connectorFor(system: RunningSystem, sc: Scenario): Connector {
  if (system.name === 'direct') return stdioConnector(process.execPath, [ECHO_SERVER]);
  if (sc.wire === 'ws') {
    if (system.wsUrl === undefined) throw new Unavailable('no WebSocket endpoint');
    return wsConnector(system.wsUrl);
  }
  const connections = Math.min(512, sc.sessions * sc.inFlight + 16);
  // The reference keeps its 2025 session: the plain HTTP server speaks no 2026.
  if (sc.wire === 'http-2026' && system.name !== 'direct-http') return statelessConnector(system.url as string, connections, system.headers);
  return httpConnector(system.url as string, connections, system.headers, sc.client);
}

const fmt = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-');

/** A cell that could not run (unavailable: not built yet, a program missing) or failed, with the reason. */
function recordFailure(cell: Cell, label: string, err: unknown): void {
  const message = (err as Error).message.replace(/\s+/g, ' ').slice(0, 300);
  if (err instanceof Unavailable) cell.unavailable = message;
  else cell.failures.push(message);
  process.stderr.write(`${label} ${err instanceof Unavailable ? 'unavailable' : 'FAILED'}: ${message}\n`);
}

async function runCell(sc: Scenario, name: SystemName, cell: Cell, label: string): Promise<void> {
  let system: RunningSystem | undefined;
  let connector: Connector | undefined;
  try {
    system = await startSystem(name, { sharedChildren: settings.sharedChildren, nodeFlags: name.startsWith('switchboard') ? nodeFlags : [], beforeCli: before?.cli });
    connector = connectorFor(system, sc);
    if (sc.wire === 'ws') {
      // A gateway without the WebSocket route refuses the upgrade: unavailable, not failed.
      try {
        await (await connector.open()).close();
      } catch (err) {
        throw new Unavailable(`WebSocket: ${(err as Error).message}`);
      }
    }
    const roots = [...system.roots, ...connector.pids];
    if (sc.kind === 'load') {
      const r = await runLoad(connector, {
        sessions: sc.sessions,
        inFlight: sc.inFlight,
        bytes: sc.bytes,
        warmupMs: settings.warmupMs,
        durationMs: settings.durationMs,
        roots: system.name === 'direct' ? connector.pids : roots,
        gatewayPid: system.gatewayPid,
      });
      cell.loads.push(r);
      process.stderr.write(`${label} ${fmt(r.callsPerSecond).padStart(7)}/s p50 ${fmt(r.p50, 3)} p99 ${fmt(r.p99, 3)} ms, server CPU ${fmt(r.serverCpu)} (gateway ${fmt(r.gatewayCpu)}) ms/1k, errors ${r.errors}\n`);
    } else if (sc.kind === 'open') {
      // The same settle for every system: a configured spare is warm by then.
      const r = await runOpen(connector, { sessions: sc.sessions, paceMs: 250, settleMs: 1_500 });
      cell.opens.push(r);
      process.stderr.write(`${label} ${r.opened} sessions opened, p50 ${fmt(r.p50, 2)} p90 ${fmt(r.p90, 2)} max ${fmt(r.max, 2)} ms, errors ${r.errors}\n`);
    } else {
      const memoryPid = system.gatewayPid;
      if (memoryPid === undefined) throw new Error('a ramp needs a server process');
      const r = await runRamp(connector, { sessions: sc.sessions, parallel: 16, roots, memoryPid });
      cell.ramps.push(r);
      process.stderr.write(`${label} ${r.opened} sessions at ${fmt(r.setupPerSecond)}/s, ${fmt(r.rssPerSessionKiB, 1)} KiB each, errors ${r.errors}\n`);
    }
  } catch (err) {
    recordFailure(cell, label, err);
  } finally {
    await connector?.close().catch(() => undefined);
    await system?.stop();
  }
}

/** A cluster scenario on the build the system names: replicas of its src/cli.ts, relayed or behind HAProxy. */
async function runPairCell(sc: Scenario, name: SystemName, cell: Cell, label: string, round: number): Promise<void> {
  const cli = name === 'switchboard-before' ? before?.cli : name === 'switchboard' ? CLI : undefined;
  const floor = sc.kind === 'relay' && name === 'floor-relay';
  try {
    if (cli === undefined && !floor) throw new Error(`${sc.name} runs the replicas of switchboard or switchboard-before, not ${name}`);
    const options = { cli: cli ?? '', sessions: sc.sessions, inFlight: sc.inFlight, warmupMs: settings.warmupMs, durationMs: settings.durationMs, referenceFirst: round % 2 === 1 };
    // floor-relay: the relay's floor, a bare proxy in front of floor-relay.mjs against floor-relay.mjs (no replicas).
    const pair = await (floor ? measureRelayFloor(options) : sc.kind === 'relay' ? measureRelay(options) : measureReplicas(options));
    cell.pairs.push(pair);
    const [s, r] = sc.kind === 'relay' ? ['relayed', 'owner'] : ['3 replicas', '1 replica'];
    const side = (what: string, x: typeof pair.subject) => `${what} ${fmt(x.callsPerSecond).padStart(6)}/s p50 ${fmt(x.p50, 3)} ms CPU ${fmt(x.serverCpu)} ms/1k`;
    process.stderr.write(`${label} ${side(s, pair.subject)}; ${side(r, pair.reference)}; errors ${pair.subject.errors + pair.reference.errors}\n`);
  } catch (err) {
    recordFailure(cell, label, err);
  }
}

async function main(): Promise<void> {
  if (Number(process.versions.node.split('.')[0]) < 24) process.stderr.write(`bench: Node ${process.version}; the figures are meant for Node 24 (npm run bench)\n`);
  if (argv['cpu-prof'] !== undefined) mkdirSync(argv['cpu-prof'], { recursive: true });
  const started = performance.now();
  const startedAt = Date.now();
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const machineLines = machine(before?.label);
  const results: Results = new Map();
  for (let round = 0; round < settings.rounds; round++) {
    for (const sc of scenarioList) {
      // Rotate the order every round so that no system always runs first (or on a warmer machine).
      for (const name of roundOrder(sc.systems, round)) {
        const key = cellKey(sc.name, name);
        const cell = results.get(key) ?? emptyCell();
        results.set(key, cell);
        if (cell.unavailable !== undefined) continue;
        const label = `round ${round + 1}/${settings.rounds} ${sc.name.padEnd(8)} ${name.padEnd(18)}`;
        if (sc.kind === 'relay' || sc.kind === 'replicas') await runPairCell(sc, name, cell, label, round);
        else await runCell(sc, name, cell, label);
      }
    }
  }
  const elapsed = (performance.now() - started) / 1000;
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  const write = !argv['no-write'];
  const section = renderReport(results, scenarioList, {
    date,
    elapsedSeconds: elapsed,
    command,
    machine: [...machineLines, `- Load average at the end: ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}`],
    settings: `${settings.rounds} round(s); per system and scenario a fresh start, ${settings.warmupMs} ms warm-up, ${settings.durationMs} ms measured; ramp to ${settings.rampSessions} sessions; shared mode with ${settings.sharedChildren} children`,
    rounds: settings.rounds,
    chart: write ? 'benchmarks.svg' : undefined,
  });
  process.stdout.write(`\n${section}\n`);
  if (argv['cpu-prof'] !== undefined) process.stdout.write(`\n${summariseProfiles(argv['cpu-prof'], startedAt, ROOT)}\n`);
  if (write) {
    writeFileSync(SVG, chart(results, scenarioList, settings.rounds));
    writeDoc(section);
    process.stdout.write(`\n(written to ${DOC} and ${SVG})\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
  killAll();
});
