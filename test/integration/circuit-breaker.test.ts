/**
 * The per-target circuit breaker with real children: a command that does not exist, a server that
 * exits at once until a file exists (test/fixtures/misbehaving-server.mjs, its spawns counted in a
 * file), a server that never answers. While the circuit is open new sessions and aggregate calls
 * fail fast with GW_CIRCUIT_OPEN naming the cause and nothing is spawned; after the cooldown one
 * probe runs; the fixed server closes it ("recovered"); a reload that changes the target resets it.
 * /readyz reflects each state. Timeouts, and why one session's never refuse another's: breaker-isolation.test.ts.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CircuitBreakerPolicy } from '../../src/config/types.ts';
import { buildConfig, startTestGateway, type TestGateway, type TestGatewayOptions } from '../support/gateway.ts';
import { fixture } from '../support/recorder.ts';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'breaker-test', version: '1' } } };

type Envelope = { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };

let dir: string;
const open: TestGateway[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sb-breaker-'));
});
afterEach(async () => {
  for (const gw of open.splice(0)) await gw.close();
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const breaker = (overrides: Partial<CircuitBreakerPolicy>): CircuitBreakerPolicy => ({
  startFailures: 2,
  timeouts: 0,
  timeoutCallers: 2,
  windowMs: 60_000,
  cooldownMs: 60_000,
  maxCooldownMs: 60_000,
  ...overrides,
});

async function start(options: TestGatewayOptions): Promise<TestGateway> {
  const gw = await startTestGateway(options);
  open.push(gw);
  return gw;
}

/** POSTs an initialize; the answer, its status and the session id (if one was made). */
async function initialize(gw: TestGateway, path: string) {
  const res = await fetch(new URL(path, gw.url), { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) });
  return { status: res.status, session: res.headers.get('mcp-session-id'), body: (await res.json()) as Envelope };
}

async function post(gw: TestGateway, path: string, session: string, body: unknown): Promise<Envelope> {
  const res = await fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, 'mcp-session-id': session }, body: JSON.stringify(body) });
  return (await res.json()) as Envelope;
}

async function readyz(gw: TestGateway) {
  const res = await fetch(new URL('/readyz', gw.url));
  return { status: res.status, body: (await res.json()) as { status: string; targets: Array<Record<string, unknown>> } };
}

const spawns = (log: string): number => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('circuit breaker', () => {
  it('opens after failed starts, fails fast without spawning, probes after the cooldown and closes once the server is fixed', async () => {
    const needed = join(dir, 'fixed');
    const log = join(dir, 'spawns');
    const logLines: string[] = [];
    const gw = await start({
      targets: {
        flaky: {
          command: process.execPath,
          args: [fixture('misbehaving-server.mjs'), 'exit-unless-file', `--file=${needed}`, `--spawn-log=${log}`],
          circuitBreaker: breaker({ cooldownMs: 1_500, maxCooldownMs: 1_500 }),
        },
      },
      logLines,
    });
    expect((await readyz(gw)).body.targets).toEqual([{ name: 'flaky', type: 'stdio', state: 'unknown' }]);

    for (let i = 0; i < 2; i++) {
      const failed = await initialize(gw, '/mcp');
      expect(failed.body.error?.data).toMatchObject({ code: 'GW_UPSTREAM_EXITED', target: 'flaky', exitCode: 1 });
    }
    expect(spawns(log)).toBe(2);

    // Open: every new session fails at once with the cause, and nothing is spawned.
    for (let i = 0; i < 10; i++) {
      const refused = await initialize(gw, '/mcp');
      expect(refused.session).toBeNull();
      expect(refused.body.error).toMatchObject({ code: -32603, data: { code: 'GW_CIRCUIT_OPEN', target: 'flaky', reason: 'GW_UPSTREAM_EXITED: exit code 1' } });
      expect(refused.body.error?.data?.retryAfterSec).toBeGreaterThanOrEqual(1);
    }
    expect(spawns(log)).toBe(2);
    const down = await readyz(gw);
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ status: 'down', targets: [{ name: 'flaky', state: 'open', cause: 'GW_UPSTREAM_EXITED: exit code 1' }] });

    // After the cooldown one probe runs (and fails: the file is still missing), then it is open again.
    await sleep(1_600);
    expect((await readyz(gw)).body.targets[0]).toMatchObject({ state: 'half-open' });
    expect((await initialize(gw, '/mcp')).body.error?.data).toMatchObject({ code: 'GW_UPSTREAM_EXITED' });
    expect(spawns(log)).toBe(3);
    expect((await initialize(gw, '/mcp')).body.error?.data).toMatchObject({ code: 'GW_CIRCUIT_OPEN' });
    expect(spawns(log)).toBe(3);

    // Fixed: the next probe starts it, the circuit closes, sessions work.
    writeFileSync(needed, '');
    await sleep(1_600);
    const ok = await initialize(gw, '/mcp');
    expect(ok.body.result).toMatchObject({ protocolVersion: '2025-11-25' });
    const call = await post(gw, '/mcp', ok.session as string, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'back' } } });
    expect(call.result).toMatchObject({ content: [{ text: 'back' }] });
    expect(logLines.some((line) => line.includes('circuit closed: the target recovered'))).toBe(true);
    expect(await readyz(gw)).toMatchObject({ status: 200, body: { status: 'ready', targets: [{ name: 'flaky', state: 'ready' }] } });
  });

  it('a command that does not exist: spawn failures open it; an aggregate keeps serving the other target; a reload that fixes it resets it', async () => {
    const options: TestGatewayOptions = {
      targets: {
        missing: { command: join(dir, 'no-such-command'), circuitBreaker: breaker({}) },
        fine: { command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'normal'] },
      },
    };
    const gw = await start(options);
    for (let i = 0; i < 2; i++) expect((await initialize(gw, '/servers/missing/mcp')).body.error?.data).toMatchObject({ code: 'GW_UPSTREAM_SPAWN_FAILED', reason: 'ENOENT' });
    const refused = await initialize(gw, '/servers/missing/mcp');
    expect(refused.body.error?.data).toMatchObject({ code: 'GW_CIRCUIT_OPEN', target: 'missing', reason: 'GW_UPSTREAM_SPAWN_FAILED: ENOENT' });
    // No command path in what the client sees.
    expect(JSON.stringify(refused.body)).not.toContain('no-such-command');

    // The aggregate at /mcp: its lists leave the open target out, naming why; the other target works.
    const agg = await initialize(gw, '/mcp');
    const session = agg.session as string;
    const broken = await post(gw, '/mcp', session, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'missing__echo', arguments: {} } });
    const tools = await post(gw, '/mcp', session, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(JSON.stringify(tools.result)).toContain('fine__echo');
    const works = await post(gw, '/mcp', session, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'fine__echo', arguments: { text: 'ok' } } });
    expect(works.result).toMatchObject({ content: [{ text: 'ok' }] });
    // Its tools were never listed (it never started): the list names it unavailable, with the cause.
    expect(broken.error?.data?.code).toBe('GW_UNKNOWN_TOOL');
    expect(tools.result?._meta).toEqual({ 'switchboard/unavailable': [{ target: 'missing', reason: expect.stringContaining('is failing (GW_UPSTREAM_SPAWN_FAILED: ENOENT)') }] });
    const degraded = await readyz(gw);
    expect(degraded.status).toBe(200);
    expect(degraded.body.status).toBe('degraded');
    expect(degraded.body.targets).toContainEqual(expect.objectContaining({ name: 'missing', state: 'open', cause: 'GW_UPSTREAM_SPAWN_FAILED: ENOENT' }));

    // The operator fixes the command: the reload gives the target a fresh (closed) breaker.
    gw.reload(buildConfig({ ...options, targets: { ...options.targets, missing: { command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'normal'] } } }));
    expect((await initialize(gw, '/servers/missing/mcp')).body.result).toMatchObject({ protocolVersion: '2025-11-25' });
  });

  it('shared mode: the pool is not asked to start a child while the circuit is open', async () => {
    const log = join(dir, 'shared-spawns');
    const gw = await start({
      targets: {
        pooled: {
          command: process.execPath,
          args: [fixture('misbehaving-server.mjs'), 'exit-unless-file', `--file=${join(dir, 'never')}`, `--spawn-log=${log}`],
          upstream: { mode: 'shared', children: 1 },
          circuitBreaker: breaker({}),
        },
      },
    });
    for (let i = 0; i < 2; i++) expect((await initialize(gw, '/mcp')).body.error?.data?.code).toBe('GW_UPSTREAM_EXITED');
    for (let i = 0; i < 5; i++) expect((await initialize(gw, '/mcp')).body.error?.data).toMatchObject({ code: 'GW_CIRCUIT_OPEN', target: 'pooled' });
    expect(spawns(log)).toBe(2);
  });

  it('a server that never answers initialize: handshake timeouts open it', async () => {
    const log = join(dir, 'hung-spawns');
    const gw = await start({
      targets: {
        mute: {
          command: process.execPath,
          args: [fixture('misbehaving-server.mjs'), 'hang-on-init', `--spawn-log=${log}`],
          timeouts: { requestMs: 30_000, resetOnProgress: true, maxTotalMs: 0, startupMs: 300 },
          circuitBreaker: breaker({}),
        },
      },
    });
    for (let i = 0; i < 2; i++) expect((await initialize(gw, '/mcp')).body.error?.data?.code).toBe('GW_UPSTREAM_TIMEOUT');
    const began = Date.now();
    const refused = await initialize(gw, '/mcp');
    expect(refused.body.error?.data).toMatchObject({ code: 'GW_CIRCUIT_OPEN', target: 'mute', reason: 'GW_UPSTREAM_TIMEOUT: no answer to initialize within 300 ms' });
    expect(Date.now() - began).toBeLessThan(300);
    expect(spawns(log)).toBe(2);
  });

  it('a remote target that refuses connections: it opens after two, then nothing is dialled', async () => {
    const port = createServer();
    await new Promise<void>((resolve) => port.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(port.address() as { port: number }).port}/mcp`;
    await new Promise<void>((resolve) => port.close(() => resolve()));
    const gw = await start({ targets: { far: { type: 'http', url, circuitBreaker: breaker({}) } } });
    for (let i = 0; i < 2; i++) expect((await initialize(gw, '/mcp')).body.error?.data).toMatchObject({ code: 'GW_UPSTREAM_UNREACHABLE', reason: 'connection refused' });
    const refused = await initialize(gw, '/mcp');
    expect(refused.body.error?.data).toMatchObject({ code: 'GW_CIRCUIT_OPEN', target: 'far', reason: 'GW_UPSTREAM_UNREACHABLE: connection refused' });
    expect(JSON.stringify(refused.body)).not.toContain('127.0.0.1');
  });

  it('request timeouts of two callers within the window open it: on a shared child calls then fail fast, and new sessions too', async () => {
    const gw = await start({
      targets: {
        hung: {
          command: process.execPath,
          args: [fixture('misbehaving-server.mjs'), 'never-answer'],
          timeouts: { requestMs: 200, resetOnProgress: true, maxTotalMs: 0 },
          upstream: { mode: 'shared', children: 1 },
          circuitBreaker: breaker({ startFailures: 0, timeouts: 2, windowMs: 30_000 }),
        },
      },
    });
    const a = (await initialize(gw, '/mcp')).session as string;
    const b = (await initialize(gw, '/mcp')).session as string;
    const call = (session: string, id: number) => post(gw, '/mcp', session, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: {} } });
    expect((await call(a, 1)).error?.data?.code).toBe('GW_UPSTREAM_TIMEOUT');
    expect((await call(b, 1)).error?.data?.code).toBe('GW_UPSTREAM_TIMEOUT');
    const began = Date.now();
    const fast = await call(a, 2);
    expect(fast.error?.data).toMatchObject({ code: 'GW_CIRCUIT_OPEN', target: 'hung', reason: 'request timeouts' });
    expect(Date.now() - began).toBeLessThan(200);
    expect((await initialize(gw, '/mcp')).body.error?.data).toMatchObject({ code: 'GW_CIRCUIT_OPEN', reason: 'request timeouts' });
  });
});
