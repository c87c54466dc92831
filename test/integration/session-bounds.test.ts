/**
 * Bounds on sessions that hold resources for nothing (session/limits.ts): sockets that never
 * initialize, and sessions their clients abandoned without DELETE. Real sockets, real children.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { startTestGateway } from '../support/gateway.ts';
import { openLegacyStream } from '../support/legacy-sse.ts';
import { fixture, post, rpc } from '../support/recorder.ts';
import { openWs, wsUrl, type WsPeer } from '../support/ws-client.ts';

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bounds', version: '1' } },
});

/** A misbehaving-server child tagged so that this test counts only its own children. */
function tagged(tag: string, mode = 'normal') {
  return { command: process.execPath, args: [fixture('misbehaving-server.mjs'), mode, `--tag=${tag}`] };
}

/** Living processes whose command line carries `--tag=<tag>`. */
function childrenTagged(tag: string): number {
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(`--tag=${tag}`)) count++;
    } catch {
      // gone meanwhile
    }
  }
  return count;
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

/** Resolves with the close, or 'open' if the socket is still open after `ms`. */
function closeWithin(peer: WsPeer, ms: number): Promise<{ code: number; reason: string } | 'open'> {
  return Promise.race([peer.closed, new Promise<'open'>((r) => setTimeout(() => r('open'), ms))]);
}

describe('sessions that never initialize', () => {
  it('idle WebSocket upgrades cannot fill maxSessions: a new client still initializes', async () => {
    const gw = await startTestGateway({ targets: { t: tagged(randomUUID()) }, limits: { maxSessions: 20 } });
    const peers: WsPeer[] = [];
    try {
      for (let i = 0; i < 30; i++) peers.push(await openWs(wsUrl(gw.url, '/servers/t/ws')));
      const answer = await post(gw.mcpUrl('t'), INIT);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('mcp-session-id')).toBeTruthy();
      // The oldest idle sockets were closed to make room, with a code that says why.
      const first = await closeWithin(peers[0] as WsPeer, 10_000);
      expect(first).toEqual({ code: 1008, reason: 'session not initialized in time' });
    } finally {
      for (const peer of peers) peer.socket.close();
      await gw.close();
    }
  });

  it('a WebSocket that sends no initialize is closed after the deadline', async () => {
    const gw = await startTestGateway({ targets: { t: tagged(randomUUID()) }, session: { initDeadlineMs: 500 } });
    try {
      const idle = await openWs(wsUrl(gw.url, '/servers/t/ws'));
      expect(await closeWithin(idle, 10_000)).toEqual({ code: 1008, reason: 'session not initialized in time' });
    } finally {
      await gw.close();
    }
  });

  it('a legacy SSE stream with no initialize ends after the deadline', async () => {
    const gw = await startTestGateway({ targets: { t: tagged(randomUUID()) }, session: { initDeadlineMs: 500 } });
    try {
      const stream = await openLegacyStream(new URL('/servers/t/sse', gw.url));
      const ended = await Promise.race([stream.ended.then(() => 'ended'), new Promise((r) => setTimeout(() => r('open'), 10_000))]);
      stream.close();
      expect(ended).toBe('ended');
      expect(await stream.post({ jsonrpc: '2.0', id: 1, method: 'ping' })).toBe(404);
    } finally {
      await gw.close();
    }
  });
});

/** One session-per-command client: connect, list, call, close without DELETE (what the SDK's close() does). */
async function oneCommand(url: URL): Promise<void> {
  const client = new Client({ name: 'per-command', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(url));
  await client.listTools();
  await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
  await client.close();
}

/** Past a short eviction floor (the tests set `evictIdleMs` to FLOOR_MS). */
const FLOOR_MS = 200;
const pastFloor = () => new Promise((r) => setTimeout(r, FLOOR_MS + 100));

describe('abandoned sessions', () => {
  it('live children stay within session.maxChildren: the least recently used idle session makes room', async () => {
    const tag = randomUUID();
    const gw = await startTestGateway({ targets: { t: tagged(tag) }, session: { maxChildren: 3, evictIdleMs: FLOOR_MS } });
    try {
      const first = await rpc.initialize(gw.mcpUrl('t'));
      let most = 0;
      for (let i = 0; i < 8; i++) {
        await pastFloor();
        await oneCommand(gw.mcpUrl('t'));
        most = Math.max(most, childrenTagged(tag));
      }
      // Evictions stop children in the background: wait for the count to settle, then check.
      expect(await until(() => childrenTagged(tag) <= 3)).toBe(true);
      expect(most).toBeLessThanOrEqual(4);
      // The first (least recently used) session was ended: its client learns it with a 404.
      const answer = await first.request({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(answer.status).toBe(404);
    } finally {
      await gw.close();
    }
  });

  it('children of one target stay within session.maxChildrenPerTarget; other targets keep their sessions', async () => {
    const heavy = randomUUID();
    const other = randomUUID();
    const gw = await startTestGateway({ targets: { heavy: tagged(heavy), other: tagged(other) }, session: { maxChildrenPerTarget: 2, evictIdleMs: FLOOR_MS } });
    try {
      const kept = await rpc.initialize(gw.mcpUrl('other'));
      for (let i = 0; i < 5; i++) {
        await pastFloor();
        await oneCommand(gw.mcpUrl('heavy'));
      }
      expect(await until(() => childrenTagged(heavy) <= 2)).toBe(true);
      // The other target's idle session is older than every heavy one, yet it was not ended for them.
      expect((await kept.request({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(200);
      expect(childrenTagged(other)).toBe(1);
    } finally {
      await gw.close();
    }
  });

  it('a session with a request in flight, or used within the floor, is never evicted: the new client gets GW_SESSION_LIMIT', async () => {
    const gw = await startTestGateway({ targets: { t: tagged(randomUUID()) }, session: { maxChildren: 1, evictIdleMs: 1_500 } });
    try {
      const busy = await rpc.initialize(gw.mcpUrl('t'));
      const slow = busy.request({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { ms: 2_000 } } });
      await new Promise((r) => setTimeout(r, 300));
      const refused = await post(gw.mcpUrl('t'), INIT);
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.json.error).toMatchObject({ data: { code: 'GW_SESSION_LIMIT', kind: 'children' } });
      expect((await slow).status).toBe(200);
      // Its call just ended: nothing in flight, but it was used a moment ago.
      expect((await post(gw.mcpUrl('t'), INIT)).status).toBe(503);
      // Once idle past the floor, it may be ended for the next one.
      await new Promise((r) => setTimeout(r, 1_800));
      expect((await post(gw.mcpUrl('t'), INIT)).status).toBe(200);
    } finally {
      await gw.close();
    }
  });
});
