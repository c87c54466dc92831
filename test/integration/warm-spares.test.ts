/**
 * Warm spares (upstream.spares, upstream/spares.ts): children started before a session asks
 * (spawned only, for the client's own initialize, or initialized where the last client fit the
 * gateway's params), taken by the next session, replaced, counted in the child caps, never for
 * principalEnv targets, ended on reload and shutdown. Real gateway, real children, the SDK client.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfig, startTestGateway, type TestGateway, type TestGatewayOptions, type TestTarget } from '../support/gateway.ts';
import { waitUntilGone } from '../support/processes.ts';
import { modern } from '../support/modern.ts';
import { fixture, post, recorderServer, textOf, type Recorded } from '../support/recorder.ts';

/** A recorder child tagged so that the test finds its own processes; `spares` kept warm. */
function target(tag: string, spares: number, extra: Partial<TestTarget> = {}): TestTarget {
  const recorder = recorderServer();
  return { ...recorder, args: [...(recorder.args ?? []), `--tag=${tag}`], upstream: { mode: 'per-session', children: 1, spares }, ...extra };
}

/** Living processes whose command line carries `--tag=<tag>`. */
function pidsTagged(tag: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (/\) [ZX] /.test(stat)) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(`--tag=${tag}`)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

async function until<T>(check: () => T | undefined | false, what: string, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const running: TestGateway[] = [];
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await Promise.all(running.splice(0).map((gw) => gw.close()));
});

/**
 * A test gateway whose log lines are kept: `ready(target, n, taken)` waits for n spares of `target`
 * ready and alive, leaving out the pids in `taken` (spares sessions took since).
 */
async function start(options: TestGatewayOptions): Promise<TestGateway & { ready(target: string, n: number, taken?: readonly number[]): Promise<number[]> }> {
  const lines: string[] = [];
  const gw = await startTestGateway({ ...options, logLines: lines });
  running.push(gw);
  const ready = (target: string, n: number, taken: readonly number[] = []) =>
    until(() => {
      const pids = lines
        .map((l) => JSON.parse(l) as { msg?: string; target?: string; pid?: number })
        .filter((l) => l.msg === 'spare ready' && l.target === target)
        .map((l) => l.pid as number)
        .filter((pid) => pidsAlive().has(pid) && !taken.includes(pid));
      return pids.length >= n && pids;
    }, `${n} spares of ${target} ready`);
  return Object.assign(gw, { ready });
}

function pidsAlive(): Set<number> {
  return new Set(readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number));
}

interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** The initialize params the client sent. */
  sent: Record<string, unknown> | undefined;
}

/**
 * An SDK client declaring `capabilities`; `version` (if given) replaces the protocol version its
 * initialize asks for (the SDK asks its newest), as a host on an older SDK would send it.
 */
async function connect(url: URL, capabilities: Record<string, unknown> = {}, version?: string): Promise<Connected> {
  const client = new Client({ name: 'spare-test', version: '1' }, { capabilities });
  clients.push(client);
  const transport = new StreamableHTTPClientTransport(url);
  const connected: Connected = { client, transport, sent: undefined };
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage, options) => {
    if ('method' in message && message.method === 'initialize' && message.params !== undefined) {
      if (version !== undefined) message.params.protocolVersion = version;
      connected.sent = structuredClone(message.params);
    }
    return send(message, options);
  };
  await client.connect(transport);
  return connected;
}

async function historyOf(client: Client): Promise<Recorded[]> {
  return JSON.parse(textOf(await client.callTool({ name: 'history', arguments: {} }))) as Recorded[];
}

async function whoami(client: Client): Promise<number> {
  return (JSON.parse(textOf(await client.callTool({ name: 'whoami', arguments: {} }))) as { pid: number }).pid;
}

describe('warm spares', () => {
  it('a session is served by a child that was already running; the first spare hears the client\'s own initialize, its replacement (the client fit) the gateway\'s', async () => {
    const tag = randomUUID();
    const gw = await start({ targets: { t: target(tag, 1) } });
    const [spare] = await gw.ready('t', 1);
    const first = await connect(gw.mcpUrl('t'));
    expect(await whoami(first.client)).toBe(spare);
    // The first spare was spawned only: the upstream heard exactly the client's initialize.
    const heard = await historyOf(first.client);
    expect(heard.filter((m) => m.method === 'initialize').map((m) => m.params)).toEqual([first.sent]);
    expect(heard.filter((m) => m.method === 'notifications/initialized')).toHaveLength(1);
    // Replaced after being taken: one more child, not the one in use, initialized ahead (a bare client fit).
    const [replacement] = await gw.ready('t', 1, [spare as number]);
    const second = await connect(gw.mcpUrl('t'));
    expect(await whoami(second.client)).toBe(replacement);
    // What that upstream heard: the gateway's initialize and one `initialized`, then the client's calls.
    const history = await historyOf(second.client);
    const init = history.find((m) => m.method === 'initialize');
    expect(init?.params?.clientInfo).toMatchObject({ name: 'switchboard' });
    expect(init?.params?.capabilities).toEqual({});
    expect(history.filter((m) => m.method === 'notifications/initialized')).toHaveLength(1);
    // The client got the server's own answer (the SDK checked its protocol version).
    expect(second.client.getServerVersion()).toMatchObject({ name: 'recorder' });
  });

  it('clients declaring roots (2025-06-18) and sampling, elicitation and roots (2025-11-25) take spawned spares; the server sees their own initialize', async () => {
    const tag = randomUUID();
    const gw = await start({ targets: { t: target(tag, 2) } });
    const clientsOf = [
      { capabilities: { roots: { listChanged: true } }, version: '2025-06-18' },
      { capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} }, version: '2025-11-25' },
    ];
    const taken: number[] = [];
    for (const { capabilities, version } of clientsOf) {
      const spares = await gw.ready('t', 2, taken);
      const c = await connect(gw.mcpUrl('t'), capabilities, version);
      taken.push(await whoami(c.client));
      expect(spares).toContain(taken.at(-1));
      const heard = await historyOf(c.client);
      const inits = heard.filter((m) => m.method === 'initialize').map((m) => m.params);
      expect(inits).toEqual([c.sent]);
      expect(inits[0]).toMatchObject({ protocolVersion: version, capabilities, clientInfo: { name: 'spare-test', version: '1' } });
      expect(heard.filter((m) => m.method === 'notifications/initialized')).toHaveLength(1);
      // The server speaks the client's version with it (the SDK's transport carries it in its header).
      expect(c.transport.protocolVersion).toBe(version);
    }
  });

  it('the aggregate endpoint takes a spare for its member too', async () => {
    const tag = randomUUID();
    const gw = await start({ targets: { t: target(tag, 1) } });
    const [spare] = await gw.ready('t', 1);
    const { client } = await connect(new URL('/mcp', gw.url));
    expect(await whoami(client)).toBe(spare);
  });

  it('a 2026-07-28 call without a session is served by a spare through the held session', async () => {
    const tag = randomUUID();
    const gw = await start({ targets: { t: target(tag, 1) } });
    const [spare] = await gw.ready('t', 1);
    const answer = await modern(gw.mcpUrl('t'), 'tools/call', { name: 'whoami', arguments: {} });
    expect(answer.status).toBe(200);
    expect(JSON.parse(textOf(answer.json.result)) as { pid: number }).toEqual({ pid: spare });
  });

  it('a client declaring sampling gets a fresh child when only an initialized spare waits; it keeps waiting for a client it fits', async () => {
    const tag = randomUUID();
    const gw = await start({ targets: { t: target(tag, 1) } });
    const [first] = await gw.ready('t', 1);
    // A bare client takes the spawned spare: its replacement is initialized with the gateway's params.
    const bare = await connect(gw.mcpUrl('t'));
    expect(await whoami(bare.client)).toBe(first);
    const [spare] = await gw.ready('t', 1, [first as number]);
    const { client } = await connect(gw.mcpUrl('t'), { sampling: {} });
    const pid = await whoami(client);
    expect(pid).not.toBe(spare);
    const history = JSON.parse(textOf(await client.callTool({ name: 'history', arguments: {} }))) as Recorded[];
    expect(history.find((m) => m.method === 'initialize')?.params?.capabilities).toEqual({ sampling: {} });
    expect(pidsTagged(tag)).toContain(spare);
    const plain = await connect(gw.mcpUrl('t'));
    expect(await whoami(plain.client)).toBe(spare);
  });

  it('spares count toward the child caps and are ended before any session to make room', async () => {
    const warm = randomUUID();
    const cold = randomUUID();
    const gw = await start({ targets: { a: target(warm, 2), b: target(cold, 0) }, session: { maxChildren: 2 } });
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, pidsTagged(warm).length + pidsTagged(cold).length)), 5);
    try {
      await gw.ready('a', 2);
      // A session of the other target needs room: a spare goes, the session is served.
      const { client } = await connect(gw.mcpUrl('b'));
      expect(pidsTagged(cold)).toContain(await whoami(client));
      await until(() => pidsTagged(warm).length === 1, 'one spare left');
      // A session of the warm target takes the last spare; no room for a replacement.
      const taker = await connect(gw.mcpUrl('a'));
      const taken = await whoami(taker.client);
      expect(pidsTagged(warm)).toEqual([taken]);
      // Its end frees room: a spare is started again.
      await taker.transport.terminateSession();
      await until(() => pidsTagged(warm).length === 1 && !pidsTagged(warm).includes(taken), 'a spare after the session ended');
    } finally {
      clearInterval(sampler);
    }
    // A shed spare stops in the background (as an evicted session's child does): at most one over, briefly.
    expect(most).toBeLessThanOrEqual(3);
    expect(pidsTagged(warm).length + pidsTagged(cold).length).toBeLessThanOrEqual(2);
  });

  it('a spare that exits while waiting is replaced', async () => {
    const tag = randomUUID();
    const gw = await start({ targets: { t: target(tag, 1) } });
    const [spare] = await gw.ready('t', 1);
    process.kill(spare as number, 'SIGKILL');
    const next = await until(() => pidsTagged(tag).find((pid) => pid !== spare), 'a replacement spare');
    expect(next).not.toBe(spare);
  });

  it('spares that keep failing to start are given up after maxRestarts + 1 losses; sessions still start children', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spares-'));
    const spawnLog = join(dir, 'spawns');
    const lines: string[] = [];
    // It exits as it starts (a missing file): a spawned spare is lost as an initialized one would be.
    const broken = { command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'exit-unless-file', `--file=${join(dir, 'missing')}`, `--spawn-log=${spawnLog}`] };
    const restart = { onExit: 'end' as const, maxRestarts: 1, initialBackoffMs: 20, maxBackoffMs: 100 };
    try {
      const gw = await startTestGateway({ targets: { t: { ...broken, restart, upstream: { mode: 'per-session', children: 1, spares: 1 } } }, logLines: lines });
      running.push(gw);
      await until(() => lines.some((l) => l.includes('spares lost in a row')), 'the spares given up');
      expect(readFileSync(spawnLog, 'utf8').trim().split('\n')).toHaveLength(2);
      // A session's own start is not affected: it fails as the server does, and says so.
      const res = await post(gw.mcpUrl('t'), JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }));
      expect(res.json.error).toMatchObject({ data: { code: 'GW_UPSTREAM_EXITED' } });
      expect(readFileSync(spawnLog, 'utf8').trim().split('\n')).toHaveLength(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a spawned spare whose server exits on the client initialize fails that session as a fresh child would; the gateway keeps serving', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spares-'));
    const spawnLog = join(dir, 'spawns');
    const lines: string[] = [];
    const broken = { command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'exit-during-init', `--spawn-log=${spawnLog}`] };
    try {
      const gw = await startTestGateway({ targets: { t: { ...broken, upstream: { mode: 'per-session', children: 1, spares: 1 } } }, logLines: lines });
      running.push(gw);
      const spare = await until(() => lines.map((l) => JSON.parse(l) as { msg?: string; pid?: number }).find((l) => l.msg === 'spare ready')?.pid, 'the spare');
      const init = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { roots: {} }, clientInfo: { name: 'x', version: '1' } } });
      const res = await post(gw.mcpUrl('t'), init(1));
      expect(res.json.error).toMatchObject({ data: { code: 'GW_UPSTREAM_EXITED' } });
      expect(await waitUntilGone([spare], 15_000)).toEqual([]);
      // Another session is answered the same way, by the replacement or a child of its own: nothing hangs.
      const again = await post(gw.mcpUrl('t'), init(2));
      expect(again.json.error).toMatchObject({ data: { code: 'GW_UPSTREAM_EXITED' } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a principalEnv target gets none, shared targets neither', async () => {
    const bound = randomUUID();
    const shared = randomUUID();
    const plain = randomUUID();
    await start({
      targets: {
        bound: target(bound, 1, { principalEnv: { WHO: '{sub}' } }),
        shared: target(shared, 1, { upstream: { mode: 'shared', children: 1, spares: 1 } }),
        plain: target(plain, 1),
      },
    });
    // The plain target's spare is the event: by then the others would have started theirs.
    await until(() => pidsTagged(plain).length === 1, 'the plain target spare');
    await new Promise((r) => setImmediate(r));
    expect(pidsTagged(bound)).toEqual([]);
    expect(pidsTagged(shared)).toEqual([]);
  });

  it('a reload that changes the target ends its spares and warms new ones; shutdown leaves no process', async () => {
    const tag = randomUUID();
    const options: TestGatewayOptions = { targets: { t: target(tag, 2) } };
    const gw = await start(options);
    const before = await until(() => pidsTagged(tag).length === 2 && pidsTagged(tag), 'two spares');
    gw.reload(buildConfig({ targets: { t: target(tag, 2, { env: { CHANGED: '1' } }) } }));
    expect(await waitUntilGone(before, 15_000)).toEqual([]);
    await until(() => pidsTagged(tag).length === 2, 'two new spares');
    const after = await gw.ready('t', 2);
    const { client } = await connect(gw.mcpUrl('t'));
    const used = await whoami(client);
    expect(after).toContain(used);
    // The session keeps its child (the SDK's close sends no DELETE); the taken spare was replaced.
    await client.close();
    const all = await until(() => pidsTagged(tag).length === 3 && pidsTagged(tag), 'the replacement');
    await gw.close();
    running.splice(0);
    expect(await waitUntilGone([...new Set([...all, used])], 15_000)).toEqual([]);
    expect(pidsTagged(tag)).toEqual([]);
  });
});
