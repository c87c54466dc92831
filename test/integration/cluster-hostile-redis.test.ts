/**
 * Issue 30 item 1: whoever can write the cluster's Redis must not receive relayed requests or the
 * clients' credentials. Real Redis, two real replicas (r0 advertised through a recording TCP proxy,
 * so the test sees every byte of every hop to it), a real attacker listener that records what it
 * gets, and a recording HTTP upstream behind `forwardAuthorization`.
 *
 * - A hop carries no client credential in clear: not the Authorization, not a cookie, not an API
 *   key header; an endpoint whose target needs the token gets it sealed in the hop.
 * - `replica:r0` overwritten in Redis (unsigned with the attacker's URL, signed with a foreign key,
 *   r1's genuine entry copied under r0's key), again and again while r1 relays calls for r0's
 *   session: the attacker receives nothing; r1 answers 404 or relays to the real r0; r1 logs the
 *   refusal at warn, once, without the attacker's URL.
 */
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEntryCodec } from '../../src/cluster/directory-entry.ts';
import { deriveKeyRing } from '../../src/cluster/keyring.ts';
import { openRedis, type ClusterRedis } from '../../src/cluster/redis.ts';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { startCluster, type Replica, type TestCluster } from '../support/cluster.ts';
import { openLegacyStream } from '../support/legacy-sse.ts';
import { post, textOf } from '../support/recorder.ts';

const ALICE_KEY = 'alice-key-0123456789abcdef-do-not-leak';
const ALICE = `Bearer ${ALICE_KEY}`;
const COOKIE = 'sid=cookie-secret-do-not-leak';
const PING = JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' });

/** A TCP proxy in front of a replica, keeping every byte sent towards it (up to 4 MB). */
function recordingProxy(): { listen(target: number): Promise<string>; seen(): string; close(): Promise<void> } {
  let text = '';
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  return {
    async listen(target) {
      const server = createServer((client) => {
        const upstream = connect(target, '127.0.0.1');
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.once('close', () => sockets.delete(socket));
        }
        client.on('data', (chunk: Buffer) => {
          if (text.length < 4_000_000) text += chunk.toString('latin1');
        });
        client.pipe(upstream).pipe(client);
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
      });
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    },
    seen: () => text,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      for (const server of servers) await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** What an attacker's listener got: every request, headers and all. */
function attackerListener() {
  const got: Array<{ method: string; url: string; headers: IncomingHttpHeaders }> = [];
  const server = createHttpServer((request, response) => {
    got.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers });
    request.resume();
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 'p', result: { pwned: true } }));
  });
  return {
    got,
    url: () => `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    listen: () => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

let cluster: TestCluster;
let r0: Replica;
let r1: Replica;
let remote: HttpFixture;
let redis: ClusterRedis;
const proxy = recordingProxy();
const attacker = attackerListener();

beforeAll(async () => {
  remote = await startHttpFixture({ getStream: false });
  await attacker.listen();
  cluster = await startCluster({
    replicas: 2,
    gateway: { auth: { apiKeys: [{ name: 'alice', key: ALICE_KEY }] } },
    mcpServers: { fwd: { type: 'http', url: remote.url, forwardAuthorization: true, protocol: '2025' } },
    // r0 is reached by the others through the proxy: every hop to it is recorded.
    advertise: async (id, url) => (id === 'r0' ? proxy.listen(Number(new URL(url).port)) : url),
  });
  [r0, r1] = cluster.replicas as [Replica, Replica];
  redis = openRedis({ url: cluster.redis.url, failMode: 'local', keyPrefix: 'switchboard:', commandTimeoutMs: 1_000 });
  await redis.ready(10_000);
}, 120_000);
afterAll(async () => {
  await redis?.close();
  await cluster?.stop();
  await proxy.close();
  await attacker.close();
  await remote?.close();
});

async function initialize(replica: Replica, path: string): Promise<string> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  const answer = await post(replica.mcpUrl(path), body, { authorization: ALICE });
  expect(answer.status).toBe(200);
  const id = answer.headers.get('mcp-session-id') as string;
  await post(replica.mcpUrl(path), JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { authorization: ALICE, 'mcp-session-id': id });
  return id;
}

describe('what a hop carries', () => {
  it('no client credential in clear; a target that needs the token gets it sealed', async () => {
    const plain = await initialize(r0, '/servers/rec/mcp');
    const before = proxy.seen().length;
    const answer = await post(r1.mcpUrl(), PING, { 'mcp-session-id': plain, authorization: ALICE, cookie: COOKIE });
    expect(answer.status).toBe(200);
    const hop = proxy.seen().slice(before);
    expect(hop).toContain('x-switchboard-hop');
    expect(hop).not.toContain(ALICE_KEY);
    expect(hop).not.toContain('cookie-secret');
    expect(hop.toLowerCase()).not.toMatch(/\r\n(authorization|cookie|x-switchboard-credential):/);

    // forwardAuthorization: the owner needs the caller's token; it rides sealed, the upstream gets it.
    const forwarded = await initialize(r0, '/servers/fwd/mcp');
    const from = proxy.seen().length;
    const call = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'headers', arguments: {} } });
    const relayed = await post(r1.mcpUrl('/servers/fwd/mcp'), call, { 'mcp-session-id': forwarded, authorization: ALICE, cookie: COOKIE });
    expect(relayed.status).toBe(200);
    expect((JSON.parse(textOf(relayed.json.result)) as Record<string, string>).authorization).toBe(ALICE);
    const sealedHop = proxy.seen().slice(from);
    expect(sealedHop.toLowerCase()).toContain('x-switchboard-credential:');
    expect(sealedHop).not.toContain(ALICE_KEY);
    expect(sealedHop).not.toContain('cookie-secret');
  });
});

describe('what a hop carries, on the other relayed paths', () => {
  it('the aggregate /mcp, DELETE and a legacy SSE POST carry no client credential either', async () => {
    const aggregate = await initialize(r0, '/mcp');
    const before = proxy.seen().length;
    expect((await post(r1.mcpUrl('/mcp'), PING, { 'mcp-session-id': aggregate, authorization: ALICE, cookie: COOKIE })).status).toBe(200);
    const deleted = await fetch(r1.mcpUrl('/mcp'), { method: 'DELETE', headers: { 'mcp-session-id': aggregate, authorization: ALICE, cookie: COOKIE } });
    expect(deleted.status).toBeLessThan(300);
    const stream = await openLegacyStream(r0.mcpUrl('/servers/rec/sse'), { authorization: ALICE });
    try {
      const messages = new URL(stream.endpoint.pathname + stream.endpoint.search, r1.url);
      const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } } };
      const res = await fetch(messages, { method: 'POST', headers: { 'content-type': 'application/json', authorization: ALICE, cookie: COOKIE }, body: JSON.stringify(init) });
      await res.arrayBuffer();
      expect(res.status).toBe(202);
      expect(await stream.nextMessage()).toMatchObject({ id: 1 });
    } finally {
      stream.close();
    }
    const hops = proxy.seen().slice(before);
    // Three hops went through the proxy (POST, DELETE, legacy POST), none with a credential.
    expect(hops.match(/x-switchboard-hop:/gi)?.length).toBe(3);
    expect(hops).not.toContain(ALICE_KEY);
    expect(hops).not.toContain('cookie-secret');
  });
});

describe('a hostile write of the directory', () => {
  it('sends nothing to the URL an unsigned, foreign or moved entry names', async () => {
    const session = await initialize(r0, '/servers/rec/mcp');
    const foreign = createEntryCodec(deriveKeyRing(['attacker-guessed-key-0123456789abcdef']), 'switchboard:', 1_500);
    const r1Entry = await redis.client.get('switchboard:replica:r1');
    expect(r1Entry).not.toBeNull();
    const forgeries = [
      JSON.stringify({ url: attacker.url(), draining: false }),
      foreign.write('r0', { url: attacker.url(), draining: false }),
      // r1's genuine, signed entry copied under r0's key: a real replica's URL, not r0's.
      r1Entry as string,
    ];
    const statuses: number[] = [];
    for (const forged of forgeries) {
      // Overwrite faster than r0's heartbeat (500 ms) and r1's lookup cache (500 ms) can undo it.
      let writing = true;
      const writer = (async () => {
        while (writing) {
          await redis.client.set('switchboard:replica:r0', forged, 'PX', 60_000);
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      try {
        for (let i = 0; i < 15; i++) {
          const answer = await post(r1.mcpUrl(), PING, { 'mcp-session-id': session, authorization: ALICE });
          statuses.push(answer.status);
          expect(answer.text).not.toContain('pwned');
          await new Promise((resolve) => setTimeout(resolve, 40));
        }
      } finally {
        writing = false;
        await writer;
      }
    }
    expect(attacker.got).toEqual([]);
    // Every answer is the real owner's or the unknown session's 404; never r1 serving it itself.
    expect(statuses.every((status) => status === 200 || status === 404)).toBe(true);
    expect(statuses).toContain(404);
    // r0 beats again: its own entry is back and the session is served through r1.
    await redis.client.del('switchboard:replica:r0');
    await expect.poll(async () => (await post(r1.mcpUrl(), PING, { 'mcp-session-id': session, authorization: ALICE })).status, { timeout: 10_000 }).toBe(200);
    // Logged at warn, bounded (once a minute per replica id), without the URL the entry named.
    const refusals = r1.log().split('\n').filter((line) => line.includes('refused a cluster directory entry'));
    expect(refusals.length).toBe(1);
    expect(JSON.parse(refusals[0] as string)).toMatchObject({ level: 40, replica: 'r0' });
    expect(r1.log()).not.toContain(attacker.url());
    expect(r0.log() + r1.log()).not.toContain(ALICE_KEY);
  });
});
