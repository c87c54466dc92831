/**
 * Attacks on the rewritten replica relay (docs/scaling.md "The hop"), from outside: real replicas,
 * real Redis, raw HTTP clients. A POST answered as SSE is relayed event by event; a client that
 * goes away mid-answer leaves no hop connection behind on the edge; a slow reader of a
 * multi-MiB answer does not make the edge hold that answer; an owner that dies mid-answer gives
 * the client a clear end, and the edge serves others on.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Replica, type TestCluster } from '../support/cluster.ts';
import { MCP_HEADERS, post } from '../support/recorder.ts';

let cluster: TestCluster;
let r0: Replica;
let r1: Replica;
let r2: Replica;
const VERSION = '2025-11-25';

beforeAll(async () => {
  cluster = await startCluster({ replicas: 3 });
  [r0, r1, r2] = cluster.replicas as [Replica, Replica, Replica];
}, 180_000);
afterAll(async () => {
  await cluster?.stop();
});

async function open(on: Replica): Promise<string> {
  const init = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'attack', version: '1' } } });
  const answer = await post(on.mcpUrl(), init);
  expect(answer.status).toBe(200);
  const id = answer.headers.get('mcp-session-id') as string;
  await post(on.mcpUrl(), JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { 'mcp-session-id': id, 'mcp-protocol-version': VERSION });
  return id;
}

const call = (id: string, name: string, args: Record<string, unknown>, progress?: string) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(progress === undefined ? {} : { _meta: { progressToken: progress } }) } });

const ping = (on: Replica, session: string) => post(on.mcpUrl(), JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' }), { 'mcp-session-id': session, 'mcp-protocol-version': VERSION });

/** A raw POST whose answer the test reads (or not) itself. */
function rawPost(on: Replica, session: string, body: string): Promise<{ req: ClientRequest; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(on.mcpUrl(), { method: 'POST', headers: { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': VERSION, 'content-length': Buffer.byteLength(body) } }, (res) => resolve({ req, res }));
    req.on('error', reject);
    req.end(body);
  });
}

/** Reads until `text` was seen; what was read so far. */
function readUntil(res: IncomingMessage, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      if (seen.includes(text)) {
        res.off('data', onData);
        res.pause();
        resolve(seen);
      }
    };
    res.on('data', onData);
    res.once('error', reject);
    res.once('end', () => reject(new Error(`ended before ${text}: ${seen.slice(0, 500)}`)));
  });
}

/** Established TCP connections `from` (its own process) holds to `to`'s port. */
function hopConnections(from: Replica, to: Replica): number {
  const out = execFileSync('ss', ['-tnpH', 'state', 'established', `( dport = :${to.port} )`], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(`pid=${from.pid},`)).length;
}

async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

describe('a client gone before the hop starts', () => {
  it('a client that leaves while the edge looks the owner up starts no hop that never ends', async () => {
    const session = await open(r2);
    // The edge has never looked r2 up: it reads Redis, which is held still for a moment, so the
    // client can leave after the edge took its request and before the hop is sent.
    const redisPid = cluster.redis.pid() as number;
    process.kill(redisPid, 'SIGSTOP');
    try {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' });
      const req = httpRequest(r1.mcpUrl(), { method: 'POST', headers: { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': VERSION, 'content-length': Buffer.byteLength(body) } });
      req.on('error', () => undefined);
      await new Promise<void>((resolve) => req.end(body, resolve));
      await new Promise((r) => setTimeout(r, 300));
      req.destroy();
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      process.kill(redisPid, 'SIGCONT');
    }
    // The hop, if one was sent, ends with its answer (an idle kept-alive connection closes in 4 s);
    // one paused forever behind a reply nobody reads would hold its connection for good.
    await until(() => hopConnections(r1, r2) === 0, 'no hop connection left', 15_000);
    expect((await ping(r1, session)).json).toMatchObject({ id: 'p', result: {} });
  }, 60_000);
});

describe('an SSE answer relayed, and its client going away', () => {
  it('relays progress event by event (not held until the call ends), and a client gone mid-stream leaves no hop connection', async () => {
    const session = await open(r0);
    // One progress at once, the next after 60 s: held back, the first would never come in time.
    const { req, res } = await rawPost(r1, session, call('slow', 'slow', { ms: 120_000, steps: 2 }, 'tok'));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    const first = await readUntil(res, 'notifications/progress');
    expect(first).not.toContain('"result"');
    expect(hopConnections(r1, r0)).toBeGreaterThanOrEqual(1);
    req.destroy();
    // The aborted hop's connection is dropped, not parked in the pool with a call behind it.
    await until(() => hopConnections(r1, r0) === 0, 'the hop connection closed');
    // The session goes on through the edge, and through the owner.
    expect((await ping(r1, session)).json).toMatchObject({ id: 'p', result: {} });
    expect((await ping(r0, session)).status).toBe(200);
  });

  it('a client gone in the middle of a large SSE answer: the edge keeps no hop, the session and the edge go on', async () => {
    const session = await open(r0);
    const { req, res } = await rawPost(r1, session, call('big', 'log', { count: 20_000 }));
    await readUntil(res, 'line 1');
    req.destroy();
    await until(() => hopConnections(r1, r0) === 0, 'the hop connection closed');
    const again = await post(r1.mcpUrl(), call('e', 'echo', { text: 'after' }), { 'mcp-session-id': session, 'mcp-protocol-version': VERSION });
    expect(again.json).toMatchObject({ id: 'e', result: { content: [{ text: 'after' }] } });
  });
});

describe('a slow reader of a multi-MiB answer', () => {
  it("the edge's memory stays bounded while the client reads nothing, and the answer arrives whole", async () => {
    const session = await open(r0);
    // Fill the recorder's history straight at the owner: its answer to `history` is ~24 MiB.
    const chunk = 'y'.repeat(4 * 1024 * 1024);
    for (let i = 0; i < 6; i++) expect((await post(r0.mcpUrl(), call(`f${i}`, 'echo', { text: chunk }), { 'mcp-session-id': session, 'mcp-protocol-version': VERSION })).status).toBe(200);
    const before = rssKiB(r1.pid);
    const { req, res } = await rawPost(r1, session, call('h', 'history', {}));
    res.pause();
    try {
      // A window for the edge to take whatever the owner sends while nobody reads.
      let peak = before;
      const end = Date.now() + 3_000;
      while (Date.now() < end) {
        peak = Math.max(peak, rssKiB(r1.pid));
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(peak - before, `edge RSS grew by ${peak - before} KiB`).toBeLessThan(12 * 1024);
      let length = 0;
      res.on('data', (c: Buffer) => (length += c.length));
      await new Promise<void>((resolve, reject) => {
        res.once('end', resolve);
        res.once('error', reject);
        res.resume();
      });
      expect(length).toBeGreaterThan(24 * 1024 * 1024);
    } finally {
      req.destroy();
    }
    // Again, and the client goes away while the hop is paused behind it: no hop is left either.
    const paused = await rawPost(r1, session, call('h2', 'history', {}));
    paused.res.pause();
    await until(() => hopConnections(r1, r0) >= 1, 'the hop under way');
    paused.req.destroy();
    await until(() => hopConnections(r1, r0) === 0, 'the paused hop closed');
    expect((await ping(r1, session)).status).toBe(200);
    // Every pause of the hop added a 'drain' listener on the reply: none was left piling up.
    expect(r1.log()).not.toContain('MaxListenersExceededWarning');
  }, 90_000);
});

describe('an owner that dies mid-answer', () => {
  it('the client gets a clear end, never a hang; the edge serves others on', async () => {
    const session = await open(r2);
    const { res } = await rawPost(r1, session, call('slow', 'slow', { ms: 120_000, steps: 2 }, 'tok'));
    await readUntil(res, 'notifications/progress');
    const ended = new Promise<string>((resolve) => {
      res.once('end', () => resolve('end'));
      res.once('error', () => resolve('error'));
      res.once('close', () => resolve('close'));
      res.resume();
    });
    // A second call, its answer not begun (no progress token: nothing to send until the result).
    const quiet = fetch(r1.mcpUrl(), { method: 'POST', headers: { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': VERSION }, body: call('q', 'slow', { ms: 120_000 }) })
      .then(async (answer) => ({ status: answer.status, text: await answer.text() }))
      .catch((err: unknown) => ({ status: 0, text: String(err) }));
    await until(() => hopConnections(r1, r2) >= 2, 'both hops under way');
    await r2.kill9();
    expect(['end', 'error', 'close']).toContain(await ended);
    const second = await quiet;
    // Either the broken stream (status 0 here) or a JSON-RPC error with a GW_* code: never a hang.
    if (second.status !== 0) expect(second.text, String(second.status)).toMatch(/"code":"GW_[A-Z_]+"/);
    // Its session is now unknown through the edge, at once; the edge's own and r0's are served.
    expect((await ping(r1, session)).status).toBe(404);
    expect((await ping(r1, await open(r1))).status).toBe(200);
    expect((await ping(r1, await open(r0))).status).toBe(200);
  }, 60_000);
});

describe('many clients gone at once', () => {
  it('thirty SSE answers dropped mid-stream together leave no hop connection, and the edge serves on', async () => {
    const session = await open(r0);
    const started = await Promise.all(Array.from({ length: 30 }, (_, i) => rawPost(r1, session, call(`s${i}`, 'slow', { ms: 120_000, steps: 2 }, `t${i}`))));
    await Promise.all(started.map(({ res }) => readUntil(res, 'notifications/progress')));
    expect(hopConnections(r1, r0)).toBeGreaterThanOrEqual(30);
    for (const { req } of started) req.destroy();
    await until(() => hopConnections(r1, r0) === 0, 'every hop connection closed');
    expect((await ping(r1, session)).json).toMatchObject({ id: 'p', result: {} });
    expect(r1.log() + r0.log()).not.toContain('MaxListenersExceededWarning');
  }, 60_000);
});
