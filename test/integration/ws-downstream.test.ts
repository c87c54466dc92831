/**
 * The WebSocket downstream at the frame level: handshake (subprotocol, Origin), framing errors,
 * ordering of related messages, close codes, keep-alive, backpressure, and what a closing socket
 * does to the upstream. The SDK client's view of the same transport is in test/contract/.
 */
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { rawWebSocket } from '../support/raw-ws.ts';
import { recorderServer, type Recorded } from '../support/recorder.ts';
import { initializeWs, openWs, wsUrl } from '../support/ws-client.ts';

/** Polls `check` until it holds (event-driven where we can; here the gateway's state is remote). */
async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function sessions(gw: TestGateway): Promise<number> {
  const res = await fetch(new URL('/readyz', gw.url));
  return ((await res.json()) as { sessions: number }).sessions;
}

const call = (id: unknown, name: string, args: Record<string, unknown> = {}, meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});

describe('WebSocket downstream', () => {
  it('echoes the mcp subprotocol, on the short path and the per-target path', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() } });
    try {
      for (const path of ['/ws', '/servers/rec/ws']) {
        const peer = await openWs(wsUrl(gw.url, path), 'mcp');
        expect(peer.socket.protocol).toBe('mcp');
        const answer = await initializeWs(peer);
        expect(answer).toMatchObject({ id: 'init', result: { serverInfo: { name: 'recorder' } } });
        peer.socket.close();
        await peer.closed;
      }
      // A client that asks for no subprotocol still connects.
      const bare = await openWs(wsUrl(gw.url, '/ws'), []);
      expect(bare.socket.protocol).toBe('');
      bare.socket.close();
    } finally {
      await gw.close();
    }
  });

  it('answers a plain GET (no upgrade) with 426 and an envelope', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() } });
    try {
      const res = await fetch(new URL('/servers/rec/ws', gw.url));
      expect(res.status).toBe(426);
      expect(res.headers.get('upgrade')).toBe('websocket');
      expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'GW_UPGRADE_REQUIRED' } } });
    } finally {
      await gw.close();
    }
  });

  it('refuses the upgrade from a foreign Origin with 403', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() } });
    try {
      await expect(rawWebSocket(wsUrl(gw.url, '/ws'), { Origin: 'http://evil.example' })).rejects.toThrow(/403/);
      const ok = await rawWebSocket(wsUrl(gw.url, '/ws'), { Origin: 'http://localhost:3000' });
      expect(ok.head).toMatch(/sec-websocket-protocol: mcp/i);
      ok.socket.destroy();
    } finally {
      await gw.close();
    }
  });

  it('closes with 1003 on a binary frame, and answers malformed JSON with -32700 on an open socket', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() } });
    try {
      const peer = await openWs(wsUrl(gw.url, '/ws'));
      await initializeWs(peer);
      peer.socket.send('{"jsonrpc":"2.0",');
      expect(await peer.next()).toMatchObject({ id: null, error: { code: -32700, data: { code: 'GW_PARSE_ERROR' } } });
      peer.socket.send(JSON.stringify({ jsonrpc: '2.0', id: 3 }));
      expect(await peer.next()).toMatchObject({ id: 3, error: { code: -32600 } });
      peer.send(call(4, 'echo', { text: 'still open' }));
      expect(await peer.next()).toMatchObject({ id: 4, result: { content: [{ text: 'still open' }] } });
      peer.socket.send(new Uint8Array([1, 2, 3]));
      expect((await peer.closed).code).toBe(1003);
      await eventually(async () => (await sessions(gw)) === 0);
    } finally {
      await gw.close();
    }
  });

  it('closes with 1009 on a frame larger than limits.maxBodyBytes', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() }, limits: { maxBodyBytes: 1024 } });
    try {
      const peer = await openWs(wsUrl(gw.url, '/ws'));
      peer.send({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(2048) } });
      expect((await peer.closed).code).toBe(1009);
    } finally {
      await gw.close();
    }
  });

  it('sends progress frames before the answer, in order', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() } });
    try {
      const peer = await openWs(wsUrl(gw.url, '/ws'));
      await initializeWs(peer);
      peer.send(call('p', 'slow', { ms: 200, steps: 4 }, { progressToken: 'tok' }));
      const frames = await peer.until('p');
      expect(frames.map((f) => (f.method === undefined ? 'answer' : (f.params as { progress: number }).progress))).toEqual([1, 2, 3, 4, 'answer']);
      expect((frames[0]?.params as { progressToken: unknown }).progressToken).toBe('tok');
      peer.socket.close();
    } finally {
      await gw.close();
    }
  });

  it('sends no answer for a call the client cancelled, and forwards the cancel upstream', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() } });
    try {
      const peer = await openWs(wsUrl(gw.url, '/ws'));
      await initializeWs(peer);
      // No progress token: the call's stream has sent nothing yet when the cancel comes.
      peer.send(call('long', 'slow', { ms: 20_000 }));
      peer.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long', reason: 'no longer needed' } });
      peer.send(call('history', 'history'));
      const frames = await peer.until('history');
      expect(frames.filter((f) => f.id === 'long')).toEqual([]);
      const upstream = JSON.parse((frames.at(-1)?.result as { content: Array<{ text: string }> }).content[0]!.text) as Recorded[];
      const forwarded = upstream.find((m) => m.method === 'tools/call');
      expect(upstream.find((m) => m.method === 'notifications/cancelled')?.params).toMatchObject({ requestId: forwarded?.id });
      peer.socket.close();
    } finally {
      await gw.close();
    }
  });

  it('keeps many concurrent calls with the same ids on two sockets apart', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() } });
    try {
      const [a, b] = await Promise.all([openWs(wsUrl(gw.url, '/ws')), openWs(wsUrl(gw.url, '/ws'))]);
      await Promise.all([initializeWs(a), initializeWs(b)]);
      for (let i = 0; i < 50; i++) {
        a.send(call(i, 'echo', { text: `a${i}` }));
        b.send(call(i, 'echo', { text: `b${i}` }));
      }
      for (const [peer, tag] of [[a, 'a'], [b, 'b']] as const) {
        const seen = new Map<unknown, string>();
        while (seen.size < 50) {
          const frame = await peer.next();
          seen.set(frame.id, (frame.result as { content: Array<{ text: string }> }).content[0]!.text);
        }
        for (let i = 0; i < 50; i++) expect(seen.get(i)).toBe(`${tag}${i}`);
      }
      a.socket.close();
      b.socket.close();
    } finally {
      await gw.close();
    }
  });

  it('fails the call in flight when the upstream crashes, then closes with 1011', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() } });
    try {
      const peer = await openWs(wsUrl(gw.url, '/ws'));
      await initializeWs(peer);
      peer.send(call(9, 'crash'));
      expect(await peer.next()).toMatchObject({ id: 9, error: { data: { code: 'GW_UPSTREAM_EXITED' } } });
      expect((await peer.closed).code).toBe(1011);
    } finally {
      await gw.close();
    }
  });

  it('cancels upstream what was in flight when the socket closes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-ws-'));
    const record = join(dir, 'received.ndjson');
    const rec = { ...recorderServer(), args: [...(recorderServer().args ?? []), `--record-to=${record}`] };
    const gw = await startTestGateway({ targets: { rec } });
    try {
      const peer = await openWs(wsUrl(gw.url, '/ws'));
      await initializeWs(peer);
      peer.send(call(42, 'slow', { ms: 20_000, steps: 20 }, { progressToken: 1 }));
      // The first progress proves the call reached the upstream.
      expect(await peer.next()).toMatchObject({ method: 'notifications/progress' });
      peer.socket.close();
      const seen = await eventually(() => {
        if (!existsSync(record)) return undefined;
        const lines = readFileSync(record, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Recorded);
        return lines.some((m) => m.method === 'notifications/cancelled') ? lines : undefined;
      });
      const upstreamCall = seen.find((m) => m.method === 'tools/call');
      const cancel = seen.find((m) => m.method === 'notifications/cancelled');
      expect(cancel?.params).toMatchObject({ requestId: upstreamCall?.id, reason: expect.stringMatching(/Session ended: WebSocket closed/) });
      await eventually(async () => (await sessions(gw)) === 0);
    } finally {
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a socket past the session limit with an error frame and 1013', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() }, limits: { maxSessions: 1 } });
    try {
      // An initialized socket is a session in use (its stream is open): never ended for room.
      const first = await openWs(wsUrl(gw.url, '/ws'));
      await initializeWs(first);
      const second = await openWs(wsUrl(gw.url, '/ws'));
      expect(await second.next()).toMatchObject({ id: null, error: { data: { code: 'GW_SESSION_LIMIT' } } });
      expect((await second.closed).code).toBe(1013);
      first.socket.close();
    } finally {
      await gw.close();
    }
  });

  it('on shutdown lets the call in flight finish, then closes with 1001', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() }, shutdownGraceMs: 5_000 });
    const peer = await openWs(wsUrl(gw.url, '/ws'));
    await initializeWs(peer);
    peer.send(call(1, 'slow', { ms: 400, steps: 2 }, { progressToken: 1 }));
    // The first progress proves the call is in flight upstream before the shutdown starts.
    expect(await peer.next()).toMatchObject({ method: 'notifications/progress' });
    const closing = gw.close();
    const frames = await peer.until(1);
    expect(frames.at(-1)).toMatchObject({ id: 1, result: { content: [{ text: 'done' }] } });
    expect((await peer.closed).code).toBe(1001);
    await closing;
  });

  it('drops a socket that misses a pong and ends its session', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() }, websocket: { pingIntervalMs: 150 } });
    try {
      // A raw client never answers a ping (it reads and drops what comes, pings included).
      const raw = await rawWebSocket(wsUrl(gw.url, '/ws'));
      raw.socket.resume();
      expect(await sessions(gw)).toBe(1);
      await raw.closed;
      await eventually(async () => (await sessions(gw)) === 0);
      // A real client answers pings and stays.
      const peer = await openWs(wsUrl(gw.url, '/ws'));
      await initializeWs(peer);
      // Several ping intervals pass on purpose: a client that answers pings must outlive them.
      await new Promise((r) => setTimeout(r, 600));
      peer.send(call(1, 'echo', { text: 'alive' }));
      expect(await peer.next()).toMatchObject({ id: 1, result: { content: [{ text: 'alive' }] } });
      peer.socket.close();
    } finally {
      await gw.close();
    }
  });

  it('closes a socket whose reader stopped reading once its buffer passes the limit (1013), with a log line', async () => {
    const logLines: string[] = [];
    const gw = await startTestGateway({ targets: { rec: recorderServer() }, websocket: { maxBufferedBytes: 64 * 1024 }, logLines });
    try {
      const raw = await rawWebSocket(wsUrl(gw.url, '/ws'));
      raw.sendText(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'slow', version: '1' } } }));
      raw.sendText(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      const big = 'x'.repeat(512 * 1024);
      for (let i = 1; i <= 40; i++) raw.sendText(JSON.stringify(call(i, 'echo', { text: big })));
      await eventually(() => logLines.find((l) => l.includes('reader too slow')));
      const line = JSON.parse(logLines.find((l) => l.includes('reader too slow'))!) as { maxBufferedBytes: number; bufferedBytes: number };
      expect(line.bufferedBytes).toBeGreaterThan(64 * 1024);
      await eventually(async () => (await sessions(gw)) === 0);
      // The TCP connection goes too: the close frame sits unread behind the backlog, and the
      // gateway drops the connection when the peer does not answer it.
      raw.socket.resume();
      await raw.closed;
    } finally {
      await gw.close();
    }
  });
});
