/**
 * Shared rate limits across replicas, with real parts: a real redis-server and three gateways,
 * each its own OS process, one principal calling all three in round robin. Together they admit the
 * configured 20/s (not 3 x 20/s); Redis killed mid-run: no replica crashes, the sessions keep
 * working and failMode `local` lets each replica count on its own (logged once); Redis back: the
 * limit is shared again (logged once). The config generation: the same on every replica (/readyz,
 * /metrics); a replica started with another config logs that it differs, the others do not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { colliderServer } from '../support/aggregate.ts';
import { parseMetrics } from '../support/metrics.ts';
import { startRedis, type TestRedis } from '../support/redis.ts';
import { startReplica, type Replica } from '../support/replicas.ts';

const RATE = 20;
const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef0' };
const CLUSTER_KEY = 'cluster-test-key-0123456789abcdefghijklmnop';
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'cluster-rate', version: '1' } } };
const auth = (who: keyof typeof KEYS) => ({ authorization: `Bearer ${KEYS[who]}` });

let redis: TestRedis;
const replicas: Replica[] = [];

function gatewayConfig(replicaId: string, rate = RATE): Record<string, unknown> {
  return {
    logging: { level: 'info' },
    auth: { apiKeys: [{ name: 'alice', key: KEYS.alice, scopes: ['switchboard:admin'] }, { name: 'bob', key: KEYS.bob }] },
    rateLimits: { perPrincipal: { perSecond: rate, burst: RATE } },
    cluster: { replicaId, advertiseUrl: `http://127.0.0.1:1/${replicaId}`, redis: { url: redis.url, failMode: 'local' }, keys: [CLUSTER_KEY], heartbeatMs: 200, replicaTtlMs: 1_000 },
  };
}

const servers = { col: { command: colliderServer().command, args: colliderServer().args } };

interface Session {
  readonly replica: Replica;
  readonly id: string;
}

async function open(replica: Replica, who: keyof typeof KEYS): Promise<Session> {
  const res = await fetch(`${replica.url}/mcp`, { method: 'POST', headers: { ...HEADERS, ...auth(who) }, body: JSON.stringify(INIT) });
  expect(res.status).toBe(200);
  await res.text();
  return { replica, id: res.headers.get('mcp-session-id') as string };
}

interface Tally {
  admitted: number;
  refused: number;
  other: string[];
  perReplica: number[];
  slowestMs: number;
  seconds: number;
}

/** Calls `echo` in round robin over `sessions` from 6 workers for `ms`; counts admitted (200) and refused (429). */
async function hammer(sessions: readonly Session[], who: keyof typeof KEYS, ms: number): Promise<Tally> {
  const tally: Tally = { admitted: 0, refused: 0, other: [], perReplica: sessions.map(() => 0), slowestMs: 0, seconds: 0 };
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    while (Date.now() - started < ms) {
      const i = next++ % sessions.length;
      const s = sessions[i] as Session;
      const body = { jsonrpc: '2.0', id: next, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } };
      const sent = Date.now();
      const res = await fetch(`${s.replica.url}/mcp`, { method: 'POST', headers: { ...HEADERS, ...auth(who), 'mcp-session-id': s.id }, body: JSON.stringify(body) });
      const text = await res.text();
      tally.slowestMs = Math.max(tally.slowestMs, Date.now() - sent);
      if (res.status === 200 && text.includes('collider echo: x')) {
        tally.admitted++;
        tally.perReplica[i] = (tally.perReplica[i] as number) + 1;
      } else if (res.status === 429 && text.includes('GW_RATE_LIMITED')) tally.refused++;
      else tally.other.push(`${res.status} ${text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
  tally.seconds = (Date.now() - started) / 1000;
  return tally;
}

/** The most one shared bucket admits in `seconds`: the burst, the refill, and a little slack. */
const sharedBound = (seconds: number) => RATE + RATE * seconds + 10;

beforeAll(async () => {
  redis = await startRedis();
  for (const id of ['r1', 'r2', 'r3']) replicas.push(await startReplica(gatewayConfig(id), servers));
}, 180_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
});

describe('rate limits shared by three replicas', () => {
  let sessions: Session[];

  it('three replicas together admit about the configured rate, not three times it', async () => {
    sessions = [];
    for (const r of replicas) sessions.push(await open(r, 'alice'));
    const t = await hammer(sessions, 'alice', 3_000);
    expect(t.other).toEqual([]);
    expect(t.refused).toBeGreaterThan(0);
    expect(t.admitted).toBeGreaterThan(0);
    expect(t.admitted).toBeLessThanOrEqual(sharedBound(t.seconds));
    // Another principal has buckets of its own, on every replica.
    const bob = await open(replicas[1] as Replica, 'bob');
    expect((await hammer([bob], 'bob', 200)).admitted).toBeGreaterThan(0);
  }, 60_000);

  it('Redis killed: no crash, sessions keep working, each replica counts on its own (logged once); back: shared again', async () => {
    // Counted from here: a replica whose first connection took long has said both lines once already.
    const said = (text: string) => replicas.map((r) => r.lines(text).length);
    const lost = said('shared rate limits unreachable');
    const back = said('shared rate limits reachable in Redis again');
    await redis.stop(true);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the buckets refill, as after any quiet second
    const down = await hammer(sessions, 'alice', 3_000);
    expect(down.other).toEqual([]);
    for (const r of replicas) expect(r.alive()).toBe(true);
    // Every replica's own session was served, and failMode local admitted more than one bucket could.
    for (const n of down.perReplica) expect(n).toBeGreaterThan(0);
    expect(down.admitted).toBeGreaterThan(sharedBound(down.seconds));
    // No request waited on the Redis that was gone (commandTimeoutMs is 500 ms; generous for the machine).
    expect(down.slowestMs).toBeLessThan(5_000);
    expect(said('shared rate limits unreachable')).toEqual(lost.map((n) => n + 1));

    await redis.restart();
    // Each replica reconnects on its own; the first take that reaches Redis says so.
    for (const [i, r] of replicas.entries()) {
      await expect
        .poll(
          async () => {
            await hammer([sessions[i] as Session], 'alice', 50);
            return r.lines('shared rate limits reachable in Redis again').length;
          },
          { timeout: 30_000, interval: 200 },
        )
        .toBe((back[i] as number) + 1);
    }
    const again = await hammer(sessions, 'alice', 3_000);
    expect(again.other).toEqual([]);
    expect(again.refused).toBeGreaterThan(0);
    expect(again.admitted).toBeLessThanOrEqual(sharedBound(again.seconds));
    expect(said('shared rate limits unreachable')).toEqual(lost.map((n) => n + 1));
  }, 120_000);
});

describe('config generation', () => {
  const generationOf = async (r: Replica) => ((await (await fetch(`${r.url}/readyz`)).json()) as { generation?: string }).generation;

  it('is the same on every replica of one config, on /readyz and /metrics; a replica with another config logs that it differs', async () => {
    const generations = await Promise.all(replicas.map(generationOf));
    expect(generations[0]).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(generations).size).toBe(1);
    const samples = parseMetrics(await (await fetch(`${replicas[0]!.url}/metrics`, { headers: auth('alice') })).text());
    expect(samples.find((s) => s.name === 'switchboard_config_generation_info')?.labels).toEqual({ generation: generations[0] });
    // Nothing to say while they agree; the config's secrets are nowhere in what is shown.
    for (const r of replicas) expect(r.lines('config generation')).toEqual([]);
    expect(JSON.stringify(generations)).not.toContain(CLUSTER_KEY);

    const odd = await startReplica(gatewayConfig('r4', RATE + 1), servers);
    replicas.push(odd);
    const oddGeneration = await generationOf(odd);
    expect(oddGeneration).not.toBe(generations[0]);
    await expect.poll(() => odd.lines('runs another config generation').length, { timeout: 30_000 }).toBe(1);
    const [warned] = odd.lines('runs another config generation');
    expect(warned).toMatchObject({ level: 40, replicaId: 'r4', generation: oddGeneration, others: { r1: generations[0], r2: generations[0], r3: generations[0] } });
    // The three that agree are the majority: they keep quiet (a few of their beats later).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    for (const r of replicas.slice(0, 3)) expect(r.lines('config generation')).toEqual([]);
  }, 120_000);
});
