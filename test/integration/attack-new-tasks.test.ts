/**
 * Attacks on SEP-2663 tasks through an aggregate (issue 33): another principal cancels a task that
 * is still working (acknowledged with `{}` as the SEP asks, but the task must go on), on a 2025
 * session and with a 2026 request; a task sealed on `/mcp` polled through a group that does not
 * hold its member. Real gateway, children of the tasks fixture (written from the SEP's text), SDK
 * clients.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { createTestLogger } from '../support/gateway.ts';
import { modern } from '../support/modern.ts';
import { fileURLToPath } from 'node:url';

const TASKS = fileURLToPath(new URL('../fixtures/tasks-server.mjs', import.meta.url));
const ANY = z.object({}).passthrough();
const EXT = { 'io.modelcontextprotocol/tasks': {} };
const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef0' };

let gw: RunningGateway;
const clients: Client[] = [];
beforeAll(async () => {
  const server = { command: process.execPath, args: [TASKS] };
  const base = buildAggregateConfig({ targets: { t: server, u: server }, groups: { g: ['u'] } });
  gw = await startGateway({ ...base, auth: keyAuth(KEYS) }, { logger: createTestLogger('warn', undefined) });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await gw?.close();
});

async function sdk(key: string, path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'attacker', version: '1' }, { capabilities: { extensions: EXT } });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, gw.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  clients.push(client);
  return client;
}

describe("attack: another caller's task", () => {
  it("bob's cancel of alice's working task is acknowledged and changes nothing (2025 session and 2026 request)", async () => {
    const alice = await sdk(KEYS.alice);
    const created = await alice.request({ method: 'tools/call', params: { name: 't__slow_add', arguments: { a: 20, b: 22 } } }, ANY);
    const taskId = created.taskId as string;
    expect(taskId).toMatch(/^task1\./);
    const bob = await sdk(KEYS.bob);
    expect(await bob.request({ method: 'tasks/cancel', params: { taskId } }, ANY)).toEqual({});
    const stateless = await modern(new URL('/mcp', gw.url), 'tasks/cancel', { taskId }, { headers: { authorization: `Bearer ${KEYS.bob}` }, meta: { 'io.modelcontextprotocol/clientCapabilities': { extensions: EXT } } });
    expect(stateless.json.error, stateless.text).toBeUndefined();
    let last: Record<string, unknown> = {};
    for (let i = 0; i < 20; i++) {
      last = await alice.request({ method: 'tasks/get', params: { taskId } }, ANY);
      if (last.status !== 'working') break;
    }
    expect(last.status).toBe('completed');
    expect(JSON.stringify(last.result)).toContain('sum: 42');
  });

  it('a task sealed on /mcp is no task on a group that does not hold its member', async () => {
    const alice = await sdk(KEYS.alice);
    const created = await alice.request({ method: 'tools/call', params: { name: 't__slow_add', arguments: { a: 1, b: 2 } } }, ANY);
    const taskId = created.taskId as string;
    const group = await sdk(KEYS.alice, '/groups/g/mcp');
    const answer = await group.request({ method: 'tasks/get', params: { taskId } }, ANY).then((r) => JSON.stringify(r), (err: unknown) => `error ${String(err)}`);
    expect(answer).toMatch(/^error/);
    expect(answer).not.toContain('sum: 3');
    const stateless = await modern(new URL('/groups/g/mcp', gw.url), 'tasks/get', { taskId }, { headers: { authorization: `Bearer ${KEYS.alice}` }, meta: { 'io.modelcontextprotocol/clientCapabilities': { extensions: EXT } } });
    expect(stateless.json.result, stateless.text).toBeUndefined();
  });
});
