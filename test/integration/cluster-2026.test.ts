/**
 * The 2026 bridge across replicas (issue 24 item 5), on real parts: Redis, two gateway processes,
 * the recorder fixture as a 2025 stdio upstream that asks its client for a sampling mid-call. The
 * round is asked on r0 and the retry lands on r1: it is relayed to r0, which holds the parked
 * call, and completes; another principal's retry is refused by the owner; after `kill -9` of the
 * owner the retry gets GW_INVALID_REQUEST_STATE "owner-gone" at once; a replica that drains still
 * serves the retries of its parked calls, and once it has left they get "owner-gone"; a state that was altered or sealed with another key is refused as
 * invalid, never relayed.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKeyRing } from '../../src/cluster/keyring.ts';
import { createStateCodec } from '../../src/session/stateless/request-state.ts';
import { startCluster, type Replica, type TestCluster } from '../support/cluster.ts';
import { errorOf, modern, resultOf } from '../support/modern.ts';
import { textOf, type Recorded } from '../support/recorder.ts';

const ALICE = 'Bearer alice-key-0123456789abcdef';
const BOB = 'Bearer bob-key-0123456789abcdefgh';
let cluster: TestCluster;
let r0: Replica;
let r1: Replica;
let r2: Replica;

beforeAll(async () => {
  cluster = await startCluster({
    replicas: 3,
    gateway: { shutdownGraceMs: 6_000, auth: { apiKeys: [{ name: 'alice', key: ALICE.slice(7) }, { name: 'bob', key: BOB.slice(7) }] } },
  });
  [r0, r1, r2] = cluster.replicas as [Replica, Replica, Replica];
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

const meta = { 'io.modelcontextprotocol/clientCapabilities': { sampling: {} } };
/** The recorder asks its client for a sampling under `id`, and echoes the answer it gets. */
const ask = (text: string, id = 'srv-1') => ({ name: 'ask-client', arguments: { id, method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text } }], maxTokens: 5 } } });
const sampled = (text: string) => ({ role: 'assistant', content: { type: 'text', text }, model: 'm' });
const call = (replica: Replica, params: Record<string, unknown>, id: string, authorization = ALICE) =>
  modern(replica.mcpUrl(), 'tools/call', params, { meta, id, headers: { authorization } });

/** Asks on `replica`: the input_required round, its one key and its state. */
async function round(replica: Replica, text: string): Promise<{ key: string; state: string }> {
  const first = resultOf(await call(replica, ask(text), `ask-${text}`));
  expect(first.resultType).toBe('input_required');
  return { key: Object.keys(first.inputRequests as object)[0] as string, state: first.requestState as string };
}

const retry = (text: string, key: string, state: string, answer: string) => ({ ...ask(text), inputResponses: { [key]: sampled(answer) }, requestState: state });

describe('a 2026 input_required round across replicas', () => {
  it('a retry landing on another replica is relayed to the one holding the call, and completes', async () => {
    const { key, state } = await round(r0, 'where?');
    const done = await call(r1, retry('where?', key, state, 'on r0'), 'retry-1');
    expect(done.status).toBe(200);
    expect(done.json.id).toBe('retry-1');
    // The upstream on r0 got the answer under the id it asked with.
    expect(JSON.parse(textOf(resultOf(done))) as Recorded).toMatchObject({ id: 'srv-1', result: sampled('on r0') });
    // Used once: the same state again, through either replica, is refused.
    for (const replica of [r1, r0]) {
      const again = await call(replica, retry('where?', key, state, 'twice'), 'retry-2');
      expect(again.status).toBe(400);
      expect(errorOf(again)).toMatchObject({ code: -32602, data: { code: 'GW_INVALID_REQUEST_STATE' } });
      expect(errorOf(again).data?.reason).toBeUndefined();
    }
  });

  it('the other way round, and a second round asked again through the edge', async () => {
    const { key, state } = await round(r1, 'back');
    // A retry without the answer: the owner asks again, relayed back through r0 with a new state.
    const second = resultOf(await call(r0, { ...ask('back'), inputResponses: { wrong: sampled('x') }, requestState: state }, 'retry-a'));
    expect(second.resultType).toBe('input_required');
    expect(Object.keys(second.inputRequests as object)).toEqual([key]);
    const done = await call(r0, retry('back', key, second.requestState as string, 'via r0'), 'retry-b');
    expect(JSON.parse(textOf(resultOf(done))) as Recorded).toMatchObject({ result: sampled('via r0') });
  });

  it("another principal's retry is refused by the owner, and the call still waits for its own client", async () => {
    const { key, state } = await round(r0, 'mine');
    const stolen = await call(r1, retry('mine', key, state, 'bob was here'), 'bob-1', BOB);
    expect(stolen.status).toBe(400);
    expect(stolen.json.id).toBe('bob-1');
    expect(errorOf(stolen).data).toMatchObject({ code: 'GW_INVALID_REQUEST_STATE' });
    const done = await call(r1, retry('mine', key, state, 'alice'), 'alice-1');
    expect(JSON.parse(textOf(resultOf(done))) as Recorded).toMatchObject({ result: sampled('alice') });
  });
});

describe('the replica holding the call drains', () => {
  it('a retry relayed to it while it drains completes; once it has left, "owner-gone"', async () => {
    const first = await round(r2, 'draining');
    const second = await round(r2, 'left');
    // A 2025 call in flight: r2 is seen draining (and still listening) while the retry comes.
    const client = new Client({ name: 'cluster-2026', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(r2.mcpUrl(), { requestInit: { headers: { authorization: ALICE } } }));
    let running!: () => void;
    const started = new Promise<void>((resolve) => (running = resolve));
    const slow = client.callTool({ name: 'slow', arguments: { ms: 3_000, steps: 3 } }, undefined, { timeout: 60_000, onprogress: () => running() });
    await started;
    const exited = r2.terminate();
    await expect.poll(async () => (await fetch(new URL('/readyz', r2.url))).status, { timeout: 10_000 }).toBe(503);
    const served = await call(r1, retry('draining', first.key, first.state, 'in time'), 'while-draining');
    expect(JSON.parse(textOf(resultOf(served))) as Recorded).toMatchObject({ result: sampled('in time') });
    expect(textOf(await slow)).toBe('done');
    await client.close().catch(() => undefined);
    // The other parked call holds the drain until shutdownGraceMs; then r2 leaves.
    expect(await exited).toBe(0);
    const gone = await call(r1, retry('left', second.key, second.state, 'too late'), 'after-drain');
    expect(gone.status).toBe(400);
    expect(gone.json.id).toBe('after-drain');
    expect(errorOf(gone).data).toMatchObject({ code: 'GW_INVALID_REQUEST_STATE', reason: 'owner-gone' });
  });
});

describe('the replica holding the call dies', () => {
  it('the retry gets GW_INVALID_REQUEST_STATE "owner-gone" within 2 s; altered or foreign states are invalid, not relayed', async () => {
    const { key, state } = await round(r0, 'doomed');
    // Altered and foreign-key states naming r0: r1 cannot open them, so they are invalid, not relayed.
    const raw = Buffer.from(state, 'base64url');
    raw[raw.length - 20] = (raw[raw.length - 20] as number) ^ 0x01;
    const foreign = createStateCodec({ keys: deriveKeyRing(['another-cluster-key-0123456789abcdef']).map((k) => k.state), replica: 'r0' });
    const forged = foreign.seal({ scope: 'x', host: 'h', call: 1, method: 'tools/call', round: 1, expires: Date.now() + 60_000 });

    await r0.kill9();
    const started = Date.now();
    const gone = await call(r1, retry('doomed', key, state, 'too late'), 'after-kill');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(gone.status).toBe(400);
    expect(gone.json.id).toBe('after-kill');
    expect(errorOf(gone)).toMatchObject({ code: -32602, data: { code: 'GW_INVALID_REQUEST_STATE', reason: 'owner-gone' } });
    // Still so once its directory entry has expired (no heartbeat), and never a hang.
    await new Promise((r) => setTimeout(r, 2_000));
    const later = Date.now();
    const stillGone = await call(r1, retry('doomed', key, state, 'later'), 'later');
    expect(Date.now() - later).toBeLessThan(2_000);
    expect(errorOf(stillGone).data).toMatchObject({ code: 'GW_INVALID_REQUEST_STATE', reason: 'owner-gone' });

    for (const bad of [raw.toString('base64url'), forged]) {
      const refused = await call(r1, retry('doomed', key, bad, 'forged'), 'forged');
      expect(refused.status).toBe(400);
      expect(errorOf(refused).data?.code).toBe('GW_INVALID_REQUEST_STATE');
      expect(errorOf(refused).data?.reason).toBeUndefined();
    }
    // The client starts the call again, on a live replica: a new round, and it completes there.
    const fresh = await round(r1, 'again');
    const done = await call(r1, retry('again', fresh.key, fresh.state, 'fine'), 'fresh');
    expect(JSON.parse(textOf(resultOf(done))) as Recorded).toMatchObject({ result: sampled('fine') });
  });
});
