/**
 * Shared upstream mode (`upstream: { mode: shared, children: N }`) with real children: the recorder
 * fixture reports its pid and every message it received, so these tests see that sessions share
 * children, that ids never cross, and how initialize, broadcasts, server->client requests,
 * cancellation, progress and a crash are handled.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { isAlive, waitUntilGone } from '../support/processes.ts';
import { post, recorderServer, rpc, textOf, type RawSession, type Recorded } from '../support/recorder.ts';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

async function start(children: number, extra: { onExit?: 'end' | 'restart' } = {}): Promise<TestGateway> {
  gw = await startTestGateway({
    targets: {
      rec: {
        ...recorderServer(),
        upstream: { mode: 'shared', children },
        restart: { onExit: extra.onExit ?? 'end', maxRestarts: 3, initialBackoffMs: 50, maxBackoffMs: 200 },
      },
    },
  });
  return gw;
}

const call = (session: RawSession, id: string | number, name: string, args: Record<string, unknown> = {}) =>
  session.request({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

async function pidOf(session: RawSession): Promise<number> {
  return (JSON.parse(textOf((await call(session, 'who', 'whoami')).json.result)) as { pid: number }).pid;
}

/** Reads a GET stream until `match` finds a message; resolves with it. */
async function waitOnStream(url: URL, sessionId: string, match: (m: Recorded) => boolean): Promise<{ found: Promise<Recorded> }> {
  const res = await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } });
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const found = (async () => {
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended without the message; got: ${text}`);
      text += decoder.decode(value, { stream: true });
      for (const line of text.split('\n')) {
        if (!line.startsWith('data:') || line.length < 7) continue;
        const message = JSON.parse(line.slice(5)) as Recorded;
        if (match(message)) {
          await reader.cancel();
          return message;
        }
      }
    }
  })();
  return { found };
}

describe('shared upstream mode', () => {
  it('50 sessions share 2 children; ids never cross; one handshake per child; children outlive sessions until the last', async () => {
    const g = await start(2);
    const sessions = await Promise.all(Array.from({ length: 50 }, () => rpc.initialize(g.mcpUrl())));
    const pids = await Promise.all(sessions.map(pidOf));
    const distinct = [...new Set(pids)];
    expect(distinct).toHaveLength(2);
    for (const pid of distinct) expect(pids.filter((p) => p === pid)).toHaveLength(25);
    for (const pid of distinct) expect(isAlive(pid)).toBe(true);

    // Every session uses the same client id at the same time; each gets its own answer back.
    const answers = await Promise.all(sessions.map((s, i) => call(s, 'same-id', 'echo', { text: `session-${i}` })));
    answers.forEach((a, i) => {
      expect(a.json.id).toBe('same-id');
      expect(textOf(a.json.result)).toBe(`session-${i}`);
    });

    // What each child saw: one initialize and one notifications/initialized, and only unique ids.
    for (const pid of distinct) {
      const session = sessions[pids.indexOf(pid)] as RawSession;
      const history = await session.history();
      expect(history.filter((m) => m.method === 'initialize')).toHaveLength(1);
      expect(history.filter((m) => m.method === 'notifications/initialized')).toHaveLength(1);
      const ids = history.filter((m) => m.method !== undefined && m.id !== undefined).map((m) => m.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(history.filter((m) => m.method === 'tools/call' && (m.params?.arguments as { text?: string } | undefined)?.text?.startsWith('session-'))).toHaveLength(25);
    }

    // Ending sessions does not close a child that others still use...
    const keep = distinct.map((pid) => sessions[pids.indexOf(pid)] as RawSession);
    await Promise.all(sessions.filter((s) => !keep.includes(s)).map((s) => s.delete()));
    for (const session of keep) expect(textOf((await call(session, 1, 'echo', { text: 'still here' })).json.result)).toBe('still here');
    expect(distinct.filter(isAlive)).toHaveLength(2);
    // ...and the last session on a child closes it.
    await (keep[0] as RawSession).delete();
    expect(await waitUntilGone([distinct[0] as number], 10_000)).toEqual([]);
    expect(isAlive(distinct[1] as number)).toBe(true);
    await (keep[1] as RawSession).delete();
    expect(await waitUntilGone([distinct[1] as number], 10_000)).toEqual([]);
  });

  it('answers each initialize itself, negotiating the version per session', async () => {
    const g = await start(1);
    const init = async (protocolVersion: string) => {
      const answer = await post(
        g.mcpUrl(),
        JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
      );
      expect(answer.status).toBe(200);
      expect(answer.headers.get('mcp-session-id')).toBeTruthy();
      return answer.json;
    };
    const newest = await init('2025-11-25');
    const older = await init('2025-03-26');
    const unknown = await init('2099-01-01');
    expect(newest.id).toBe('init');
    expect((newest.result as { protocolVersion: string }).protocolVersion).toBe('2025-11-25');
    expect((older.result as { protocolVersion: string }).protocolVersion).toBe('2025-03-26');
    expect((unknown.result as { protocolVersion: string }).protocolVersion).toBe('2025-11-25');
    // The child's own capabilities and server info reach every session.
    expect(older.result).toMatchObject({ capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'recorder' } });
  });

  it('sends list_changed to every session on the child', async () => {
    const g = await start(1);
    const [a, b, c] = await Promise.all([rpc.initialize(g.mcpUrl()), rpc.initialize(g.mcpUrl()), rpc.initialize(g.mcpUrl())]);
    const isChanged = (m: Recorded) => m.method === 'notifications/tools/list_changed';
    const onB = await waitOnStream(g.mcpUrl(), (b as RawSession).id, isChanged);
    const onC = await waitOnStream(g.mcpUrl(), (c as RawSession).id, isChanged);
    // The streams are attached once the gateway answered their GET; only then notify.
    expect(textOf((await call(a as RawSession, 1, 'notify-changed')).json.result)).toBe('notified');
    expect((await onB.found).method).toBe('notifications/tools/list_changed');
    expect((await onC.found).method).toBe('notifications/tools/list_changed');
  });

  it('routes a server->client request to the one busy session, and refuses it when two are busy', async () => {
    const g = await start(1);
    const client = new Client({ name: 'roots-client', version: '1' }, { capabilities: { roots: {} } });
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///only-me', name: 'mine' }] }));
    await client.connect(new StreamableHTTPClientTransport(g.mcpUrl()));
    const attributed = await client.callTool({ name: 'ask-client', arguments: { method: 'roots/list', id: 'srv-a' } });
    expect(JSON.parse(textOf(attributed))).toMatchObject({ id: 'srv-a', result: { roots: [{ uri: 'file:///only-me' }] } });

    // Another session keeps a request in flight on the same child: nobody can tell whose it is.
    const other = await rpc.initialize(g.mcpUrl());
    const slow = call(other, 'slow-1', 'slow', { ms: 3_000 });
    await expect.poll(async () => (await other.history()).some((m) => m.id !== undefined && m.method === 'tools/call' && (m.params as { name?: string }).name === 'slow')).toBe(true);
    const refused = JSON.parse(textOf(await client.callTool({ name: 'ask-client', arguments: { method: 'roots/list', id: 'srv-b' } }))) as Recorded;
    expect(refused.id).toBe('srv-b');
    expect(refused.error).toMatchObject({ code: -32603, data: { code: 'GW_SERVER_REQUEST_UNATTRIBUTABLE', method: 'roots/list' } });
    expect(textOf((await slow).json.result)).toBe('done');
    await client.close();
  });

  it('routes progress by upstream id and cancels only the cancelled session request', async () => {
    const g = await start(1);
    const [a, b] = await Promise.all([rpc.initialize(g.mcpUrl()), rpc.initialize(g.mcpUrl())]) as [RawSession, RawSession];
    const slowWithProgress = (s: RawSession, token: string) =>
      s.request({ jsonrpc: '2.0', id: 'p', method: 'tools/call', params: { name: 'slow', arguments: { ms: 200, steps: 3 }, _meta: { progressToken: token } } });
    const [pa, pb] = await Promise.all([slowWithProgress(a, 'tok-a'), slowWithProgress(b, 'tok-b')]);
    for (const [answer, token] of [[pa, 'tok-a'], [pb, 'tok-b']] as const) {
      const progress = answer.events.filter((e) => e.method === 'notifications/progress');
      expect(progress).toHaveLength(3);
      for (const p of progress) expect(p.params?.progressToken).toBe(token);
      expect(answer.json.id).toBe('p');
    }

    const cancelled = a.request({ jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'slow', arguments: { ms: 1_500 } } });
    const kept = b.request({ jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'slow', arguments: { ms: 1_500 } } });
    await expect.poll(async () => (await b.history()).filter((m) => (m.params as { name?: string } | undefined)?.name === 'slow').length).toBe(4);
    const note = await a.request({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c', reason: 'test' } });
    expect(note.status).toBe(202);
    expect((await cancelled).json.error).toMatchObject({ data: { code: 'GW_REQUEST_CANCELLED' } });
    expect(textOf((await kept).json.result)).toBe('done');
    const history = await b.history();
    const slowCalls = history.filter((m) => (m.params as { name?: string } | undefined)?.name === 'slow' && m.id !== undefined).slice(-2);
    const cancels = history.filter((m) => m.method === 'notifications/cancelled');
    expect(cancels).toHaveLength(1);
    expect(slowCalls.map((m) => m.id)).toContain(cancels[0]?.params?.requestId);
  });

  it('a crashed child ends its sessions only; the next session gets a new child', async () => {
    const g = await start(2);
    const sessions = await Promise.all(Array.from({ length: 4 }, () => rpc.initialize(g.mcpUrl())));
    const pids = await Promise.all(sessions.map(pidOf));
    const victim = pids[0] as number;
    await call(sessions[0] as RawSession, 'x', 'crash', { code: 3 });
    expect(await waitUntilGone([victim], 10_000)).toEqual([]);
    for (const [i, session] of sessions.entries()) {
      if (pids[i] === victim) {
        await expect.poll(async () => (await call(session, 'after', 'echo', { text: 'hi' })).status).toBe(404);
      } else {
        expect(textOf((await call(session, 'after', 'echo', { text: 'hi' })).json.result)).toBe('hi');
      }
    }
    const fresh = await rpc.initialize(g.mcpUrl());
    const freshPid = await pidOf(fresh);
    expect(freshPid).not.toBe(victim);
    expect(isAlive(freshPid)).toBe(true);
  });

  it('a crashed shared child never shows one session\'s stderr text in another session\'s error', async () => {
    const g = await start(1);
    const [a, b] = await Promise.all([rpc.initialize(g.mcpUrl()), rpc.initialize(g.mcpUrl())]);
    expect(textOf((await call(a as RawSession, 'w', 'stderr', { text: 'request text of session A' })).json.result)).toBe('written');
    const pending = call(b as RawSession, 'slow', 'slow', { ms: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await call(a as RawSession, 'x', 'crash', { code: 3 });
    const failed = await pending;
    expect(failed.json).toMatchObject({ id: 'slow', error: { data: { code: 'GW_UPSTREAM_EXITED', exitCode: 3, correlationId: expect.any(String) } } });
    expect(failed.text).not.toContain('session A');
    expect((failed.json.error as { data: Record<string, unknown> }).data).not.toHaveProperty('stderr');
  });

  it('with onExit: restart, the sessions of a crashed child carry on on a new child', async () => {
    const g = await start(1, { onExit: 'restart' });
    const [a, b] = (await Promise.all([rpc.initialize(g.mcpUrl()), rpc.initialize(g.mcpUrl())])) as [RawSession, RawSession];
    const before = await pidOf(a);
    await call(b, 'x', 'crash', { code: 3 });
    expect(await waitUntilGone([before], 10_000)).toEqual([]);
    await expect.poll(async () => textOf((await call(a, 'again', 'echo', { text: 'a' })).json.result), { timeout: 10_000 }).toBe('a');
    expect(textOf((await call(b, 'again', 'echo', { text: 'b' })).json.result)).toBe('b');
    const [pa, pb] = await Promise.all([pidOf(a), pidOf(b)]);
    expect(pa).toBe(pb);
    expect(pa).not.toBe(before);
    // One child, one handshake: the restarts of both sessions did not initialize it twice.
    expect((await a.history()).filter((m) => m.method === 'initialize')).toHaveLength(1);
  });

  it('per-session stays the default: every session gets its own child', async () => {
    gw = await startTestGateway({ targets: { rec: recorderServer() } });
    const sessions = await Promise.all(Array.from({ length: 3 }, () => rpc.initialize((gw as TestGateway).mcpUrl())));
    expect(new Set(await Promise.all(sessions.map(pidOf))).size).toBe(3);
  });
});

