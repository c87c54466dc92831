/**
 * Each user's own upstream account across replicas (issue 32): with `gateway.cluster` the vault
 * lives in Redis, sealed, so an account connected through one replica serves that principal's
 * calls on the other, and Redis holds neither a token nor a principal's name. Two real replicas
 * (own processes), real Redis, a second oidc-provider as the upstream's authorization server and
 * the protected SDK upstream (test/fixtures/protected-upstream.ts).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProtectedUpstream, type ProtectedUpstream } from '../fixtures/protected-upstream.ts';
import { startCluster, type Replica, type TestCluster } from '../support/cluster.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';

const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef' };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'oauth-cluster', version: '1' } } };

let as: AuthorizationServer;
let upstream: ProtectedUpstream;
let cluster: TestCluster;

async function connectThrough(replica: Replica, who: keyof typeof KEYS, account: string): Promise<void> {
  const res = await fetch(replica.mcpUrl('/servers/docs/mcp'), { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${KEYS[who]}` }, body: JSON.stringify(INIT) });
  const answer = (await res.json()) as { error: { data: { code: string; authorizationUrl: string } } };
  expect(answer.error.data.code).toBe('GW_UPSTREAM_AUTH_REQUIRED');
  const back = await as.consent(answer.error.data.authorizationUrl, account);
  expect(back.origin).toBe(new URL(replica.url).origin);
  expect((await fetch(back)).status).toBe(200);
}

async function whoami(replica: Replica, who: keyof typeof KEYS, path = '/servers/docs/mcp', tool = 'whoami'): Promise<string> {
  const client = new Client({ name: 'oauth-cluster', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(replica.mcpUrl(path), { requestInit: { headers: { authorization: `Bearer ${KEYS[who]}` } } }));
  try {
    const result = await client.callTool({ name: tool, arguments: {} });
    return (result.content as Array<{ text: string }>)[0]!.text;
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  as = await startAuthorizationServer({ refreshTokens: true });
  upstream = await startProtectedUpstream(as);
  cluster = await startCluster({
    replicas: 2,
    gateway: {
      auth: { apiKeys: Object.entries(KEYS).map(([name, key]) => ({ name, key })) },
      oauth: { key: 'vault-key-for-tests-0123456789abcdefghij' },
    },
    mcpServers: { docs: { type: 'http', url: upstream.url, oauth: { perUser: true } } },
  });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  await upstream?.close();
  await as?.close();
});

describe("each user's own account across replicas", () => {
  it('an account connected through one replica serves its principal on the other; Redis holds no token and no name', async () => {
    const [r0, r1] = cluster.replicas as [Replica, Replica];
    await connectThrough(r0, 'alice', 'alice-upstream');
    await connectThrough(r1, 'bob', 'bob-upstream');
    expect(await whoami(r1, 'alice')).toBe('alice-upstream');
    expect(await whoami(r0, 'bob')).toBe('bob-upstream');
    expect(await whoami(r0, 'alice', '/mcp', 'docs__whoami')).toBe('alice-upstream');
    expect(await whoami(r1, 'bob', '/mcp', 'docs__whoami')).toBe('bob-upstream');

    const redis = new Redis(cluster.redis.url);
    try {
      const keys = await redis.keys('*vault:*');
      expect(keys.length).toBeGreaterThanOrEqual(2);
      const values = (await redis.mget(...keys)).join('\n') + keys.join('\n');
      const tokens = [...new Set(upstream.seen.map((h) => h.replace(/^Bearer /, '')))];
      expect(tokens.length).toBeGreaterThanOrEqual(2);
      for (const token of tokens) {
        expect(values).not.toContain(token);
        for (const replica of cluster.replicas) expect(replica.log()).not.toContain(token);
      }
      expect(values).not.toMatch(/alice|bob/);
    } finally {
      redis.disconnect();
    }
  });
});
