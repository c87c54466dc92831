/**
 * Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against a Streamable
 * HTTP URL, one child process per scenario, and reads each scenario's checks back from the
 * `checks.json` the CLI writes with `-o`. Also starts the conformance fixture server in HTTP mode.
 *
 * One process per scenario (rather than the CLI's whole-suite mode) so that a scenario that hangs,
 * e.g. a server->client request the peer never answers (the SDK client waits 60 s), costs only its
 * own timeout and cannot hide the results of the others.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The CLI entry point, run with our pinned Node (process.execPath). */
export const CONFORMANCE_CLI = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url),
);
/** The fixture server: `stdio` or `http <port>`. */
export const CONFORMANCE_FIXTURE = fileURLToPath(new URL('../fixtures/conformance-server.mjs', import.meta.url));

/** One check as the conformance CLI writes it to checks.json. */
export interface ConformanceCheck {
  id: string;
  name: string;
  description?: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED' | string;
  errorMessage?: string;
  details?: unknown;
}

/**
 * `pass`: at least one SUCCESS, no FAILURE, no WARNING. `warn`: no FAILURE, but warnings or nothing
 * scored (e.g. SEP-1699 SHOULDs). `fail`: any FAILURE, or no result at all (timeout, crash).
 * Ordered: a gateway must reach at least the outcome the server reaches on its own.
 */
export type ScenarioOutcome = 'pass' | 'warn' | 'fail';

export interface ScenarioResult {
  scenario: string;
  outcome: ScenarioOutcome;
  passed: number;
  failed: number;
  warnings: number;
  /** FAILURE and WARNING checks (and synthetic harness failures), for reports. */
  problems: ConformanceCheck[];
  checks: ConformanceCheck[];
  durationMs: number;
}

/** The 2026-07-28 suite's CLI (@modelcontextprotocol/conformance 0.2.0-alpha.12, installed as conformance-2026). */
export const CONFORMANCE_2026_CLI = fileURLToPath(new URL('../../node_modules/conformance-2026/dist/index.js', import.meta.url));

/** Which CLI runs a scenario, and at which revision (2025: the pinned 0.1.16 default). */
export interface SuiteEdition {
  readonly cli: string;
  readonly args: readonly string[];
}
export const SUITE_2025: SuiteEdition = { cli: CONFORMANCE_CLI, args: [] };
export const SUITE_2026: SuiteEdition = { cli: CONFORMANCE_2026_CLI, args: ['--spec-version', '2026-07-28'] };

/** The server scenarios a revision requires (the suite's frozen requirements file, `server:` list). */
export async function requiredServerScenarios(revision: string): Promise<string[]> {
  const text = await readFile(fileURLToPath(new URL(`../../node_modules/conformance-2026/requirements/${revision}.yaml`, import.meta.url)), 'utf8');
  const block = /^server:\n((?:\s+- .+\n)+)/m.exec(text);
  if (block === null || block[1] === undefined) throw new Error(`no server list in requirements/${revision}.yaml`);
  return [...block[1].matchAll(/^\s+- (\S+)/gm)].map((m) => m[1] as string);
}

export interface RunOptions {
  /** Which suite runs the scenarios (default: the 2025 one). */
  edition?: SuiteEdition;
  /** Kill a scenario's process after this long and score it as failed (ms). */
  scenarioTimeoutMs?: number;
  /** Scenarios run at the same time. */
  concurrency?: number;
  /** Scenarios not started by this time (Date.now()) are scored as failed without running. */
  deadline?: number;
}

/** Server scenarios the CLI lists for a spec version (cumulative: 2025-11-25 includes 2025-06-18's). */
export async function listServerScenarios(specVersion = '2025-11-25'): Promise<string[]> {
  const { code, stdout, stderr } = await runNode([CONFORMANCE_CLI, 'list', '--server', '--spec-version', specVersion], 20_000);
  if (code !== 0) throw new Error(`conformance list exited with ${String(code)}: ${stderr}`);
  const names = [...stdout.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]).filter((n): n is string => n !== undefined);
  if (names.length === 0) throw new Error(`conformance list printed no scenarios:\n${stdout}`);
  return names;
}

/** Runs every scenario against `url`; results keyed by scenario name, in list order. */
export async function runConformanceSuite(
  url: string | URL,
  scenarios: readonly string[],
  options: RunOptions = {},
): Promise<Map<string, ScenarioResult>> {
  const concurrency = options.concurrency ?? 6;
  const results = new Map<string, ScenarioResult>();
  const queue = [...scenarios];
  const worker = async (): Promise<void> => {
    for (let scenario = queue.shift(); scenario !== undefined; scenario = queue.shift()) {
      if (options.deadline !== undefined && Date.now() > options.deadline) {
        results.set(scenario, harnessFailure(scenario, 'harness-deadline', 'not run: the suite deadline had passed', 0));
        continue;
      }
      results.set(scenario, await runConformanceScenario(url, scenario, options.scenarioTimeoutMs, options.edition));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, scenarios.length) }, worker));
  return new Map(scenarios.map((s) => [s, results.get(s) ?? harnessFailure(s, 'harness-missing', 'no result', 0)]));
}

/** Runs one scenario in its own CLI process and scores its checks.json. */
export async function runConformanceScenario(url: string | URL, scenario: string, timeoutMs = 15_000, edition: SuiteEdition = SUITE_2025): Promise<ScenarioResult> {
  const started = Date.now();
  const outDir = await mkdtemp(join(tmpdir(), 'switchboard-conformance-'));
  try {
    const run = await runNode([edition.cli, 'server', '--url', String(url), '--scenario', scenario, ...edition.args, '-o', outDir], timeoutMs);
    const elapsed = Date.now() - started;
    if (run.timedOut) {
      return harnessFailure(scenario, 'harness-timeout', `scenario did not finish within ${timeoutMs} ms`, elapsed);
    }
    const checks = await readChecks(outDir);
    if (checks === undefined) {
      const tail = (run.stderr || run.stdout).slice(-2_000);
      return harnessFailure(scenario, 'harness-no-result', `CLI exited ${String(run.code)} without checks.json: ${tail}`, elapsed);
    }
    return score(scenario, checks, elapsed);
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

function score(scenario: string, checks: ConformanceCheck[], durationMs: number): ScenarioResult {
  const passed = checks.filter((c) => c.status === 'SUCCESS').length;
  const failed = checks.filter((c) => c.status === 'FAILURE').length;
  const warnings = checks.filter((c) => c.status === 'WARNING').length;
  const outcome: ScenarioOutcome = failed > 0 ? 'fail' : warnings > 0 || passed === 0 ? 'warn' : 'pass';
  const problems = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  return { scenario, outcome, passed, failed, warnings, problems, checks, durationMs };
}

function harnessFailure(scenario: string, id: string, errorMessage: string, durationMs: number): ScenarioResult {
  const check: ConformanceCheck = { id, name: id, status: 'FAILURE', errorMessage };
  return score(scenario, [check], durationMs);
}

/** The CLI writes `<outDir>/server-<scenario>-<timestamp>/checks.json`; we gave it an empty dir. */
async function readChecks(outDir: string): Promise<ConformanceCheck[] | undefined> {
  for (const entry of await readdir(outDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    try {
      const parsed: unknown = JSON.parse(await readFile(join(outDir, entry.name, 'checks.json'), 'utf8'));
      if (Array.isArray(parsed)) return parsed.filter(isCheck);
    } catch {
      // No or unreadable checks.json in this directory: keep looking, report "no result" otherwise.
    }
  }
  return undefined;
}

function isCheck(value: unknown): value is ConformanceCheck {
  return typeof value === 'object' && value !== null && typeof (value as { status?: unknown }).status === 'string';
}

interface NodeRun {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Scenario processes running now; `stopScenarios` ends them. */
const running = new Set<ChildProcess>();
let stopped = false;

/**
 * For a file's `afterAll`: kills every scenario process still running and starts no more. A test
 * that timed out leaves its suite run going in the background; this ends it, pass or fail.
 */
export function stopScenarios(): void {
  stopped = true;
  for (const child of running) child.kill('SIGKILL');
}

/** Runs `process.execPath args…`, killing it after `timeoutMs`. Keeps the last 64 KiB of each stream. */
function runNode(args: string[], timeoutMs: number): Promise<NodeRun> {
  return new Promise((resolve, reject) => {
    if (stopped) {
      resolve({ code: null, stdout: '', stderr: 'not run: the test file is ending', timedOut: false });
      return;
    }
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    running.add(child);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const keep = (s: string): string => (s.length > 65_536 ? s.slice(-65_536) : s);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout = keep(stdout + d)));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = keep(stderr + d)));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      running.delete(child);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

export interface HttpFixture {
  /** The fixture's Streamable HTTP endpoint, http://127.0.0.1:<port>/mcp. */
  url: URL;
  /** Everything the fixture wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/** Starts the fixture in HTTP mode on a free port and waits for its `listening <port>` line. */
export async function startHttpFixture(timeoutMs = 10_000): Promise<HttpFixture> {
  const child = spawn(process.execPath, [CONFORMANCE_FIXTURE, 'http', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const port = await new Promise<number>((resolve, reject) => {
    let stdout = '';
    const fail = (why: string): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`conformance fixture did not start: ${why}\nstderr: ${stderr}`));
    };
    const timer = setTimeout(() => fail(`no "listening" line within ${timeoutMs} ms`), timeoutMs);
    child.once('error', (e) => fail(e.message));
    child.once('exit', (code) => fail(`exited with ${String(code)}`));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const match = /^listening (\d+)$/m.exec(stdout);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve(Number(match[1]));
      }
    });
  });
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    stderr: () => stderr,
    close: () => stopChild(child),
  };
}

/** SIGTERM, then SIGKILL after 2 s; resolves when the process has exited. */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

const RANK: Record<ScenarioOutcome, number> = { fail: 0, warn: 1, pass: 2 };

export interface Mismatch {
  scenario: string;
  direct: ScenarioOutcome;
  gateway: ScenarioOutcome;
  /** The gateway run's FAILURE/WARNING checks for this scenario. */
  problems: ConformanceCheck[];
}

/** Scenarios whose outcome through the gateway is worse than against the server directly. */
export function compareRuns(direct: Map<string, ScenarioResult>, gateway: Map<string, ScenarioResult>): Mismatch[] {
  const mismatches: Mismatch[] = [];
  for (const [scenario, d] of direct) {
    const g = gateway.get(scenario);
    const gOutcome = g?.outcome ?? 'fail';
    if (RANK[gOutcome] < RANK[d.outcome]) {
      mismatches.push({ scenario, direct: d.outcome, gateway: gOutcome, problems: g?.problems ?? [] });
    }
  }
  return mismatches;
}

/** Human-readable mismatch list, one scenario per paragraph with its failing checks. */
export function formatMismatches(mismatches: readonly Mismatch[]): string {
  return mismatches
    .map((m) => {
      const checks = m.problems.map((p) => `    - [${p.status}] ${p.name} (${p.id}): ${p.errorMessage ?? p.description ?? ''}`);
      return [`  ${m.scenario}: direct ${m.direct}, gateway ${m.gateway}`, ...checks].join('\n');
    })
    .join('\n');
}

/** Markdown table: scenario | direct | gateway (checks passed/failed/warnings). */
export function formatResultsTable(direct: Map<string, ScenarioResult>, gateway?: Map<string, ScenarioResult>): string {
  const cell = (r: ScenarioResult | undefined): string =>
    r === undefined ? 'not run' : `${r.outcome} (${r.passed}/${r.failed}/${r.warnings})`;
  const rows = [...direct.keys()].map((s) => `| ${s} | ${cell(direct.get(s))} | ${gateway ? cell(gateway.get(s)) : 'not run'} |`);
  return ['| scenario | direct | through gateway |', '|---|---|---|', ...rows].join('\n');
}

/** Counts of outcomes in a run. */
export function tally(results: Map<string, ScenarioResult>): Record<ScenarioOutcome, number> {
  const counts: Record<ScenarioOutcome, number> = { pass: 0, warn: 0, fail: 0 };
  for (const r of results.values()) counts[r.outcome] += 1;
  return counts;
}
