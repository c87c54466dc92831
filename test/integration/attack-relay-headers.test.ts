/**
 * Attacks on the replica relay's request side (docs/scaling.md "The hop", docs/security.md), from
 * outside, with two real replicas and real Redis: a client that sends the hop's own headers to the
 * edge; a request whose headers fill the edge's limit, relayed with the hop's headers added; URLs
 * spelled with escapes and odd characters (the MAC covers the URL as it arrived); an SDK v2 client
 * that initializes on one replica and goes on through the other.
 */
import { request as httpRequest } from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHopSigner } from '../../src/cluster/hop-signature.ts';
import { deriveKeyRing } from '../../src/cluster/keyring.ts';
import { ALICE, BOB, CLUSTER_KEY, startKeyedPair, type Replica, type TestCluster } from '../support/cluster.ts';
import { rawExchange, rawRequest } from '../support/raw-http.ts';
import { MCP_HEADERS, post } from '../support/recorder.ts';

const VERSION = '2025-11-25';
let cluster: TestCluster;
let r0: Replica;
let r1: Replica;

beforeAll(async () => {
  ({ cluster, r0, r1 } = await startKeyedPair());
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

const PING = JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' });

async function open(on: Replica, authorization = ALICE): Promise<string> {
  const init = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'attack', version: '1' } } });
  const answer = await post(on.mcpUrl(), init, { authorization });
  expect(answer.status).toBe(200);
  return answer.headers.get('mcp-session-id') as string;
}

const ping = (on: Replica, session: string, headers: Record<string, string> = {}, path?: string) =>
  post(on.mcpUrl(path), PING, { authorization: ALICE, 'mcp-session-id': session, 'mcp-protocol-version': VERSION, ...headers });

/** Status of a ping sent with only the protocol's headers and the credential (node:http, nothing added). */
function rawStatus(on: Replica, session: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(on.mcpUrl(), { method: 'POST', headers: { ...MCP_HEADERS, authorization: ALICE, 'mcp-session-id': session, 'mcp-protocol-version': VERSION, 'content-length': PING.length, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(PING);
  });
}

const blob = (id: string, subject: string) => Buffer.from(JSON.stringify({ id, kind: 'api-key', subject, scopes: [] })).toString('base64url');

describe("the hop's own headers from a client", () => {
  it('a client with a good credential that adds hop headers at the edge is refused, and gets nothing of another principal', async () => {
    const alices = await open(r0);
    const bobs = await open(r0, BOB);
    const signer = createHopSigner(deriveKeyRing(['not-our-cluster-key-0123456789abcdef']));
    const facts = { method: 'POST', url: '/servers/rec/mcp', sessionId: bobs, principal: blob('key:bob', 'bob'), credential: '' };
    const forged: Array<Record<string, string>> = [
      { 'x-switchboard-principal': blob('key:bob', 'bob') },
      { 'X-Switchboard-Principal': blob('key:alice', 'alice') },
      { 'x-switchboard-credential': 'Bearer bob-key-0123456789abcdefgh' },
      { 'x-switchboard-hop': signer.sign(facts, PING), 'x-switchboard-principal': blob('key:bob', 'bob') },
    ];
    for (const headers of forged) {
      for (const [on, session] of [[r1, bobs], [r0, bobs], [r1, alices]] as const) {
        const answer = await ping(on, session, headers);
        expect(answer.status, `${JSON.stringify(headers)} on ${on.id}`).toBe(403);
        expect(answer.json).toMatchObject({ error: { data: { code: 'GW_HOP_REFUSED' } } });
      }
    }
    // Bob's session through the other replica with alice's own credential: the unknown-session 404.
    expect((await ping(r1, bobs)).status).toBe(404);
    expect((await ping(r1, alices)).status).toBe(200);
  });
});

describe('requests the edge accepts, relayed with the hop added', () => {
  it('headers that fill the limit: the hop costs under 512 bytes of them, past that a clear 431, and the next request is served', async () => {
    const session = await open(r0);
    // 2026 parameter headers (passed on to the owner) grown to just under Node's 16 KiB at the
    // owner, sent with no header besides the protocol's and the credential: the hop's own
    // headers (principal, MAC) then take the relayed request past what the owner reads.
    const big = (n: number, tail: number) => ({ ...Object.fromEntries(Array.from({ length: n }, (_, i) => [`mcp-param-p${i}`, 'v'.repeat(100)])), 'mcp-param-tail': 'w'.repeat(tail) });
    const bare = (on: Replica, headers: Record<string, string>) => rawStatus(on, session, headers);
    let n = 100;
    while ((await bare(r0, big(n + 1, 1))) === 200) n++;
    let tail = 1;
    while ((await bare(r0, big(n, tail + 8))) === 200) tail += 8;
    expect(n).toBeGreaterThan(100);
    expect(await bare(r0, big(n, tail))).toBe(200);
    // At the very edge of the limit, the owner's own 431 comes back (a clear status, as a direct
    // client past the limit gets); the hop's headers cost less than 512 bytes of the client's.
    expect(await bare(r1, big(n, tail))).toBe(431);
    expect(await bare(r1, big(n - 5, tail))).toBe(200);
    expect((await ping(r1, session)).status).toBe(200);
  });

  it('URLs with escapes, odd characters and a query are relayed as they arrived (the MAC covers them)', async () => {
    const session = await open(r0);
    const paths = ['/servers/rec/mcp?x=%C3%A9&y=a%7Cb', '/servers/r%65c/mcp', "/servers/rec/mcp?q=a'b!*()~", '/servers/rec/mcp?'];
    for (const path of paths) {
      const direct = await ping(r0, session, {}, path);
      const relayed = await ping(r1, session, {}, path);
      expect(relayed.status, path).toBe(direct.status);
      expect(relayed.text, path).not.toContain('GW_HOP_REFUSED');
    }
  });

  it('request targets a client library would not send (absolute form, doubled slashes, duplicated session header) get what the owner gives them directly', async () => {
    const session = await open(r0);
    // An absolute target naming a port where nobody listens: the hop still goes to the owner's
    // advertised URL (a refused connection there would mark the owner gone for everyone).
    const targets = (on: Replica) => [`http://127.0.0.1:${on.port}/servers/rec/mcp`, 'http://127.0.0.1:1/servers/rec/mcp', 'http://evil.invalid/servers/rec/mcp', '//servers/rec/mcp', '/servers/rec/mcp#frag', '/servers/./rec/mcp', '/servers/rec/../rec/mcp'];
    const raw = async (on: Replica, target: string, extra: Record<string, string> = {}) => {
      const headers = { Host: `127.0.0.1:${on.port}`, ...MCP_HEADERS, Authorization: ALICE, 'Mcp-Session-Id': session, 'Mcp-Protocol-Version': VERSION, ...extra };
      return rawRequest(new URL(on.url), 'POST', target, headers, PING);
    };
    const direct = targets(r0);
    const relayed = targets(r1);
    for (let i = 0; i < direct.length; i++) {
      const there = await raw(r0, direct[i] as string);
      const here = await raw(r1, relayed[i] as string);
      expect(here.status, `${relayed[i]}: ${here.body.slice(0, 300)}`).toBe(there.status);
      expect(here.body).not.toContain('GW_HOP_REFUSED');
    }
    // The session header twice: one value joined from both on either replica; never a hop refused.
    const twice = await rawExchange(new URL(r1.url), [`POST /servers/rec/mcp HTTP/1.1`, `Host: 127.0.0.1:${r1.port}`, 'Content-Type: application/json', 'Accept: application/json, text/event-stream', `Authorization: ${ALICE}`, `Mcp-Session-Id: ${session}`, `Mcp-Session-Id: ${session}`, `Content-Length: ${PING.length}`, 'Connection: close', '', PING].join('\r\n'));
    expect(twice.status).toBeGreaterThanOrEqual(400);
    expect(twice.body).not.toContain('GW_HOP_REFUSED');
    expect((await ping(r1, session)).status).toBe(200);
  });

  it('an SDK v2 client initialized on one replica goes on through the other: tools, a call, and its DELETE', async () => {
    const viaR1: typeof fetch = (input, init) => {
      const url = new URL(String(input instanceof Request ? input.url : input));
      const body = typeof init?.body === 'string' ? init.body : '';
      const to = body.includes('"method":"initialize"') ? r0.url : r1.url;
      return fetch(new URL(url.pathname + url.search, to), init);
    };
    const transport = new StreamableHTTPClientTransport(r0.mcpUrl(), { fetch: viaR1, requestInit: { headers: { authorization: ALICE } } });
    const client = new Client({ name: 'attack-relay', version: '1.0.0' });
    try {
      await client.connect(transport);
      const session = transport.sessionId as string;
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
      const result = await client.callTool({ name: 'echo', arguments: { text: 'via r1' } });
      expect(result.content).toEqual([{ type: 'text', text: 'via r1' }]);
      await transport.terminateSession();
      for (const on of [r0, r1]) expect((await ping(on, session)).status).toBe(404);
    } finally {
      await client.close();
    }
  });
});

describe('a large body relayed', () => {
  it('a 12 MiB call is relayed whole (its digest checked by the owner); one past limits.maxBodyBytes is refused at the edge', async () => {
    const session = await open(r0);
    const text = 'z'.repeat(12 * 1024 * 1024);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'tools/call', params: { name: 'echo', arguments: { text } } });
    const headers = { authorization: ALICE, 'mcp-session-id': session, 'mcp-protocol-version': VERSION };
    const relayed = await post(r1.mcpUrl(), body, headers);
    expect(relayed.status).toBe(200);
    expect((relayed.json.result as { content: Array<{ text: string }> }).content[0]?.text).toBe(text);
    // Refused on its Content-Length before the body is read: the edge may close while the client
    // still writes (EPIPE here), or answer 413 first; either way it is never relayed.
    const overBody = JSON.stringify({ jsonrpc: '2.0', id: 'over', method: 'tools/call', params: { name: 'echo', arguments: { text: text + text } } });
    const over = await new Promise<string>((resolve) => {
      const req = httpRequest(r1.mcpUrl(), { method: 'POST', headers: { ...MCP_HEADERS, ...headers, 'content-length': Buffer.byteLength(overBody) } }, (res) => {
        res.resume();
        resolve(String(res.statusCode));
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
      req.end(overBody);
    });
    expect(['413', 'EPIPE', 'ECONNRESET']).toContain(over);
    expect((await ping(r1, session)).status).toBe(200);
  }, 60_000);
});
