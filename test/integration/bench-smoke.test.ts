/**
 * Smoke test of the benchmark harness (bench/): its clients and load generator drive the real
 * gateway, the direct pipe and the plain HTTP echo server for a few hundred calls, and every answer
 * is checked; the cluster scenarios drive real replicas, a real Redis and Debian's HAProxy; a
 * before/after run's temporary worktree is made and removed. Correctness only: no timing is
 * asserted. Uses root dependencies only (no peers). The floor systems (floor-relay, its relay pair):
 * bench-floor.test.ts.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareBefore } from '../../bench/lib/before.ts';
import { answerFromBody, checkEcho, httpConnector, stdioConnector, wsConnector } from '../../bench/lib/clients.ts';
import { measureRelay, measureReplicas } from '../../bench/lib/cluster-scenarios.ts';
import { runLoad } from '../../bench/lib/load.ts';
import { runRamp } from '../../bench/lib/ramp.ts';
import { Unavailable } from '../../bench/lib/spawn.ts';
import { CLI, killAll, ROOT, startSystem } from '../../bench/lib/systems.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { fileURLToPath } from 'node:url';

const ECHO_SERVER = fileURLToPath(new URL('../../bench/echo-server.mjs', import.meta.url));
const ECHO_HTTP = fileURLToPath(new URL('../../bench/echo-http.mjs', import.meta.url));

let gw: TestGateway;
let echoHttp: ChildProcess;
let echoHttpUrl: string;
let echoWsUrl: string;

beforeAll(async () => {
  // The ramp keeps 30 idle sessions open: above the child caps, which would end the idle ones.
  gw = await startTestGateway({ targets: { echo: { command: process.execPath, args: [ECHO_SERVER] } }, session: { maxChildren: 100, maxChildrenPerTarget: 100 } });
  echoHttp = spawn(process.execPath, [ECHO_HTTP], { stdio: ['pipe', 'pipe', 'inherit'] });
  ({ url: echoHttpUrl, ws: echoWsUrl } = await new Promise<{ url: string; ws: string }>((resolve, reject) => {
    echoHttp.once('exit', (code) => reject(new Error(`echo-http exited (${code})`)));
    echoHttp.stdout?.setEncoding('utf8');
    echoHttp.stdout?.once('data', (line: string) => resolve(JSON.parse(line) as { url: string; ws: string }));
  }));
});
afterAll(async () => {
  echoHttp?.stdin?.end();
  await gw?.close();
});

const smoke = { warmupMs: 50, durationMs: 20_000, maxCalls: 300, roots: [], gatewayPid: undefined };

describe('bench harness', () => {
  it('runs 300 checked calls through the gateway, 4 sessions x 4 in flight, small and padded results', async () => {
    for (const bytes of [0, 64 * 1024]) {
      const connector = httpConnector(gw.mcpUrl('echo').href, 16);
      try {
        const result = await runLoad(connector, { ...smoke, sessions: 4, inFlight: 4, bytes });
        expect(result.errors, result.firstError).toBe(0);
        expect(result.calls).toBeGreaterThanOrEqual(300);
        expect(result.p50).toBeGreaterThan(0);
      } finally {
        await connector.close();
      }
    }
  });

  it('runs the direct pipe and the plain HTTP echo server with the same checks', async () => {
    const direct = stdioConnector(process.execPath, [ECHO_SERVER]);
    const plain = httpConnector(echoHttpUrl, 8);
    try {
      for (const connector of [direct, plain]) {
        const result = await runLoad(connector, { ...smoke, sessions: 2, inFlight: 4, bytes: 0 });
        expect(result.errors, result.firstError).toBe(0);
        expect(result.calls).toBeGreaterThanOrEqual(300);
      }
      expect(direct.pids.length).toBe(2);
    } finally {
      await direct.close();
      await plain.close();
    }
  });

  it('runs the WebSocket client (subprotocol mcp) against the echo server, and reports a refused upgrade', async () => {
    const ws = wsConnector(echoWsUrl);
    const result = await runLoad(ws, { ...smoke, sessions: 2, inFlight: 4, bytes: 100_000 });
    expect(result.errors, result.firstError).toBe(0);
    expect(result.calls).toBeGreaterThanOrEqual(300);
    // A path without a WebSocket endpoint refuses the upgrade: the harness calls that unavailable.
    await expect(wsConnector(echoWsUrl.replace(/\/ws$/, '/nope')).open()).rejects.toThrow(/could not connect/);
  });

  it('ramps 30 sessions on the gateway and keeps them all open and answering', async () => {
    const connector = httpConnector(gw.mcpUrl('echo').href, 16);
    try {
      const result = await runRamp(connector, { sessions: 30, parallel: 4, roots: [process.pid], memoryPid: process.pid });
      expect(result.errors, result.firstError).toBe(0);
      expect(result.opened).toBe(30);
      expect(result.p50).toBeGreaterThan(0);
    } finally {
      await connector.close();
    }
  });

  it('rejects a wrong answer: another id, another text, a wrong padding', () => {
    const ok = { id: 7, result: { content: [{ text: 'echo-7' }] } };
    expect(() => checkEcho(ok, 7, 'echo-7', 0)).not.toThrow();
    expect(() => checkEcho(ok, 8, 'echo-7', 0)).toThrow(/answer id 7, expected 8/);
    expect(() => checkEcho(ok, 7, 'echo-8', 0)).toThrow(/echoed/);
    expect(() => checkEcho(ok, 7, 'echo-7', 10)).toThrow(/padded to 10/);
    expect(() => checkEcho({ id: 7, error: { code: -32603 } }, 7, 'echo-7', 0)).toThrow(/no text/);
  });

  it('finds the answer in an SSE body after a priming event and a notification', () => {
    const body = 'id: 1\ndata:\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\ndata: {"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"x"}]}}\n\n';
    expect(answerFromBody('text/event-stream', body, 3).id).toBe(3);
    expect(() => answerFromBody('text/event-stream', body, 4)).toThrow(/without an answer/);
  });

  it('runs the relay scenario: 100 checked calls relayed by r1 to the owner r0, 100 sent to r0 (a real Redis)', async () => {
    const { subject, reference } = await measureRelay({ cli: CLI, sessions: 1, inFlight: 1, warmupMs: 50, durationMs: 60_000, maxCalls: 100, referenceFirst: true });
    for (const side of [subject, reference]) {
      expect(side.errors, side.firstError).toBe(0);
      expect(side.calls).toBeGreaterThanOrEqual(100);
    }
  }, 120_000);

  it('runs the replicas scenario: HAProxy with session affinity over 3 replicas, then over 1, every answer checked', async () => {
    const { subject, reference } = await measureReplicas({ cli: CLI, sessions: 2, inFlight: 2, warmupMs: 50, durationMs: 60_000, maxCalls: 100, referenceFirst: false });
    for (const side of [subject, reference]) {
      expect(side.errors, side.firstError).toBe(0);
      expect(side.calls).toBeGreaterThanOrEqual(100);
    }
  }, 120_000);

  it('calls a build that refuses the cluster config (exit code 2) unavailable, and stops its Redis', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
    try {
      const refusing = join(dir, 'cli.mjs');
      writeFileSync(refusing, 'process.exit(2);\n');
      const error = await measureRelay({ cli: refusing, sessions: 1, inFlight: 1, warmupMs: 50, durationMs: 1_000, maxCalls: 10, referenceFirst: false }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Unavailable);
      expect((error as Error).message).toMatch(/refused the cluster config/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('starts switchboard-before on the build it is given, and refuses to start it without one', async () => {
    await expect(startSystem('switchboard-before', { sharedChildren: 2, nodeFlags: [] })).rejects.toThrow(/needs --before or --before-ref/);
    const system = await startSystem('switchboard-before', { sharedChildren: 2, nodeFlags: [], beforeCli: CLI });
    const connector = httpConnector(system.url as string, 4);
    try {
      const result = await runLoad(connector, { ...smoke, sessions: 2, inFlight: 2, bytes: 0, maxCalls: 100 });
      expect(result.errors, result.firstError).toBe(0);
    } finally {
      await connector.close();
      await system.stop();
      killAll();
    }
  }, 60_000);

  it('checks --before-ref out into a temporary worktree with node_modules linked, and removes it again', () => {
    const worktrees = () => execFileSync('git', ['worktree', 'list', '--porcelain'], { cwd: ROOT, encoding: 'utf8' });
    const before = prepareBefore({ ref: 'HEAD' }, ROOT);
    if (before === undefined) throw new Error('no build before');
    const checkout = dirname(dirname(before.cli));
    try {
      expect(existsSync(before.cli)).toBe(true);
      expect(realpathSync(join(checkout, 'node_modules'))).toBe(realpathSync(join(ROOT, 'node_modules')));
      expect(worktrees()).toContain(checkout);
      expect(before.label).toMatch(/at [0-9a-f]{7}/);
    } finally {
      before.cleanup();
    }
    expect(existsSync(checkout)).toBe(false);
    expect(worktrees()).not.toContain(checkout);
    before.cleanup(); // idempotent
    expect(() => prepareBefore({ ref: 'no-such-revision-7f3a' }, ROOT)).toThrow(/not a revision/);
    expect(() => prepareBefore({ ref: '--orphan' }, ROOT)).toThrow(/not a revision/);
    expect(() => prepareBefore({ path: join(ROOT, 'no/such/cli.ts') }, ROOT)).toThrow(/no such file/);
    expect(() => prepareBefore({ path: CLI, ref: 'HEAD' }, ROOT)).toThrow(/not both/);
    expect(prepareBefore({ path: CLI }, ROOT)?.cli).toBe(CLI);
  }, 60_000);
});
