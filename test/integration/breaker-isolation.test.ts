/**
 * Timeouts are counted where they happen (issue 21, item 8). One client's calls that time out on
 * its own per-session child never open the target's circuit: other clients keep opening sessions
 * and calling, over 2025 Streamable HTTP and legacy SSE, while that client's child alone is ended
 * once it keeps timing out. A shared upstream (a shared child, a remote server-everything) is the
 * same for everyone: its timeouts open the circuit, but only once two distinct callers saw them.
 * Real gateway, real children, the SDK's clients; /readyz says the same as the breaker.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CircuitBreakerPolicy } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { keyAuth } from '../support/auth-server.ts';
import { buildConfig, createTestLogger, startTestGateway, type TestGatewayOptions } from '../support/gateway.ts';
import { waitUntilGone } from '../support/processes.ts';
import { errorOf, modern, resultOf } from '../support/modern.ts';
import { fixture, textOf } from '../support/recorder.ts';
import { startEverythingHttp, type RemoteUpstream } from '../support/remote-upstreams.ts';

type Via = 'streamable' | 'sse';
const VIAS: readonly Via[] = ['streamable', 'sse'];

let dir: string;
const gateways: RunningGateway[] = [];
const clients: Client[] = [];
const remotes: RemoteUpstream[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sb-breaker-iso-'));
});
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  for (const gw of gateways.splice(0)) await gw.close();
  for (const remote of remotes.splice(0)) await remote.close();
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Opens the circuit on little evidence, and keeps it open for the whole test once it does. */
const breaker = (overrides: Partial<CircuitBreakerPolicy> = {}): CircuitBreakerPolicy => ({
  startFailures: 2,
  timeouts: 3,
  timeoutCallers: 2,
  windowMs: 60_000,
  cooldownMs: 60_000,
  maxCooldownMs: 60_000,
  ...overrides,
});

async function start(options: TestGatewayOptions): Promise<RunningGateway> {
  const gw = await startTestGateway(options);
  gateways.push(gw);
  return gw;
}

async function connect(gw: RunningGateway, via: Via, headers: Record<string, string> = {}): Promise<Client> {
  const url = new URL(via === 'sse' ? '/sse' : '/mcp', gw.url);
  const requestInit = { headers };
  const transport: Transport = via === 'sse' ? new SSEClientTransport(url, { requestInit }) : new StreamableHTTPClientTransport(url, { requestInit });
  const client = new Client({ name: `breaker-iso-${via}`, version: '1.0.0' });
  clients.push(client);
  await client.connect(transport);
  return client;
}

/** The GW code a call failed with (undefined: it succeeded). */
async function failureOf(call: Promise<unknown>): Promise<string | undefined> {
  try {
    await call;
    return undefined;
  } catch (err) {
    const data = (err as { data?: { code?: string } }).data;
    return data?.code ?? String(err);
  }
}

async function readyz(gw: RunningGateway) {
  const res = await fetch(new URL('/readyz', gw.url));
  return { status: res.status, body: (await res.json()) as { status: string; targets: Array<Record<string, unknown>> } };
}

const pids = (log: string): number[] => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map(Number) : []);
const slow = (client: Client) => failureOf(client.callTool({ name: 'slow', arguments: { ms: 30_000 } }));
const echo = async (client: Client, text: string) => textOf(await client.callTool({ name: 'echo', arguments: { text } }));

describe('timeouts on one session\'s own child', () => {
  it.each(VIAS)('a client over %s times out on its own child: others keep opening sessions and calling, the circuit stays closed, that child alone is ended', async (via) => {
    const log = join(dir, `spawns-${via}`);
    const logLines: string[] = [];
    const gw = await start({
      targets: {
        hang: {
          command: process.execPath,
          args: [fixture('misbehaving-server.mjs'), 'normal', `--spawn-log=${log}`],
          timeouts: { requestMs: 300, resetOnProgress: true, maxTotalMs: 0 },
          // Even one caller's timeouts would do on a shared upstream: still nothing on a per-session child.
          circuitBreaker: breaker({ timeoutCallers: 1 }),
        },
      },
      logLines,
    });
    const greedy = await connect(gw, via);
    const [own] = pids(log);
    // Below the child's own threshold: its child stays, and answers.
    expect(await slow(greedy)).toBe('GW_UPSTREAM_TIMEOUT');
    expect(await slow(greedy)).toBe('GW_UPSTREAM_TIMEOUT');
    expect(await echo(greedy, 'mine still works')).toBe('mine still works');

    // The third timeout, while other clients (both transports) open sessions and call.
    const others = VIAS.flatMap((v) => [v, v]).map(async (v, i) => echo(await connect(gw, v), `other ${i}`));
    const [third, ...answers] = await Promise.all([slow(greedy), ...others]);
    expect(third).toBe('GW_UPSTREAM_TIMEOUT');
    expect(answers).toEqual(['other 0', 'other 1', 'other 2', 'other 3']);

    // And after it: new sessions still start (the circuit never opened), on both transports.
    for (const v of VIAS) expect(await echo(await connect(gw, v), `after ${v}`)).toBe(`after ${v}`);
    expect(await readyz(gw)).toMatchObject({ status: 200, body: { status: 'ready', targets: [{ name: 'hang', state: 'ready' }] } });
    expect(logLines.some((line) => line.includes('circuit opened'))).toBe(false);

    // Its own child kept timing out: that child (only) was ended, and its session with it (onExit: end).
    expect(await waitUntilGone([own as number], 10_000)).toEqual([]);
    expect(logLines.some((line) => line.includes('upstream stopped answering; its child is ended'))).toBe(true);
    expect(await failureOf(echo(greedy, 'gone'))).toBeDefined();
  });

  it('2026 requests time out on their held session\'s child: that child is ended, 2025 and 2026 clients keep being served, the circuit stays closed', async () => {
    const log = join(dir, 'spawns-2026');
    const gw = await start({
      targets: {
        hang: {
          command: process.execPath,
          args: [fixture('misbehaving-server.mjs'), 'normal', `--spawn-log=${log}`],
          timeouts: { requestMs: 300, resetOnProgress: true, maxTotalMs: 0 },
          circuitBreaker: breaker({ timeoutCallers: 1 }),
        },
      },
    });
    const url = new URL('/mcp', gw.url);
    for (let i = 0; i < 4; i++) {
      expect(errorOf(await modern(url, 'tools/call', { name: 'slow', arguments: { ms: 30_000 } }, { id: i })).data?.code).toBe('GW_UPSTREAM_TIMEOUT');
    }
    const [held] = pids(log);
    expect(await waitUntilGone([held as number], 10_000)).toEqual([]);
    expect(resultOf(await modern(url, 'tools/call', { name: 'echo', arguments: { text: '2026 still' } }))).toMatchObject({ content: [{ text: '2026 still' }] });
    for (const v of VIAS) expect(await echo(await connect(gw, v), `2025 ${v}`)).toBe(`2025 ${v}`);
    expect(await readyz(gw)).toMatchObject({ status: 200, body: { targets: [{ name: 'hang', state: 'ready' }] } });
  });

  it('an aggregate member: one session\'s timeouts end its own member child (restarted on use); the circuit stays closed', async () => {
    const log = join(dir, 'spawns-aggregate');
    const gw = await start({
      targets: {
        hang: {
          command: process.execPath,
          args: [fixture('misbehaving-server.mjs'), 'normal', `--spawn-log=${log}`],
          timeouts: { requestMs: 300, resetOnProgress: true, maxTotalMs: 0 },
          restart: { onExit: 'restart', maxRestarts: 3, initialBackoffMs: 50, maxBackoffMs: 200 },
          circuitBreaker: breaker({ timeoutCallers: 1 }),
        },
        fine: { command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'normal'] },
      },
    });
    const greedy = await connect(gw, 'streamable');
    const calls = [1, 2, 3].map(() => failureOf(greedy.callTool({ name: 'hang__slow', arguments: { ms: 30_000 } })));
    expect(await Promise.all(calls)).toEqual(['GW_UPSTREAM_TIMEOUT', 'GW_UPSTREAM_TIMEOUT', 'GW_UPSTREAM_TIMEOUT']);
    const [own] = pids(log);
    expect(await waitUntilGone([own as number], 10_000)).toEqual([]);
    // Its child was replaced (onExit: restart): the same session calls on.
    expect(textOf(await greedy.callTool({ name: 'hang__echo', arguments: { text: 'restarted' } }))).toBe('restarted');
    expect(pids(log)).toHaveLength(2);
    const other = await connect(gw, 'sse');
    expect(textOf(await other.callTool({ name: 'hang__echo', arguments: { text: 'other' } }))).toBe('other');
    expect((await readyz(gw)).body.targets).toContainEqual(expect.objectContaining({ name: 'hang', state: 'ready' }));
  });
});

describe('timeouts of an upstream every session shares', () => {
  it('a shared child: one caller\'s timeouts never open it; a second caller\'s do, then calls and new sessions fail fast', async () => {
    const gw = await start({
      targets: {
        pooled: {
          command: process.execPath,
          args: [fixture('misbehaving-server.mjs'), 'normal'],
          timeouts: { requestMs: 300, resetOnProgress: true, maxTotalMs: 0 },
          upstream: { mode: 'shared', children: 1 },
          circuitBreaker: breaker({ startFailures: 0, timeouts: 2 }),
        },
      },
    });
    const first = await connect(gw, 'streamable');
    for (let i = 0; i < 4; i++) expect(await slow(first)).toBe('GW_UPSTREAM_TIMEOUT');
    const second = await connect(gw, 'sse');
    expect(await echo(second, 'closed still')).toBe('closed still');
    expect(await slow(second)).toBe('GW_UPSTREAM_TIMEOUT');
    // Two callers saw it hang: the target as a whole is judged.
    const began = Date.now();
    expect(await failureOf(echo(first, 'x'))).toBe('GW_CIRCUIT_OPEN');
    expect(Date.now() - began).toBeLessThan(300);
    expect(await failureOf(connect(gw, 'streamable'))).toContain('GW_CIRCUIT_OPEN');
    const down = await readyz(gw);
    expect(down).toMatchObject({ status: 503, body: { status: 'down', targets: [{ name: 'pooled', state: 'open', cause: 'request timeouts' }] } });
  });

  it('with gateway.auth a caller is its principal: two sessions of one principal are one caller; another principal\'s timeout opens it', async () => {
    const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef' };
    const config = buildConfig({
      targets: {
        pooled: {
          command: process.execPath,
          args: [fixture('misbehaving-server.mjs'), 'normal'],
          timeouts: { requestMs: 300, resetOnProgress: true, maxTotalMs: 0 },
          upstream: { mode: 'shared', children: 1 },
          circuitBreaker: breaker({ startFailures: 0, timeouts: 2 }),
        },
      },
    });
    const gw = await startGateway({ ...config, auth: keyAuth(KEYS) }, { logger: createTestLogger('silent', undefined), env: {} });
    gateways.push(gw);
    const as = (key: string) => ({ authorization: `Bearer ${key}` });
    const alice = [await connect(gw, 'streamable', as(KEYS.alice)), await connect(gw, 'sse', as(KEYS.alice))];
    for (const session of [...alice, ...alice]) expect(await slow(session)).toBe('GW_UPSTREAM_TIMEOUT');
    const bob = await connect(gw, 'streamable', as(KEYS.bob));
    expect(await echo(bob, 'still closed')).toBe('still closed');
    expect(await slow(bob)).toBe('GW_UPSTREAM_TIMEOUT');
    expect(await failureOf(echo(alice[0] as Client, 'x'))).toBe('GW_CIRCUIT_OPEN');
  });

  it('a remote target (server-everything): one caller\'s long operations never open it; two callers\' timeouts do', async () => {
    const remote = await startEverythingHttp();
    remotes.push(remote);
    const gw = await start({
      targets: {
        far: {
          type: 'http',
          url: remote.url,
          timeouts: { requestMs: 500, resetOnProgress: false, maxTotalMs: 0 },
          circuitBreaker: breaker({ startFailures: 0, timeouts: 2 }),
        },
      },
    });
    const long = (client: Client) => failureOf(client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 20, steps: 2 } }));
    const first = await connect(gw, 'streamable');
    for (let i = 0; i < 3; i++) expect(await long(first)).toBe('GW_UPSTREAM_TIMEOUT');
    const second = await connect(gw, 'sse');
    expect(await readyz(gw)).toMatchObject({ status: 200, body: { targets: [{ name: 'far', state: 'ready' }] } });
    expect(await long(second)).toBe('GW_UPSTREAM_TIMEOUT');
    expect(await failureOf(connect(gw, 'streamable'))).toContain('GW_CIRCUIT_OPEN');
    expect(await failureOf(first.callTool({ name: 'echo', arguments: { message: 'x' } }))).toBe('GW_CIRCUIT_OPEN');
    expect((await readyz(gw)).body.targets).toEqual([expect.objectContaining({ name: 'far', state: 'open', cause: 'request timeouts' })]);
  });
});
