/**
 * What a cluster refuses, and what happens when a replica dies (issue 24 items 2-4): forged,
 * altered and foreign-key session ids get the 404 of an unknown session on every replica; a hop
 * header that does not verify is refused; another principal's session stays unknown through
 * another replica; and after `kill -9` of the owner its sessions get 404 through the others at
 * once, the SDK client re-initializes and goes on, and the other replicas' sessions see nothing.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHopSigner } from '../../src/cluster/hop-signature.ts';
import { openRedis } from '../../src/cluster/redis.ts';
import { deriveKeyRing } from '../../src/cluster/keyring.ts';
import { createSessionSealer } from '../../src/cluster/sealed-id.ts';
import { ALICE, BOB, CLUSTER_KEY, startKeyedPair, type Replica, type TestCluster } from '../support/cluster.ts';
import { post, textOf } from '../support/recorder.ts';

let cluster: TestCluster;
let r0: Replica;
let r1: Replica;

beforeAll(async () => {
  ({ cluster, r0, r1 } = await startKeyedPair());
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

const PING = JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' });

async function initialize(replica: Replica, authorization = ALICE): Promise<string> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  const answer = await post(replica.mcpUrl(), body, { authorization });
  expect(answer.status).toBe(200);
  return answer.headers.get('mcp-session-id') as string;
}

const ping = (replica: Replica, id: string, authorization = ALICE) => post(replica.mcpUrl(), PING, { 'mcp-session-id': id, authorization });

function sdkClient(replica: Replica, authorization = ALICE) {
  const transport = new StreamableHTTPClientTransport(replica.mcpUrl(), { requestInit: { headers: { authorization } } });
  return { transport, client: new Client({ name: 'cluster-failures', version: '1.0.0' }) };
}

describe('ids and hops nobody sealed or signed', () => {
  it('answers forged, altered and foreign-key ids with the unknown-session 404 on every replica', async () => {
    const real = await initialize(r0);
    const bytes = Buffer.from(real, 'base64url');
    bytes[20] = (bytes[20] as number) ^ 0x40;
    const foreign = createSessionSealer(deriveKeyRing(['another-cluster-key-0123456789abcdef'])).seal({ replica: 'r0', local: 'x', principal: 'key:alice' });
    // Sealed with our key but naming a replica that never existed: no directory entry, 404.
    const nowhere = createSessionSealer(deriveKeyRing([CLUSTER_KEY])).seal({ replica: 'r9', local: 'x', principal: 'key:alice' });
    const unknown = (await ping(r0, '00000000-0000-4000-8000-000000000000')).json;
    for (const id of [bytes.toString('base64url'), real.slice(0, -4), foreign, nowhere, '00000000-0000-4000-8000-000000000000']) {
      for (const replica of [r0, r1]) {
        const answer = await ping(replica, id);
        expect(answer.status, `${id} on ${replica.id}`).toBe(404);
        expect(answer.json).toEqual(unknown);
      }
    }
    expect((await ping(r1, real)).status).toBe(200);
  });

  it("keeps another principal's session unknown through another replica", async () => {
    const alices = await initialize(r0, ALICE);
    const mine = (await ping(r1, alices, ALICE)).json;
    expect(mine).toMatchObject({ id: 'p', result: {} });
    for (const replica of [r0, r1]) expect((await ping(replica, alices, BOB)).status).toBe(404);
    const res = await fetch(r1.mcpUrl(), { method: 'DELETE', headers: { 'mcp-session-id': alices, authorization: BOB } });
    expect(res.status).toBe(404);
    expect((await ping(r1, alices, ALICE)).status).toBe(200);
  });

  it('refuses hop headers that do not verify: none, forged, stale, another key, another request', async () => {
    const alices = await initialize(r0);
    const url = '/servers/rec/mcp';
    const principal = Buffer.from(JSON.stringify({ id: 'key:alice', kind: 'api-key', subject: 'alice', scopes: [] })).toString('base64url');
    const facts = { method: 'POST', url, sessionId: alices, principal, credential: '' };
    const ours = createHopSigner(deriveKeyRing([CLUSTER_KEY]));
    const theirs = createHopSigner(deriveKeyRing(['another-cluster-key-0123456789abcdef']));
    const attempts: Array<Record<string, string>> = [
      { 'x-switchboard-principal': principal },
      { 'x-switchboard-hop': 'v1.0.AAAA', 'x-switchboard-principal': principal },
      { 'x-switchboard-hop': ours.sign(facts, PING, Date.now() - 60_000), 'x-switchboard-principal': principal },
      { 'x-switchboard-hop': theirs.sign(facts, PING), 'x-switchboard-principal': principal },
      { 'x-switchboard-hop': ours.sign({ ...facts, method: 'DELETE' }, PING), 'x-switchboard-principal': principal },
      { 'x-switchboard-hop': ours.sign(facts, PING) },
    ];
    for (const headers of attempts) {
      // No credential of a client: a hop that verified would need none. These do not.
      const answer = await post(r0.mcpUrl(), PING, { 'mcp-session-id': alices, ...headers });
      expect(answer.status, JSON.stringify(headers)).toBe(403);
      expect(answer.json).toMatchObject({ error: { data: { code: 'GW_HOP_REFUSED' } } });
    }
    // The same request signed with the cluster key is taken as a hop (what only replicas can do).
    const signed = await post(r0.mcpUrl(), PING, { 'mcp-session-id': alices, 'x-switchboard-hop': ours.sign(facts, PING), 'x-switchboard-principal': principal });
    expect(signed.status).toBe(200);
    // The same signature with another body (a call in place of the ping): the body is covered too.
    const call = JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } });
    const tampered = await post(r0.mcpUrl(), call, { 'mcp-session-id': alices, 'x-switchboard-hop': ours.sign(facts, PING), 'x-switchboard-principal': principal });
    expect(tampered.status).toBe(403);
    expect(tampered.json).toMatchObject({ error: { data: { code: 'GW_HOP_REFUSED' } } });
    // Even a verified hop gets nothing of a session bound to another principal: the owner checks.
    const bob = Buffer.from(JSON.stringify({ id: 'key:bob', kind: 'api-key', subject: 'bob', scopes: [] })).toString('base64url');
    const asBob = await post(r0.mcpUrl(), PING, { 'mcp-session-id': alices, 'x-switchboard-hop': ours.sign({ ...facts, principal: bob }, PING), 'x-switchboard-principal': bob });
    expect(asBob.status).toBe(404);
  });
});

describe('an owner that dies', () => {
  it('answers its sessions 404 through the others at once; the client re-initializes; the others see nothing', async () => {
    // An SDK client whose session lives on r0 and which talks to r1 after initialize (a load
    // balancer's doing), a raw session on r0, and a client whose session lives on r1.
    const viaR1: typeof fetch = (input, init) => {
      const url = new URL(String(input instanceof Request ? input.url : input));
      const initialize = typeof init?.body === 'string' && init.body.includes('"method":"initialize"');
      return fetch(new URL(url.pathname + url.search, initialize ? r0.url : r1.url), init);
    };
    const doomed = new StreamableHTTPClientTransport(r0.mcpUrl(), { fetch: viaR1, requestInit: { headers: { authorization: ALICE } } });
    const app = new Client({ name: 'cluster-failures', version: '1.0.0' });
    await app.connect(doomed);
    expect(textOf(await app.callTool({ name: 'echo', arguments: { text: 'before' } }))).toBe('before');
    const onR0 = await initialize(r0);
    const onR1 = sdkClient(r1);
    await onR1.client.connect(onR1.transport);
    expect((await ping(r1, onR0)).status).toBe(200);

    await r0.kill9();
    const started = Date.now();
    const gone = await ping(r1, onR0);
    expect(gone.status).toBe(404);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(gone.json).toMatchObject({ error: { data: { code: 'GW_SESSION_NOT_FOUND' } } });

    // Still 404 once its directory entry has expired (no heartbeat), and never a hang.
    const redis = openRedis({ url: cluster.redis.url, failMode: 'local', keyPrefix: '', commandTimeoutMs: 1_000 });
    try {
      await redis.ready(10_000);
      await expect.poll(() => redis.client.exists(`switchboard:replica:${r0.id}`), { timeout: 10_000 }).toBe(0);
      expect(await redis.client.exists(`switchboard:replica:${r1.id}`)).toBe(1);
    } finally {
      await redis.close();
    }
    const later = Date.now();
    expect((await ping(r1, onR0)).status).toBe(404);
    expect(Date.now() - later).toBeLessThan(2_000);

    // The SDK client hears 404 at once, and does what an application does then: a new session
    // (initialize lands on a live replica, here r1).
    const failed = await app.callTool({ name: 'echo', arguments: { text: 'lost' } }).then(
      () => undefined,
      (err: unknown) => err as { code?: number },
    );
    expect(failed?.code).toBe(404);
    await app.close();
    const again = sdkClient(r1);
    await again.client.connect(again.transport);
    expect(textOf(await again.client.callTool({ name: 'echo', arguments: { text: 'again' } }))).toBe('again');
    // r1's own session never noticed.
    expect(textOf(await onR1.client.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe('still here');
    await again.client.close();
    await onR1.client.close();
  });
});
