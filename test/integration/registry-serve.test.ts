/**
 * `gateway.registry.serve`: the gateway lists what it fronts in the registry API's shape, per
 * caller (two API-key principals, a policy), behind authentication and the Host check; and
 * `switchboard registry add` pointed at the gateway itself writes an entry that serves.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyRule } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { serverListSchema, serverResponseSchema } from '../../src/registry/server-json.ts';
import { buildAggregateConfig, colliderServer } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { run, tempPath, useCliProcesses } from '../support/cli.ts';
import { createTestLogger } from '../support/gateway.ts';
import { rawRequest } from '../support/raw-http.ts';

useCliProcesses();

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdef0';
const rule = (r: Partial<PolicyRule>): PolicyRule => ({ effect: 'allow', principals: ['*'], scopes: [], claims: {}, servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'], ...r });

let guarded: RunningGateway;
let open: RunningGateway;

beforeAll(async () => {
  const base = buildAggregateConfig({ targets: { col: colliderServer(), other: colliderServer(), hidden: colliderServer() } });
  const registry = { serve: true, namespace: 'com.example.gw' };
  const policy = { rules: [rule({ principals: ['key:alice'], servers: ['col', 'other'] }), rule({ principals: ['key:bob'], servers: ['other'] })] };
  guarded = await startGateway({ ...base, auth: keyAuth({ alice: ALICE, bob: BOB }), policy, registry }, { logger: createTestLogger('error', undefined) });
  open = await startGateway({ ...buildAggregateConfig({ targets: { col: colliderServer() } }), registry: { serve: true, namespace: 'local.switchboard' } }, { logger: createTestLogger('error', undefined) });
});

afterAll(async () => {
  await guarded?.close();
  await open?.close();
});

const get = (gw: RunningGateway, path: string, headers: Record<string, string> = {}) => fetch(new URL(path, gw.url), { headers });
const as = (key: string) => ({ authorization: `Bearer ${key}` });

describe('GET /v0.1/servers on the gateway', () => {
  it('lists, per caller, only the servers the policy lets it reach, as remotes at the gateway', async () => {
    const alice = serverListSchema.parse(await (await get(guarded, '/v0.1/servers', as(ALICE))).json());
    expect(alice.servers.map((s) => s.server.name)).toEqual(['com.example.gw/col', 'com.example.gw/other']);
    expect(alice.servers[0]?.server.remotes).toEqual([
      { type: 'streamable-http', url: new URL('/servers/col/mcp', guarded.url).href },
      { type: 'sse', url: new URL('/servers/col/sse', guarded.url).href },
    ]);
    const bob = serverListSchema.parse(await (await get(guarded, '/v0.1/servers', as(BOB))).json());
    expect(bob.servers.map((s) => s.server.name)).toEqual(['com.example.gw/other']);
  });

  it('a server the caller may not reach is the same 404 as one never configured', async () => {
    const denied = await get(guarded, `/v0.1/servers/${encodeURIComponent('com.example.gw/col')}/versions/latest`, as(BOB));
    const unknown = await get(guarded, `/v0.1/servers/${encodeURIComponent('com.example.gw/nope')}/versions/latest`, as(BOB));
    expect(denied.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(await denied.text()).toBe(await unknown.text());
    const allowed = await get(guarded, `/v0.1/servers/${encodeURIComponent('com.example.gw/other')}/versions/latest`, as(BOB));
    expect(serverResponseSchema.parse(await allowed.json()).server.name).toBe('com.example.gw/other');
  });

  it('needs a credential, refuses a bad one and a foreign Host, and pages with search, limit and cursor', async () => {
    expect((await get(guarded, '/v0.1/servers')).status).toBe(401);
    expect((await get(guarded, '/v0.1/servers', as('not-a-key-0123456789abcdef'))).status).toBe(401);
    const port = new URL(guarded.url).port;
    for (const host of [`evil.example:${port}`, `localhost.evil.example:${port}`]) {
      const rebinding = await rawRequest(new URL(guarded.url), 'GET', '/v0.1/servers', { Host: host, ...as(ALICE) });
      expect(rebinding.status, host).toBe(403);
      expect(rebinding.body).not.toContain('com.example.gw');
    }
    const first = serverListSchema.parse(await (await get(guarded, '/v0.1/servers?limit=1', as(ALICE))).json());
    expect(first.servers.map((s) => s.server.name)).toEqual(['com.example.gw/col']);
    expect(first.metadata?.nextCursor).toBe('col');
    const second = serverListSchema.parse(await (await get(guarded, '/v0.1/servers?limit=1&cursor=col', as(ALICE))).json());
    expect(second.servers.map((s) => s.server.name)).toEqual(['com.example.gw/other']);
    expect(second.metadata?.nextCursor).toBeUndefined();
    const searched = serverListSchema.parse(await (await get(guarded, '/v0.1/servers?search=oth', as(ALICE))).json());
    expect(searched.servers.map((s) => s.server.name)).toEqual(['com.example.gw/other']);
    expect((await get(guarded, '/v0.1/servers?limit=1000', as(ALICE))).status).toBe(400);
  });

  it('is not served unless configured', async () => {
    const plain = await startGateway(buildAggregateConfig({ targets: { col: colliderServer() } }), { logger: createTestLogger('error', undefined) });
    try {
      expect((await get(plain, '/v0.1/servers')).status).toBe(404);
    } finally {
      await plain.close();
    }
  });

  it('switchboard registry add reads it: the entry written points back at the gateway', async () => {
    const config = tempPath('from-gateway.yaml');
    const result = await run(['registry', 'add', 'local.switchboard/col', '--config', config, '--registry', open.url]);
    expect(result.code, result.stderr).toBe(0);
    expect(await readFile(config, 'utf8')).toContain(`url: ${new URL('/servers/col/mcp', open.url).href}`);
  });
});
