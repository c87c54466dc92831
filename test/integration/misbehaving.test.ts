/**
 * Misbehaving upstreams behind the gateway: each gets a prompt JSON-RPC error (never a hang), the
 * gateway keeps serving, and no process is left behind.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestTarget } from '../support/gateway.ts';
import { descendantsOf, isAlive, readStat, waitUntilGone } from '../support/processes.ts';
import { fixture, post, recorderServer, rpc, textOf } from '../support/recorder.ts';

const open: TestGateway[] = [];

function misbehaving(mode: string, extra: Partial<TestTarget> = {}, ...args: string[]): TestTarget {
  return { command: process.execPath, args: [fixture('misbehaving-server.mjs'), mode, ...args], ...extra };
}

async function gateway(target: TestTarget, logLines?: string[]): Promise<TestGateway> {
  const gw = await startTestGateway({ targets: { bad: target }, ...(logLines ? { logLines } : {}) });
  open.push(gw);
  return gw;
}

const call = (id: number | string, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

afterEach(async () => {
  for (const gw of open.splice(0)) await gw.close();
  // Nothing this test process spawned may survive the gateway.
  expect(await waitUntilGone(descendantsOf(process.pid), 5_000)).toEqual([]);
});

describe('misbehaving upstreams', () => {
  it('crash mid-call: the pending call fails at once with exit code and stderr, then the session is gone (404)', async () => {
    const gw = await gateway(misbehaving('crash-mid-call', { stderrInErrors: true }));
    const session = await rpc.initialize(gw.mcpUrl());
    const started = Date.now();
    const answer = await session.request(call(1, 'echo', { text: 'x' }));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({
      id: 1,
      error: { code: -32603, data: { code: 'GW_UPSTREAM_EXITED', target: 'bad', exitCode: 3 } },
    });
    expect(JSON.stringify((answer.json.error as { data: unknown }).data)).toContain('about to crash');
    const next = await session.request(call(2, 'echo'));
    expect(next.status).toBe(404);
  });

  it('crash mid-call with onExit "restart": the next call reaches a fresh child', async () => {
    const gw = await gateway(
      misbehaving('normal', { restart: { onExit: 'restart', maxRestarts: 2, initialBackoffMs: 50, maxBackoffMs: 100 } }),
    );
    const session = await rpc.initialize(gw.mcpUrl());
    const crashed = await session.request(call(1, 'crash', { code: 5 }));
    expect(crashed.json).toMatchObject({ id: 1, error: { data: { code: 'GW_UPSTREAM_EXITED', exitCode: 5 } } });
    const after = await session.request(call(2, 'echo', { text: 'back' }));
    expect(after.json).toMatchObject({ id: 2, result: { content: [{ text: 'back' }] } });
  });

  it('after a restart, nothing reaches the new child before its handshake', async () => {
    const base = recorderServer();
    const gw = await gateway({
      ...base,
      args: [...(base.args ?? []), '--init-delay-ms=400'],
      restart: { onExit: 'restart', maxRestarts: 2, initialBackoffMs: 10, maxBackoffMs: 10 },
    });
    const session = await rpc.initialize(gw.mcpUrl());
    const crashed = await session.request(call(1, 'crash', { code: 4 }));
    expect(crashed.json).toMatchObject({ error: { data: { code: 'GW_UPSTREAM_EXITED', exitCode: 4 } } });
    // Sent while the new child is in its (400 ms) handshake, after the 10 ms backoff: it must wait.
    await new Promise((r) => setTimeout(r, 150));
    const seen = await session.history();
    expect(seen.map((m) => m.method)).toEqual(['initialize', 'notifications/initialized']);
  });

  it('crash mid-call without stderrInErrors: the client sees the exit code and a correlation id, never the stderr', async () => {
    const logLines: string[] = [];
    const gw = await gateway(misbehaving('crash-mid-call'), logLines);
    const session = await rpc.initialize(gw.mcpUrl());
    const answer = await session.request(call(1, 'echo', { text: 'x' }));
    const data = (answer.json.error as { data: Record<string, unknown> }).data;
    expect(data).toEqual({ code: 'GW_UPSTREAM_EXITED', target: 'bad', exitCode: 3, signal: null, correlationId: expect.any(String) });
    expect(answer.text).not.toContain('about to crash');
    expect(logLines.some((l) => l.includes(String(data.correlationId)) && l.includes('about to crash'))).toBe(true);
  });

  it('exit during initialize: initialize gets the error, no session is created, the SDK client fails fast', async () => {
    const gw = await gateway(misbehaving('exit-during-init', { stderrInErrors: true }));
    const answer = await post(
      gw.mcpUrl(),
      JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('mcp-session-id')).toBeNull();
    expect(answer.json).toMatchObject({ id: 'init', error: { code: -32603, data: { code: 'GW_UPSTREAM_EXITED', exitCode: 1 } } });
    expect(JSON.stringify(answer.json)).toContain('init failed: bad config');

    const client = new Client({ name: 'x', version: '1' });
    await expect(client.connect(new StreamableHTTPClientTransport(gw.mcpUrl()))).rejects.toThrow(/exited/);
  });

  it('spawn failure: a clear error naming the target and the reason', async () => {
    const gw = await gateway({ command: '/nonexistent/definitely-not-here' });
    const answer = await post(
      gw.mcpUrl(),
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    );
    expect(answer.json).toMatchObject({ id: 1, error: { code: -32603, data: { code: 'GW_UPSTREAM_SPAWN_FAILED', target: 'bad' } } });
    expect(JSON.stringify(answer.json)).toMatch(/ENOENT/);
  });

  it('never answers: GW_UPSTREAM_TIMEOUT after the configured timeout', async () => {
    const gw = await gateway(misbehaving('never-answer', { timeouts: { requestMs: 300, resetOnProgress: true, maxTotalMs: 0 } }));
    const session = await rpc.initialize(gw.mcpUrl());
    const started = Date.now();
    const answer = await session.request(call(1, 'echo'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(answer.json).toMatchObject({ id: 1, error: { code: -32603, data: { code: 'GW_UPSTREAM_TIMEOUT', target: 'bad' } } });
  });

  it('garbage on stdout is skipped and answers still arrive', async () => {
    const gw = await gateway(misbehaving('garbage-stdout'));
    const session = await rpc.initialize(gw.mcpUrl());
    for (let i = 0; i < 5; i++) {
      const answer = await session.request(call(i, 'echo', { text: `t${i}` }));
      expect(answer.json).toMatchObject({ id: i, result: { content: [{ text: `t${i}` }] } });
    }
  });

  it('a huge line fails just that call, promptly, and the session stays usable', async () => {
    const gw = await gateway(misbehaving('normal', { maxMessageBytes: 1024 * 1024 }));
    const session = await rpc.initialize(gw.mcpUrl());
    const answer = await session.request(call(1, 'huge', { bytes: 8 * 1024 * 1024 }));
    expect(answer.json).toMatchObject({ id: 1, error: { code: -32603, data: { code: 'GW_UPSTREAM_MESSAGE_TOO_LARGE', target: 'bad' } } });
    const ok = await session.request(call(2, 'echo', { text: 'alive' }));
    expect(ok.json).toMatchObject({ id: 2, result: { content: [{ text: 'alive' }] } });
  });

  it('large answers (scanned at the envelope, not parsed whole) reach the client whole, with its id exact', async () => {
    const gw = await gateway(misbehaving('normal', { maxMessageBytes: 4 * 1024 * 1024 }));
    const session = await rpc.initialize(gw.mcpUrl());
    const bytes = 1024 * 1024;
    for (const [id, shape] of [['client "id" é', 'id-first'], [7, 'id-last'], [0, 'id-first']] as const) {
      const answer = await session.request(call(id, 'huge', { bytes, shape }));
      expect(answer.json).toMatchObject({ jsonrpc: '2.0', id, result: { content: [{ type: 'text' }] } });
      expect(textOf(answer.json.result)).toBe('x'.repeat(textOf(answer.json.result).length));
      expect(textOf(answer.json.result).length).toBeGreaterThan(bytes - 100);
    }
    // A big integer id is restored digit for digit, in the raw body.
    const raw = await session.postRaw('{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"huge","arguments":{"bytes":1048576}}}');
    expect(raw.text.startsWith('{"jsonrpc":"2.0","id":12345678901234567890,"result":')).toBe(true);
  });

  it('a flood of notifications reaches the client on the call stream, in order, before the answer', async () => {
    const gw = await gateway(misbehaving('flood-notifications', {}, '--count=500'));
    const session = await rpc.initialize(gw.mcpUrl());
    const answer = await session.request(call(1, 'echo', { text: 'after the flood' }));
    expect(answer.contentType).toContain('text/event-stream');
    const logs = answer.events.filter((m) => m.method === 'notifications/message');
    expect(logs).toHaveLength(500);
    expect(answer.json).toMatchObject({ id: 1, result: { content: [{ text: 'after the flood' }] } });
  });

  it('ignores SIGTERM: DELETE still gets rid of it (SIGKILL after the grace)', async () => {
    const gw = await gateway(misbehaving('ignore-sigterm', { shutdownGraceMs: 200 }));
    const session = await rpc.initialize(gw.mcpUrl());
    const children = descendantsOf(process.pid);
    expect(children.length).toBeGreaterThan(0);
    expect(await session.delete()).toBe(200);
    expect(await waitUntilGone(children, 3_000)).toEqual([]);
  });

  it('spawns a grandchild: ending the session kills the whole process group', async () => {
    const logLines: string[] = [];
    const gw = await gateway(misbehaving('spawn-grandchild'), logLines);
    const session = await rpc.initialize(gw.mcpUrl());
    let grandchild = 0;
    for (let i = 0; i < 50 && grandchild === 0; i++) {
      const line = logLines.find((l) => l.includes('grandchild-pid='));
      if (line) grandchild = Number(/grandchild-pid=(\d+)/.exec(line)![1]);
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(grandchild).toBeGreaterThan(0);
    expect(isAlive(grandchild)).toBe(true);
    await session.delete();
    expect(await waitUntilGone([grandchild], 3_000)).toEqual([]);
  });

  it('spawns a grandchild that calls setsid: ending the session kills it too', async () => {
    const logLines: string[] = [];
    const gw = await gateway(misbehaving('spawn-escaping-grandchild'), logLines);
    const session = await rpc.initialize(gw.mcpUrl());
    const grandchild = await pidFromLog(logLines);
    expect(isAlive(grandchild)).toBe(true);
    // It left the group: what a group signal reaches no longer covers it.
    expect(readStat(grandchild)?.pgrp).toBe(grandchild);
    await session.delete();
    expect(await waitUntilGone([grandchild], 5_000)).toEqual([]);
  });

  it('the gateway keeps serving other sessions while one upstream crashes', async () => {
    const gw = await gateway(misbehaving('normal'));
    const steady = await rpc.initialize(gw.mcpUrl());
    const doomed = await rpc.initialize(gw.mcpUrl());
    const crash = doomed.request(call(1, 'crash', { code: 9 }));
    const ok = await steady.request(call(1, 'echo', { text: 'steady' }));
    expect(ok.json).toMatchObject({ result: { content: [{ text: 'steady' }] } });
    expect((await crash).json).toMatchObject({ error: { data: { code: 'GW_UPSTREAM_EXITED', exitCode: 9 } } });
    expect(textOf((await steady.request(call(2, 'echo', { text: 'still' }))).json.result)).toBe('still');
  });
});

async function pidFromLog(logLines: string[]): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const line = logLines.find((l) => l.includes('grandchild-pid='));
    if (line) return Number(/grandchild-pid=(\d+)/.exec(line)?.[1]);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the fixture never logged its grandchild pid');
}
