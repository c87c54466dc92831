/**
 * In-flight caps (gateway.limits.maxInflightPerSession, maxInflight) over real sockets, with a real
 * child whose `gate` tool holds each call until a file exists: fill a cap, the next request gets
 * 503 + Retry-After (Streamable HTTP) or GW_OVERLOADED as its answer (WebSocket, legacy SSE, the
 * channel staying open); once the held calls finish, requests pass again; another session is not
 * affected by one session's cap.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { openLegacyStream } from '../support/legacy-sse.ts';
import { fixture } from '../support/recorder.ts';
import { initializeWs, openWs, wsUrl } from '../support/ws-client.ts';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'overload-test', version: '1' } } };

let gw: TestGateway;
let dir: string;
let gates = 0;

/** A fresh gate: calls with its path are held until `open()`. */
function newGate() {
  const path = join(dir, `gate-${++gates}`);
  return { path, open: () => writeFileSync(path, '') };
}

const gateCall = (id: number | string, path: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'gate', arguments: { path } } });
const echoCall = (id: number | string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: `echo ${id}` } } });

async function httpSession() {
  const url = new URL('/servers/slow/mcp', gw.url);
  const init = await fetch(url, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) });
  expect(init.status).toBe(200);
  await init.text();
  const headers = { ...HEADERS, 'mcp-session-id': init.headers.get('mcp-session-id') as string };
  return {
    /** Resolves with the status and the whole body (once the answer came). */
    async post(body: unknown) {
      const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text() };
    },
  };
}

/** Requests in flight in the whole gateway, as /readyz reports them. */
async function inflight(): Promise<number> {
  const res = await fetch(new URL('/readyz', gw.url));
  return ((await res.json()) as { inflight: number }).inflight;
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sb-overload-'));
  gw = await startTestGateway({
    targets: { slow: { command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'normal'] }, other: { command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'normal'] } },
    limits: { maxInflightPerSession: 3, maxInflight: 5 },
  });
});

afterEach(async () => {
  // Every test leaves nothing in flight (a held call would count against the next test's caps).
  await until(async () => (await inflight()) === 0, 'no request in flight');
});

afterAll(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('in-flight caps', () => {
  it('Streamable HTTP: the session cap answers 503 with Retry-After and a JSON-RPC body; others go on; it passes again after', async () => {
    const a = await httpSession();
    const b = await httpSession();
    const gate = newGate();
    const held = [1, 2, 3].map((id) => a.post(gateCall(id, gate.path)));
    await until(async () => (await inflight()) === 3, 'three held calls');

    const refused = await a.post(echoCall(4));
    expect(refused.status).toBe(503);
    expect(refused.retryAfter).toBe('1');
    expect(JSON.parse(refused.text)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32603, message: 'Too many requests in flight (session limit 3); retry after 1 s', data: { code: 'GW_OVERLOADED', kind: 'session', limit: 3, retryAfterSec: 1 } },
    });
    // Another session of the same gateway is not held by this session's cap.
    const other = await b.post(echoCall(1));
    expect(other.status).toBe(200);
    expect(other.text).toContain('echo 1');

    gate.open();
    for (const r of await Promise.all(held)) expect(r.text).toContain('gate open');
    const again = await a.post(echoCall(5));
    expect(again.status).toBe(200);
    expect(again.text).toContain('echo 5');
  });

  it('Streamable HTTP: the gateway cap holds across sessions (data.kind gateway)', async () => {
    const a = await httpSession();
    const b = await httpSession();
    const c = await httpSession();
    const gate = newGate();
    const held = [...[1, 2, 3].map((id) => a.post(gateCall(id, gate.path))), ...[1, 2].map((id) => b.post(gateCall(id, gate.path)))];
    await until(async () => (await inflight()) === 5, 'five held calls');

    const refused = await c.post(echoCall(1));
    expect(refused.status).toBe(503);
    expect(refused.retryAfter).toBe('1');
    expect(JSON.parse(refused.text)).toMatchObject({ id: null, error: { data: { code: 'GW_OVERLOADED', kind: 'gateway', limit: 5 } } });

    gate.open();
    await Promise.all(held);
    expect((await c.post(echoCall(2))).status).toBe(200);
  });

  it('WebSocket: the request over the cap gets GW_OVERLOADED as its answer and the socket stays open', async () => {
    const peer = await openWs(wsUrl(gw.url, '/servers/slow/ws'));
    await initializeWs(peer);
    const gate = newGate();
    for (const id of [1, 2, 3]) peer.send(gateCall(id, gate.path));
    await until(async () => (await inflight()) === 3, 'three held calls');
    peer.send(echoCall(4));
    const [refused] = (await peer.until(4)).slice(-1);
    expect(refused).toMatchObject({ jsonrpc: '2.0', id: 4, error: { code: -32603, data: { code: 'GW_OVERLOADED', kind: 'session', limit: 3, retryAfterSec: 1 } } });
    expect(peer.socket.readyState).toBe(WebSocket.OPEN);

    gate.open();
    const answers = new Map<unknown, Record<string, unknown>>();
    while (answers.size < 3) {
      const message = await peer.next();
      answers.set(message.id, message);
    }
    expect([...answers.keys()].sort()).toEqual([1, 2, 3]);
    peer.send(echoCall(5));
    expect((await peer.until(5)).slice(-1)[0]).toMatchObject({ id: 5, result: { content: [{ text: 'echo 5' }] } });
    peer.socket.close();
  });

  it('a session that ends with calls in flight gives their slots back', async () => {
    const peer = await openWs(wsUrl(gw.url, '/servers/slow/ws'));
    await initializeWs(peer);
    const gate = newGate();
    for (const id of [1, 2, 3]) peer.send(gateCall(id, gate.path));
    await until(async () => (await inflight()) === 3, 'three held calls');
    peer.socket.close();
    await until(async () => (await inflight()) === 0, 'the slots given back');
    const next = await httpSession();
    expect((await next.post(echoCall(1))).status).toBe(200);
  });

  it('legacy SSE: the POST is accepted (202), the error arrives on the stream, the stream stays', async () => {
    const stream = await openLegacyStream(new URL('/servers/slow/sse', gw.url));
    expect(await stream.post({ ...INIT, params: { ...INIT.params, protocolVersion: '2024-11-05' } })).toBe(202);
    expect(await stream.nextMessage()).toMatchObject({ id: 0, result: {} });
    expect(await stream.post({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBe(202);
    const gate = newGate();
    for (const id of [1, 2, 3]) expect(await stream.post(gateCall(id, gate.path))).toBe(202);
    await until(async () => (await inflight()) === 3, 'three held calls');
    expect(await stream.post(echoCall(4))).toBe(202);
    expect(await stream.nextMessage()).toMatchObject({ id: 4, error: { data: { code: 'GW_OVERLOADED', kind: 'session' } } });

    gate.open();
    const ids = [(await stream.nextMessage()).id, (await stream.nextMessage()).id, (await stream.nextMessage()).id];
    expect(ids.sort()).toEqual([1, 2, 3]);
    expect(await stream.post(echoCall(5))).toBe(202);
    expect(await stream.nextMessage()).toMatchObject({ id: 5, result: { content: [{ text: 'echo 5' }] } });
    stream.close();
  });
});
