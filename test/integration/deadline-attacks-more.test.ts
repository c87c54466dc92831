/**
 * More attacks on request deadlines (the correlator's timeouts, whichever timers keep them), on
 * the paths and scales test/integration/deadline-attacks.test.ts leaves out: two thousand calls in
 * flight on one WebSocket answering in random order beside calls that time out, a timeout on the
 * 2026 stateless path and on legacy SSE, and the gateway process ending on SIGTERM with hung calls
 * whose deadlines are minutes away, a virtual server's call, and a progress flood against
 * `maxTotalMs`, and a `tasks/get` to a hung server. Order and counts are asserted, never milliseconds.
 */
import { describe, expect, it } from 'vitest';
import { createTestLogger, startTestGateway, type TestTarget } from '../support/gateway.ts';
import { fixture, rpc } from '../support/recorder.ts';
import { openWs, wsUrl } from '../support/ws-client.ts';
import { modern } from '../support/modern.ts';
import { openLegacyStream } from '../support/legacy-sse.ts';
import { endpointsOf, initializeAt, post, start, useCliProcesses, writeConfig } from '../support/cli.ts';
import { DEFAULT_BREAKER_POLICY } from '../../src/upstream/circuit-breaker.ts';
import { parseConfig } from '../../src/config/load.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import { errorOf, startAggregateGateway } from '../support/aggregate.ts';
import { startGateway } from '../../src/main.ts';

useCliProcesses();

function deadlineServer(requestMs: number): TestTarget {
  return {
    command: process.execPath,
    args: [fixture('deadline-server.mjs')],
    timeouts: { requestMs, resetOnProgress: true, maxTotalMs: 0 },
    circuitBreaker: { ...DEFAULT_BREAKER_POLICY, timeouts: 0 },
  };
}

const call = (id: string | number, name: string, args: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'dl', version: '1' } } };

describe('deadlines at scale and on the other wires', () => {
  it('two thousand calls answering out of order on one socket each get their own answer; the hung ones time out', async () => {
    const gw = await startTestGateway({ targets: { dl: deadlineServer(4_000) }, limits: { maxInflightPerSession: 5_000 } });
    try {
      const peer = await openWs(wsUrl(gw.url, '/servers/dl/ws'));
      peer.send(initialize);
      await peer.until(0);
      peer.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const total = 2_200;
      for (let i = 1; i <= total; i++) {
        // Every eleventh call never answers; the others answer after 0-300 ms, in no particular order.
        peer.send(i % 11 === 0 ? call(i, 'hang') : call(i, 'wait', { ms: (i * 7919) % 300, tag: `t${i}` }));
      }
      const answers = new Map<unknown, Record<string, unknown>>();
      while (answers.size < total) {
        const frame = await peer.next();
        if ('id' in frame && !('method' in frame)) {
          expect(answers.has(frame.id)).toBe(false);
          answers.set(frame.id, frame);
        }
      }
      for (let i = 1; i <= total; i++) {
        if (i % 11 === 0) expect(answers.get(i)).toMatchObject({ error: { data: { code: 'GW_UPSTREAM_TIMEOUT' } } });
        else expect(answers.get(i), JSON.stringify(answers.get(i))).toMatchObject({ result: { content: [{ text: `t${i}` }] } });
      }
      peer.send(call('after', 'wait', { ms: 1, tag: 'alive' }));
      expect((await peer.until('after')).at(-1)).toMatchObject({ result: { content: [{ text: 'alive' }] } });
      peer.socket.close();
      await peer.closed;
    } finally {
      await gw.close();
    }
  });

  it('2026 stateless: a call times out with GW_UPSTREAM_TIMEOUT while a quick one answers', async () => {
    const gw = await startTestGateway({ targets: { dl: deadlineServer(500) } });
    try {
      const [hung, quick] = await Promise.all([
        modern(gw.mcpUrl('dl'), 'tools/call', { name: 'hang', arguments: {} }, { id: 'h' }),
        modern(gw.mcpUrl('dl'), 'tools/call', { name: 'wait', arguments: { ms: 10, tag: 'ok' } }, { id: 'q' }),
      ]);
      expect(quick.json, quick.text).toMatchObject({ id: 'q', result: { content: [{ text: 'ok' }] } });
      expect(hung.json, hung.text).toMatchObject({ id: 'h', error: { data: { code: 'GW_UPSTREAM_TIMEOUT' } } });
    } finally {
      await gw.close();
    }
  });

  it('legacy SSE: calls time out on the stream in deadline order, and the stream keeps serving', async () => {
    const gw = await startTestGateway({ targets: { dl: deadlineServer(500) } });
    try {
      const stream = await openLegacyStream(new URL('/servers/dl/sse', gw.url));
      expect(await stream.post(initialize)).toBe(202);
      expect(await stream.nextMessage()).toMatchObject({ id: 0, result: {} });
      expect(await stream.post({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBe(202);
      expect(await stream.post(call('h1', 'hang'))).toBe(202);
      expect(await stream.post(call('w', 'wait', { ms: 800, tag: 'too late' }))).toBe(202);
      const seen: Array<Record<string, unknown>> = [];
      while (seen.length < 2) seen.push(await stream.nextMessage());
      expect(seen.map((m) => m.id)).toEqual(['h1', 'w']);
      for (const m of seen) expect(m).toMatchObject({ error: { data: { code: 'GW_UPSTREAM_TIMEOUT' } } });
      expect(await stream.post(call('q', 'wait', { ms: 1, tag: 'fine' }))).toBe(202);
      expect(await stream.nextMessage()).toMatchObject({ id: 'q', result: { content: [{ text: 'fine' }] } });
      stream.close();
    } finally {
      await gw.close();
    }
  });

  it('SIGTERM with hung calls whose deadlines are minutes away: the process ends within its grace', async () => {
    const path = await writeConfig(
      'deadlines.json',
      JSON.stringify({
        mcpServers: { dl: { command: process.execPath, args: [fixture('deadline-server.mjs')], timeoutMs: 600_000 } },
        gateway: { shutdownGraceMs: 500 },
      }),
    );
    const running = start(['--config', path, '--port', '0']);
    const endpoints = await endpointsOf(running);
    const url = endpoints.find((e) => e.endsWith('/servers/dl/mcp'))!;
    const sessionId = await initializeAt(url);
    await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId);
    const hung = Array.from({ length: 50 }, (_, i) => post(url, call(i, 'hang'), sessionId).then((r) => r.text(), () => 'closed'));
    // Every call reached the child before the signal.
    const history = async () => JSON.parse(((await (await post(url, call('hist', 'history'), sessionId)).json()) as { result: { content: Array<{ text: string }> } }).result.content[0]!.text) as Array<{ method?: string }>;
    while ((await history()).filter((m) => m.method === 'tools/call').length < 51) await new Promise((r) => setTimeout(r, 20));
    running.child.kill('SIGTERM');
    const exit = await running.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    const bodies = await Promise.all(hung);
    expect(bodies).toHaveLength(50);
  });

  it("a virtual server's renamed tool times out like its target's, naming the target", async () => {
    const config = parseConfig({
      mcpServers: { dl: { command: process.execPath, args: [fixture('deadline-server.mjs')], timeoutMs: 500, circuitBreaker: { timeouts: 0 } } },
      gateway: { port: 0, logging: { level: 'silent' }, virtualServers: { kit: { tools: [{ server: 'dl', tool: 'hang', as: 'stall' }, { server: 'dl', tool: 'wait' }] } } },
    });
    const gw = await startGateway(config, { logger: createTestLogger('silent', undefined) });
    try {
      const session = await rpc.initialize(new URL('/virtual/kit/mcp', gw.url));
      const [hung, quick] = await Promise.all([session.request(call(1, 'stall')), session.request(call(2, 'wait', { ms: 5, tag: 'ok' }))]);
      expect(quick.json, quick.text).toMatchObject({ id: 2, result: { content: [{ text: 'ok' }] } });
      expect(hung.json, hung.text).toMatchObject({ id: 1, error: { data: { code: 'GW_UPSTREAM_TIMEOUT', target: 'dl', timeoutMs: 500 } } });
      await session.delete();
    } finally {
      await gw.close();
    }
  });

  it('a flood of progress cannot carry a call past maxTotalMs, and a quiet call beside it still times out', async () => {
    const target = { ...deadlineServer(400), timeouts: { requestMs: 400, resetOnProgress: true, maxTotalMs: 900 } };
    const gw = await startTestGateway({ targets: { dl: target } });
    try {
      const session = await rpc.initialize(gw.mcpUrl('dl'));
      const flood = { jsonrpc: '2.0', id: 'f', method: 'tools/call', params: { name: 'progress-hang', arguments: { every: 0, count: 3_000 }, _meta: { progressToken: 'pf' } } };
      const [flooded, quiet] = await Promise.all([session.request(flood), session.request(call('q', 'hang'))]);
      expect(quiet.json).toMatchObject({ id: 'q', error: { data: { code: 'GW_UPSTREAM_TIMEOUT' } } });
      expect(flooded.json).toMatchObject({ id: 'f', error: { data: { code: 'GW_UPSTREAM_TIMEOUT' } } });
      const ms = Number(/within (\d+) ms/.exec((flooded.json.error as { message: string }).message)?.[1]);
      expect(ms).toBeGreaterThanOrEqual(880);
      expect(flooded.events.filter((m) => m.method === 'notifications/progress').length).toBeGreaterThan(50);
      await session.delete();
    } finally {
      await gw.close();
    }
  });

  it('tasks/get (aggregate /mcp) to a member that never answers times out at its deadline; the other member still serves', async () => {
    const tasks = { ...deadlineServer(500), args: [fixture('tasks-server.mjs')] };
    const gw = await startAggregateGateway({ targets: { t: { ...tasks, env: { TASKS_HANG_GET: '1' } }, u: tasks } });
    const client = new Client({ name: 'tasks', version: '1' }, { capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', gw.url)));
      const any = z.object({}).passthrough();
      const created = await client.request({ method: 'tools/call', params: { name: 't__slow_add', arguments: { a: 1, b: 2 } } }, any);
      expect(typeof created.taskId, JSON.stringify(created)).toBe('string');
      const err = await errorOf(client.request({ method: 'tasks/get', params: { taskId: created.taskId } }, any));
      expect(err.data).toMatchObject({ code: 'GW_UPSTREAM_TIMEOUT', target: 't', method: 'tasks/get' });
      const other = await client.request({ method: 'tools/call', params: { name: 'u__slow_add', arguments: { a: 2, b: 2 } } }, any);
      const polled = await client.request({ method: 'tasks/get', params: { taskId: other.taskId } }, any);
      expect(polled.taskId).toBe(other.taskId);
    } finally {
      await client.close();
      await gw.close();
    }
  });
});
