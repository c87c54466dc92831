/**
 * Session lifecycle: idle reaping, graceful shutdown with in-flight work, health endpoints.
 */
import { describe, expect, it } from 'vitest';
import { startTestGateway } from '../support/gateway.ts';
import { descendantsOf, waitUntilGone } from '../support/processes.ts';
import { fixture, recorderServer, rpc } from '../support/recorder.ts';

const slowCall = (id: number, ms: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow', arguments: { ms } } });

describe('idle reaping', () => {
  it('ends a session idle past its TTL and kills its child; the next request gets 404', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() }, session: { idleTtlMs: 300 } });
    try {
      const session = await rpc.initialize(gw.mcpUrl());
      const children = descendantsOf(process.pid);
      expect(children.length).toBe(1);
      await new Promise((r) => setTimeout(r, 900));
      expect(await waitUntilGone(children, 2_000)).toEqual([]);
      const answer = await session.request({ jsonrpc: '2.0', id: 1, method: 'ping' });
      expect(answer.status).toBe(404);
    } finally {
      await gw.close();
    }
  });

  it('does not reap a session while its upstream is still starting', async () => {
    const slowStart = { ...recorderServer() };
    slowStart.args = [...(slowStart.args ?? []), '--init-delay-ms=900'];
    const gw = await startTestGateway({ targets: { rec: slowStart }, session: { idleTtlMs: 200 } });
    try {
      // Reaped during the handshake, initialize would answer GW_UPSTREAM_CLOSED and no session id.
      const session = await rpc.initialize(gw.mcpUrl());
      expect(session.id).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await gw.close();
    }
  });

  it('gives a slow-starting server more than the per-request timeout to answer initialize', async () => {
    const slowStart = { ...recorderServer(), timeouts: { requestMs: 200, resetOnProgress: true, maxTotalMs: 0 } };
    slowStart.args = [...(slowStart.args ?? []), '--init-delay-ms=700'];
    const gw = await startTestGateway({ targets: { rec: slowStart } });
    try {
      const session = await rpc.initialize(gw.mcpUrl());
      // Requests after the handshake keep the target's own short timeout.
      const answer = await session.request(slowCall(1, 600));
      expect(answer.json).toMatchObject({ id: 1, error: { data: { code: 'GW_UPSTREAM_TIMEOUT', timeoutMs: 200 } } });
    } finally {
      await gw.close();
    }
  });

  it('counts idle time from the end of the last request, not its start', async () => {
    // The sweep runs every 250 ms here. The call outlasts the TTL; 600 ms after it ends the session
    // must still be there (idle <= 850 ms < TTL), though its last request *started* 2.1 s ago.
    const gw = await startTestGateway({ targets: { rec: recorderServer() }, session: { idleTtlMs: 1_000 } });
    try {
      const session = await rpc.initialize(gw.mcpUrl());
      await session.request(slowCall(1, 1_500));
      await new Promise((r) => setTimeout(r, 600));
      const answer = await session.request({ jsonrpc: '2.0', id: 2, method: 'ping' });
      expect(answer.status).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it('does not reap a session while a request is in flight', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() }, session: { idleTtlMs: 200 } });
    try {
      const session = await rpc.initialize(gw.mcpUrl());
      const answer = await session.request(slowCall(1, 800));
      expect(answer.json).toMatchObject({ id: 1, result: { content: [{ text: 'done' }] } });
    } finally {
      await gw.close();
    }
  });
});

describe('graceful shutdown', () => {
  it('lets in-flight requests finish, then kills every child; new work is refused', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() }, shutdownGraceMs: 3_000 });
    const session = await rpc.initialize(gw.mcpUrl());
    // An open standalone GET stream must not hold shutdown up.
    const get = await fetch(gw.mcpUrl(), { headers: { accept: 'text/event-stream', 'mcp-session-id': session.id } });
    expect(get.status).toBe(200);
    const children = descendantsOf(process.pid);
    const inflight = session.request(slowCall(1, 500));
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    const closing = gw.close();
    const answer = await inflight;
    expect(answer.json).toMatchObject({ id: 1, result: { content: [{ text: 'done' }] } });
    await closing;
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(await waitUntilGone(children, 2_000)).toEqual([]);
    await expect(fetch(gw.mcpUrl(), { method: 'POST' })).rejects.toThrow();
  });

  it('stops waiting at the deadline: a request that never ends gets an error, and the child dies', async () => {
    const gw = await startTestGateway({
      targets: { bad: { command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'never-answer'] } },
      shutdownGraceMs: 300,
    });
    const session = await rpc.initialize(gw.mcpUrl());
    const children = descendantsOf(process.pid);
    const inflight = session.request({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: {} } });
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await gw.close();
    expect(Date.now() - started).toBeLessThan(3_000);
    const answer = await inflight;
    expect(answer.json).toMatchObject({ id: 7, error: { code: -32603, data: { code: 'GW_UPSTREAM_CLOSED' } } });
    expect(await waitUntilGone(children, 2_000)).toEqual([]);
  });
});

describe('health', () => {
  it('answers /healthz and /readyz', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() } });
    try {
      const live = await fetch(new URL('/healthz', gw.url));
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: 'ok' });
      const ready = await fetch(new URL('/readyz', gw.url));
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ready', sessions: 0 });
    } finally {
      await gw.close();
    }
  });
});
