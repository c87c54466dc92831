/**
 * Drain on SIGTERM (issue 24 item 7): a replica with calls in flight, some of them forwarded to
 * it by another replica, answers every one of them; meanwhile it says `draining` on /readyz (503)
 * and in the directory, refuses new sessions with 503 so a load balancer tries elsewhere, and
 * still serves its own sessions, through the other replica too. Then it leaves the directory and
 * its sessions get 404.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRedis } from '../../src/cluster/redis.ts';
import { startCluster, type Replica, type TestCluster } from '../support/cluster.ts';
import { post, textOf } from '../support/recorder.ts';

let cluster: TestCluster;
let r0: Replica;
let r1: Replica;

beforeAll(async () => {
  cluster = await startCluster({ replicas: 2, gateway: { shutdownGraceMs: 20_000 } });
  [r0, r1] = cluster.replicas as [Replica, Replica];
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

/** An SDK client whose session is on r0; `through` carries everything after initialize. */
async function clientOnR0(through: Replica): Promise<Client> {
  const route: typeof fetch = (input, init) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    const initialize = typeof init?.body === 'string' && init.body.includes('"method":"initialize"');
    return fetch(new URL(url.pathname + url.search, initialize ? r0.url : through.url), init);
  };
  const client = new Client({ name: 'cluster-drain', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(r0.mcpUrl(), { fetch: route }));
  return client;
}

describe('SIGTERM of a replica with calls in flight', () => {
  it('answers all 20 (10 forwarded by another replica), refuses new sessions, then leaves', async () => {
    const clients = await Promise.all(Array.from({ length: 4 }, (_, i) => clientOnR0(i % 2 === 0 ? r0 : r1)));
    const spare = await post(r0.mcpUrl(), INIT);
    const spareId = spare.headers.get('mcp-session-id') as string;
    let started = 0;
    let allStarted!: () => void;
    const inFlight = new Promise<void>((resolve) => (allStarted = resolve));
    const calls = Array.from({ length: 20 }, (_, i) => {
      let first = true;
      return (clients[i % 4] as Client).callTool({ name: 'slow', arguments: { ms: 3_000, steps: 3 } }, undefined, {
        timeout: 60_000,
        onprogress: () => {
          if (first && ++started === 20) allStarted();
          first = false;
        },
      });
    });
    await inFlight;

    const exit = r0.terminate();
    await expect.poll(async () => (await fetch(new URL('/readyz', r0.url))).status, { timeout: 10_000 }).toBe(503);
    expect(await (await fetch(new URL('/readyz', r0.url))).json()).toEqual({ status: 'draining' });
    const redis = openRedis({ url: cluster.redis.url, failMode: 'local', keyPrefix: '', commandTimeoutMs: 1_000 });
    try {
      await redis.ready(10_000);
      expect(JSON.parse((await redis.client.get(`switchboard:replica:${r0.id}`)) ?? '{}')).toMatchObject({ url: r0.url, draining: true });
      // A new session is refused with 503 (a load balancer retries it elsewhere); r1 takes it.
      const refused = await post(r0.mcpUrl(), INIT);
      expect(refused.status).toBe(503);
      expect(refused.json).toMatchObject({ error: { data: { code: 'GW_SHUTTING_DOWN' } } });
      expect((await post(r1.mcpUrl(), INIT)).status).toBe(200);
      // Its own sessions are still served, directly and through r1.
      const ping = JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' });
      expect((await post(r1.mcpUrl(), ping, { 'mcp-session-id': spareId })).status).toBe(200);

      const results = await Promise.all(calls);
      expect(results.map(textOf)).toEqual(Array(20).fill('done'));
      expect(await exit).toBe(0);
      expect(await redis.client.exists(`switchboard:replica:${r0.id}`)).toBe(0);
      expect((await post(r1.mcpUrl(), ping, { 'mcp-session-id': spareId })).status).toBe(404);
    } finally {
      await redis.close();
      for (const client of clients) await client.close().catch(() => undefined);
    }
  });
});
