/**
 * The hop's kept-alive connections (issue 34 item 2; docs/scaling.md, "The hop"): an edge keeps
 * its connections to an owner open between hops, so every judgment of a hop must be per request,
 * never per connection. Over one reused connection: a genuine hop, then a tampered body, a stale
 * time, a replayed MAC on another request, another principal, another cluster's key, then a
 * genuine hop again (refusals leave nothing behind). Then the edge's own pool: the owner
 * restarted on the same port (the kept-alive socket is dead), and restarted with its keys rotated
 * without the old one (the edge's hops, MAC'd with the old key, and its cached entry are refused).
 * And a large answer read slowly through the edge arrives whole (back-pressure on the hop).
 */
import { request as httpRequest } from 'node:http';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHopSigner, type HopFacts } from '../../src/cluster/hop-signature.ts';
import { deriveKeyRing } from '../../src/cluster/keyring.ts';
import { freePort } from '../support/ports.ts';
import { MCP_HEADERS, post, recorderServer } from '../support/recorder.ts';
import { startRedis, type TestRedis } from '../support/redis.ts';
import { startReplica, type Replica } from '../support/replicas.ts';

const OLD_KEY = 'hop-reuse-old-key-0123456789abcdefghijklmn';
const NEW_KEY = 'hop-reuse-new-key-0123456789abcdefghijklmn';
const PATH = '/servers/rec/mcp';
const VERSION = '2025-11-25';
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
const PING = JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' });
const echo = (text: string) => JSON.stringify({ jsonrpc: '2.0', id: 'e', method: 'tools/call', params: { name: 'echo', arguments: { text } } });

let redis: TestRedis;
let r0: Replica;
let r1: Replica;
let r0Port: number;
const started: Replica[] = [];

async function replica(id: string, keys: string[], port?: number): Promise<Replica> {
  const p = port ?? (await freePort());
  const cluster = { replicaId: id, advertiseUrl: `http://127.0.0.1:${p}`, redis: { url: redis.url }, keys, heartbeatMs: 300, replicaTtlMs: 1_500 };
  // Our port, not the one startReplica picked (its `url` would name that one).
  const one = { ...(await startReplica({ port: p, logging: { level: 'info' }, cluster }, { rec: recorderServer() })), url: `http://127.0.0.1:${p}` };
  started.push(one);
  return one;
}

async function open(on: Replica): Promise<string> {
  const answer = await post(new URL(PATH, on.url), INIT);
  expect(answer.status).toBe(200);
  const id = answer.headers.get('mcp-session-id') as string;
  await post(new URL(PATH, on.url), JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { 'mcp-session-id': id, 'mcp-protocol-version': VERSION });
  return id;
}

const viaR1 = (session: string, body: string) => post(new URL(PATH, r1.url), body, { 'mcp-session-id': session, 'mcp-protocol-version': VERSION });

beforeAll(async () => {
  redis = await startRedis();
  r0Port = await freePort();
  r0 = await replica('r0', [OLD_KEY], r0Port);
  r1 = await replica('r1', [OLD_KEY]);
}, 120_000);
afterAll(async () => {
  for (const one of started) await one.stop();
  await redis?.stop();
});

describe('hops over one kept-alive connection', () => {
  it('judges every request on its own: refusals in between leave the connection and the next hop as they were', async () => {
    const session = await open(r0);
    const signer = createHopSigner(deriveKeyRing([OLD_KEY]));
    const foreign = createHopSigner(deriveKeyRing(['another-cluster-key-0123456789abcdefgh']));
    const facts: HopFacts = { method: 'POST', url: PATH, sessionId: session, principal: '', credential: '' };
    const bob = Buffer.from(JSON.stringify({ id: 'key:bob', kind: 'api-key', subject: 'bob', scopes: [] })).toString('base64url');
    const client = new Client(r0.url, { pipelining: 1 });
    let connects = 0;
    client.on('connect', () => connects++);
    const send = async (body: string, hop: Record<string, string>) => {
      const answer = await client.request({ path: PATH, method: 'POST', headers: { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': VERSION, ...hop }, body });
      const text = await answer.body.text();
      return { status: answer.statusCode, text };
    };
    try {
      const genuine = signer.sign(facts, PING);
      expect((await send(PING, { 'x-switchboard-hop': genuine })).status).toBe(200);
      const refused = [
        // The same MAC with another body (a tool call in place of the ping).
        { body: echo('tampered'), hop: { 'x-switchboard-hop': genuine } },
        // Stale: signed 31 s ago.
        { body: PING, hop: { 'x-switchboard-hop': signer.sign(facts, PING, Date.now() - 31_000) } },
        // The MAC replayed for another request (DELETE's facts are not a POST's).
        { body: PING, hop: { 'x-switchboard-hop': signer.sign({ ...facts, method: 'DELETE' }, PING) } },
        // Another cluster's key.
        { body: PING, hop: { 'x-switchboard-hop': foreign.sign(facts, PING) } },
        // A genuine MAC, then another principal claimed beside it.
        { body: PING, hop: { 'x-switchboard-hop': genuine, 'x-switchboard-principal': bob } },
      ];
      for (const { body, hop } of refused) {
        const answer = await send(body, hop);
        expect(answer.status, JSON.stringify(hop)).toBe(403);
        expect(answer.text).toContain('GW_HOP_REFUSED');
      }
      // Signed for bob: a verified hop, but the session is bound to no principal, not bob: unknown.
      const asBob = await send(PING, { 'x-switchboard-hop': signer.sign({ ...facts, principal: bob }, PING), 'x-switchboard-principal': bob });
      expect(asBob.status).toBe(404);
      expect((await send(echo('again'), { 'x-switchboard-hop': signer.sign(facts, echo('again')) })).text).toContain('again');
      expect(connects).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('relays a large answer whole to a client that reads it slowly', async () => {
    const session = await open(r0);
    const text = 'x'.repeat(4 * 1024 * 1024);
    const body = echo(text);
    const received = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(new URL(PATH, r1.url), { method: 'POST', headers: { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': VERSION, 'content-length': Buffer.byteLength(body) } }, (res) => {
        const chunks: Buffer[] = [];
        // Reads nothing for a while: the edge's writes back up and the hop pauses.
        res.pause();
        setTimeout(() => {
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          res.resume();
        }, 500);
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(received.length).toBeGreaterThan(text.length);
    expect(JSON.parse(received)).toMatchObject({ id: 'e', result: { content: [{ text }] } });
  });
});

describe("the edge's pool after the owner changed", () => {
  it('an owner restarted on the same port: its old sessions are 404 through the edge, new ones relay', async () => {
    const old = await open(r0);
    expect((await viaR1(old, echo('before'))).status).toBe(200);
    await r0.stop();
    r0 = await replica('r0', [OLD_KEY], r0Port);
    // The edge's kept-alive socket to the old process is dead: no hang, no 5xx, the unknown session's 404.
    const gone = await viaR1(old, PING);
    expect(gone.status).toBe(404);
    expect(gone.json).toMatchObject({ error: { data: { code: 'GW_SESSION_NOT_FOUND' } } });
    const fresh = await open(r0);
    await expect.poll(async () => (await viaR1(fresh, echo('after'))).status, { timeout: 10_000 }).toBe(200);
  });

  it('an owner whose keys rotated without the old one: nothing the edge relays is served', async () => {
    const old = await open(r0);
    expect((await viaR1(old, echo('before'))).status).toBe(200);
    await r0.stop();
    r0 = await replica('r0', [NEW_KEY], r0Port);
    const fresh = await open(r0);
    // r1 still holds OLD_KEY only: its MAC is refused by r0 (403) while its cached entry lasts,
    // then r0's entry, signed with NEW_KEY, is no entry for r1 (404). Neither session is ever served.
    const seen = new Set<number>();
    for (const deadline = Date.now() + 2_000; Date.now() < deadline; ) {
      for (const session of [old, fresh]) {
        const answer = await viaR1(session, PING);
        expect([403, 404]).toContain(answer.status);
        seen.add(answer.status);
      }
    }
    expect(seen.has(404)).toBe(true);
    expect(r0.lines('refused a replica hop').length + r1.lines('refused a cluster directory entry').length).toBeGreaterThan(0);
  });
});
