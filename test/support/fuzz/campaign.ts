/**
 * A fuzzing campaign: the gateway started as its own process, a healthy session on each of
 * Streamable HTTP and WebSocket opened first and exercised all along, then `cases` seeded cases
 * spread over the targets (POST `/mcp`, WebSocket, legacy SSE, stdio framing from an upstream),
 * each target a lane of its own so that slow cases do not hold up the rest. Afterwards: the
 * process still runs, the healthy sessions still answer, RSS stayed under the bound. Case `i` of
 * seed `s` is drawn from its own generator, so `--seed s --case i` replays it alone.
 */
import { rpc, textOf, type RawSession } from '../recorder.ts';
import { initializeWs, openWs, wsUrl, type WsPeer } from '../ws-client.ts';
import { within, type CaseResult, type Target } from './case.ts';
import { startFuzzGateway, type FuzzGateway } from './gateway-process.ts';
import { createHttpTarget } from './http-target.ts';
import { createLegacyTarget } from './legacy-target.ts';
import { createPostTarget } from './post-target.ts';
import { caseSeed, createRng } from './prng.ts';
import { createStdioTarget } from './stdio-target.ts';
import { createWsTarget } from './ws-target.ts';

export interface CampaignOptions {
  seed: number;
  cases: number;
  /** Only this case (to reproduce one). */
  only?: number;
  maxBodyBytes?: number;
  upstreamTimeoutMs?: number;
  upstreamMaxMessageBytes?: number;
  /** Bound on the gateway's RSS at any sample, MiB. */
  maxRssMiB?: number;
  /** Progress lines (long campaigns). */
  log?: (line: string) => void;
}

export interface Failure extends CaseResult {
  seed: number;
  index: number;
}

export interface CampaignSummary {
  seed: number;
  cases: number;
  ms: number;
  byTarget: Record<string, number>;
  byMutation: Record<string, number>;
  outcomes: Record<string, number>;
  failures: Failure[];
  /** Failures beyond those kept in `failures`. */
  moreFailures: number;
  probes: { ok: number; failed: string[] };
  rssMiB: { start: number; max: number; end: number; bound: number };
  gateway: { alive: boolean; exit?: string; logProblems: string[] };
  problems: string[];
}

const WEIGHTS: Array<[string, number]> = [['post', 0.4], ['http', 0.07], ['ws', 0.18], ['legacy', 0.15], ['stdio', 0.2]];
const bump = (map: Record<string, number>, key: string) => (map[key] = (map[key] ?? 0) + 1);

function laneOf(seed: number, index: number): string {
  const roll = createRng(caseSeed(seed, index) ^ 0x5bd1e995).next();
  let sum = 0;
  for (const [name, weight] of WEIGHTS) if (roll < (sum += weight)) return name === 'stdio' ? `stdio-${index % 2}` : name;
  return 'post';
}

/** The healthy sessions: probed all through the campaign, and once more at its end. */
async function createProbes(gateway: FuzzGateway) {
  const http: RawSession = await rpc.initialize(new URL('/servers/rec/mcp', gateway.base));
  const ws: WsPeer = await openWs(wsUrl(gateway.base.href, '/servers/rec/ws'));
  await initializeWs(ws);
  const result = { ok: 0, failed: [] as string[] };
  let n = 0;
  const probeOnce = async () => {
    const id = `healthy-${++n}`;
    const text = `still here ${n}`;
    try {
      if (n % 2 === 0) {
        const answer = await within(10_000, 'healthy HTTP session', http.request({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text } } }));
        if (textOf(answer.json.result) !== text) throw new Error(`HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
      } else {
        ws.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text } } });
        const answer = (await within(10_000, 'healthy WebSocket session', ws.until(id))).at(-1);
        if (textOf(answer?.result) !== text) throw new Error(JSON.stringify(answer).slice(0, 200));
      }
      result.ok++;
    } catch (err) {
      if (result.failed.length < 20) result.failed.push(`${id}: ${String(err)}`);
    }
  };
  let running = true;
  const loop = (async () => {
    while (running) {
      await probeOnce();
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    result,
    async finish() {
      running = false;
      await loop;
      await probeOnce();
      await probeOnce();
      ws.socket.close();
      await http.delete();
    },
  };
}

export async function runCampaign(options: CampaignOptions): Promise<CampaignSummary> {
  const limits = { maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024 };
  const upstreamTimeoutMs = options.upstreamTimeoutMs ?? 500;
  const upstreamMaxMessageBytes = options.upstreamMaxMessageBytes ?? 256 * 1024;
  const bound = options.maxRssMiB ?? 1024;
  const started = Date.now();
  const gateway = await startFuzzGateway({ maxBodyBytes: limits.maxBodyBytes, upstreamTimeoutMs, upstreamMaxMessageBytes });
  const summary: CampaignSummary = {
    seed: options.seed,
    cases: 0,
    ms: 0,
    byTarget: {},
    byMutation: {},
    outcomes: {},
    failures: [],
    moreFailures: 0,
    probes: { ok: 0, failed: [] },
    rssMiB: { start: gateway.rssMiB(), max: 0, end: 0, bound },
    gateway: { alive: true, logProblems: gateway.logProblems },
    problems: [],
  };
  const targets = new Map<string, Target>([
    ['post', createPostTarget(gateway.base)],
    ['http', createHttpTarget(gateway.base)],
    ['ws', createWsTarget(gateway.base)],
    ['legacy', createLegacyTarget(gateway.base)],
    ['stdio-0', createStdioTarget(gateway.base, upstreamMaxMessageBytes, upstreamTimeoutMs)],
    ['stdio-1', createStdioTarget(gateway.base, upstreamMaxMessageBytes, upstreamTimeoutMs)],
  ]);
  const sampleRss = () => (summary.rssMiB.max = Math.max(summary.rssMiB.max, gateway.rssMiB()));
  try {
    const probes = await createProbes(gateway);
    const lanes = new Map<string, number[]>();
    const indices = options.only !== undefined ? [options.only] : Array.from({ length: options.cases }, (_, i) => i);
    for (const i of indices) lanes.set(laneOf(options.seed, i), [...(lanes.get(laneOf(options.seed, i)) ?? []), i]);
    const record = (index: number, result: CaseResult) => {
      summary.cases++;
      bump(summary.byTarget, result.target);
      bump(summary.byMutation, result.mutation.replace(/\(.*$|:.*$|=.*$/, ''));
      for (const outcome of result.outcomes) bump(summary.outcomes, outcome);
      if (result.problems.length > 0) {
        if (summary.failures.length < 50) summary.failures.push({ seed: options.seed, index, ...result });
        else summary.moreFailures++;
      }
      if (summary.cases % 25 === 0) sampleRss();
      if (summary.cases % 500 === 0) options.log?.(`${summary.cases} cases, ${summary.failures.length + summary.moreFailures} failing, rss ${gateway.rssMiB().toFixed(0)} MiB`);
    };
    await Promise.all(
      [...lanes].map(async ([lane, cases]) => {
        const target = targets.get(lane) as Target;
        for (const index of cases) {
          if (gateway.exit()) return;
          const rng = createRng(caseSeed(options.seed, index));
          try {
            record(index, await target.run(rng, limits));
          } catch (err) {
            record(index, { target: target.name, mutation: '(setup)', excerpt: '', outcomes: [], problems: [`case threw: ${err instanceof Error ? (err.stack ?? err.message).split('\n').slice(0, 6).join(' | ') : String(err)}`] });
          }
        }
      }),
    );
    if (!gateway.exit()) await probes.finish();
    summary.probes = probes.result;
  } finally {
    for (const target of targets.values()) await target.close().catch(() => undefined);
    sampleRss();
    summary.rssMiB.end = gateway.rssMiB();
    const exit = gateway.exit();
    summary.gateway.alive = exit === undefined;
    if (exit) summary.gateway.exit = `code ${exit.code} signal ${exit.signal}`;
    await gateway.stop();
    summary.ms = Date.now() - started;
  }
  if (!summary.gateway.alive) summary.problems.push(`the gateway process exited during the campaign (${summary.gateway.exit})`);
  if (summary.gateway.logProblems.length > 0) summary.problems.push(`${summary.gateway.logProblems.length} unplanned failures in the gateway log`);
  if (summary.probes.failed.length > 0) summary.problems.push(`${summary.probes.failed.length} healthy-session probes failed`);
  if (summary.rssMiB.max > bound) summary.problems.push(`gateway RSS reached ${summary.rssMiB.max.toFixed(0)} MiB, over the ${bound} MiB bound`);
  const failing = summary.failures.length + summary.moreFailures;
  if (failing > 0) summary.problems.push(`${failing} cases broke an invariant`);
  return summary;
}

/** A failure as text, with the command that replays it. */
export function describeFailure(f: Failure): string {
  return [
    `case ${f.index} (seed ${f.seed}) ${f.target} ${f.mutation}`,
    `  sent: ${f.excerpt}`,
    ...f.problems.slice(0, 5).map((p) => `  - ${p}`),
    `  replay: npm run fuzz -- --seed ${f.seed} --case ${f.index}`,
  ].join('\n');
}
