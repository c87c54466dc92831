/**
 * Tasks (SEP-2663) through an aggregate, on both eras, against a fixture written from the SEP's
 * text (the SDKs implement the older 2025-11-25 tasks): a member's task gets a sealed id, polling
 * it reaches the member that made it (with no session on 2026), its completed result gets the
 * aggregate's URI encoding, and the id is bound to the caller. A client that did not declare the
 * extension gets -32601 for tasks/* (the removed tasks/result and tasks/list get it from everyone),
 * and a member that hands it a task anyway fails the call. Forged ids: tasks/get refuses them,
 * update and cancel acknowledge them as the SEP asks, and nothing reaches a member.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig, errorOf } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { createTestLogger } from '../support/gateway.ts';
import { modern, resultOf } from '../support/modern.ts';
import { fileURLToPath } from 'node:url';

const TASKS = fileURLToPath(new URL('../fixtures/tasks-server.mjs', import.meta.url));
const ANY = z.object({}).passthrough();
const EXT = { 'io.modelcontextprotocol/tasks': {} };
const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdef0';
const server = (env: Record<string, string> = {}) => ({ command: process.execPath, args: [TASKS], env });

let gw: RunningGateway;
const clients: Client[] = [];
beforeAll(async () => {
  const base = buildAggregateConfig({ targets: { t: server(), rogue: server({ TASKS_ROGUE: '1' }) } });
  gw = await startGateway({ ...base, auth: keyAuth({ alice: ALICE, bob: BOB }) }, { logger: createTestLogger('warn', undefined) });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await gw?.close();
});

async function sdk(key: string, tasks: boolean): Promise<Client> {
  const client = new Client({ name: 'tasks-test', version: '1' }, { capabilities: tasks ? { extensions: EXT } : {} });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', gw.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  clients.push(client);
  return client;
}

/** Polls tasks/get until the task is terminal. */
async function settle(get: (taskId: string) => Promise<Record<string, unknown>>, taskId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 50; i++) {
    const task = await get(taskId);
    expect(task.taskId).toBe(taskId);
    if (task.status !== 'working') return task;
  }
  throw new Error('the task never settled');
}

describe('tasks through an aggregate', () => {
  it('seals the task id, routes polls to its member and encodes the result (2025 session)', async () => {
    const alice = await sdk(ALICE, true);
    const created = await alice.request({ method: 'tools/call', params: { name: 't__slow_add', arguments: { a: 2, b: 3 } } }, ANY);
    expect(created.resultType).toBe('task');
    const taskId = created.taskId as string;
    expect(taskId).toMatch(/^task1\./);
    expect(taskId).not.toContain('t-1');
    const done = await settle((id) => alice.request({ method: 'tasks/get', params: { taskId: id } }, ANY), taskId);
    expect(done.status).toBe('completed');
    expect(done.result).toEqual({ content: [{ type: 'text', text: 'sum: 5' }, { type: 'resource_link', uri: 't+sums://5', name: 'sum' }] });
    expect(await alice.request({ method: 'tasks/cancel', params: { taskId } }, ANY)).toMatchObject({});
    // Another caller's poll of the same id: as unknown as a forged one.
    const bob = await sdk(BOB, true);
    const stolen = await errorOf(bob.request({ method: 'tasks/get', params: { taskId } }, ANY));
    expect(stolen.code).toBe(-32602);
    for (const forged of [`${taskId.slice(0, -2)}AA`, 't-1', 'task1.', 'x'.repeat(5000)]) {
      const err = await errorOf(alice.request({ method: 'tasks/get', params: { taskId: forged } }, ANY));
      expect(err.code, forged.slice(0, 20)).toBe(-32602);
      expect(await alice.request({ method: 'tasks/cancel', params: { taskId: forged } }, ANY)).toEqual({});
      expect(await alice.request({ method: 'tasks/update', params: { taskId: forged, inputResponses: {} } }, ANY)).toEqual({});
    }
    for (const method of ['tasks/result', 'tasks/list']) {
      expect((await errorOf(alice.request({ method, params: { taskId } }, ANY))).code, method).toBe(-32601);
    }
  });

  it('never hands a task to a client without the extension; its tasks/* do not exist', async () => {
    const plain = await sdk(ALICE, false);
    const answered = await plain.request({ method: 'tools/call', params: { name: 't__slow_add', arguments: { a: 1, b: 1 } } }, ANY);
    expect(answered.resultType).toBeUndefined();
    expect(answered.content).toEqual([{ type: 'text', text: 'sum: 2' }, { type: 'resource_link', uri: 't+sums://2', name: 'sum' }]);
    const err = await errorOf(plain.request({ method: 'tasks/get', params: { taskId: 'task1.abc' } }, ANY));
    expect(err.code).toBe(-32601);
    // A member that answers with a task anyway breaks the SEP's MUST NOT: the call fails.
    const rogue = await errorOf(plain.request({ method: 'tools/call', params: { name: 'rogue__slow_add', arguments: {} } }, ANY));
    expect(rogue.data).toMatchObject({ code: 'GW_UPSTREAM_INVALID_ANSWER', target: 'rogue' });
  });

  it('routes a task of a stateless 2026 request', async () => {
    const url = new URL('/mcp', gw.url);
    const as = { headers: { authorization: `Bearer ${ALICE}` }, meta: { 'io.modelcontextprotocol/clientCapabilities': { extensions: EXT } } };
    let id = 10;
    const created = resultOf(await modern(url, 'tools/call', { name: 't__slow_add', arguments: { a: 20, b: 22 } }, { ...as, id: id++ }));
    expect(created.resultType).toBe('task');
    const done = await settle(async (taskId) => resultOf(await modern(url, 'tasks/get', { taskId }, { ...as, id: id++ })), created.taskId as string);
    expect(done).toMatchObject({ resultType: 'complete', status: 'completed', result: { content: [{ type: 'text', text: 'sum: 42' }, { type: 'resource_link', uri: 't+sums://42', name: 'sum' }] } });
    const bob = await modern(url, 'tasks/get', { taskId: created.taskId }, { ...as, headers: { authorization: `Bearer ${BOB}` }, id: id++ });
    expect((bob.json.error as { code?: number } | undefined)?.code).toBe(-32602);
  });
});
