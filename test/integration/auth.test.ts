/**
 * Client authentication at the edge, over real sockets: a local issuer with real keys and a JWKS
 * over HTTP, real stdio children behind the gateway. Every refusal is checked for its status,
 * its `WWW-Authenticate` and its JSON-RPC body, on every route that reaches an upstream; then the
 * credentials that must work do, and no credential ever reaches the log.
 */
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig, colliderServer, textOf } from '../support/aggregate.ts';
import { startIssuer, unsignedToken, type Issuer } from '../support/auth-server.ts';
import { createTestLogger } from '../support/gateway.ts';
import { initializeWs, openWs, wsUrl } from '../support/ws-client.ts';

const API_KEY = 'sbk_test_0123456789abcdef';
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'auth-test', version: '1' } } });
type Envelope = { error: { data: { code: string } } };
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

let issuer: Issuer;
let gw: RunningGateway;
const logLines: string[] = [];
const tokensUsed: string[] = [API_KEY];

/** The resource URL of a path, as the gateway checks the audience against it. */
const resource = (path: string) => `${gw.url}${path}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function mint(claims: Record<string, unknown> = {}, options?: Parameters<Issuer['mint']>[1]): Promise<string> {
  const token = await issuer.mint({ aud: resource('/servers/col/mcp'), ...claims }, options);
  tokensUsed.push(token);
  return token;
}

/** The status and headers of a WebSocket upgrade the gateway refuses (or 101). */
function upgrade(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, gw.url), {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', 'sec-websocket-protocol': 'mcp', ...headers },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '' });
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** One request per route that reaches an upstream; each resolves with status, WWW-Authenticate and body. */
function everyRoute(headers: Record<string, string>) {
  const plain = async (path: string, init: RequestInit) => {
    const res = await fetch(new URL(path, gw.url), init);
    return { path, status: res.status, challenge: res.headers.get('www-authenticate'), body: await res.text() };
  };
  return Promise.all([
    plain('/servers/col/mcp', { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body: INIT }),
    plain('/servers/col/mcp', { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': 'x', ...headers } }),
    plain('/servers/col/mcp', { method: 'DELETE', headers: { 'mcp-session-id': 'x', ...headers } }),
    plain('/mcp', { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body: INIT }),
    plain('/servers/col/sse', { method: 'GET', headers: { accept: 'text/event-stream', ...headers } }),
    plain('/servers/col/messages?sessionId=x', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: INIT }),
    upgrade('/servers/col/ws', headers).then((r) => ({ path: '/servers/col/ws', status: r.status, challenge: (r.headers['www-authenticate'] as string | undefined) ?? null, body: r.body })),
  ]);
}

const metadataUrl = (path: string) => `${gw.url}/.well-known/oauth-protected-resource${path}`;
const resourceOf = (path: string) => path.split('?', 1)[0]!.replace(/\/messages$/, '/sse');

beforeAll(async () => {
  issuer = await startIssuer();
  const base = buildAggregateConfig({ targets: { col: colliderServer(), other: colliderServer() } });
  const auth: AuthConfig = {
    anonymous: false,
    publicUrl: undefined,
    apiKeys: [{ name: 'ci', sha256: createHash('sha256').update(API_KEY).digest('hex'), scopes: ['mcp'] }],
    apiKeyHeader: 'authorization',
    jwt: { issuers: [issuer.issuer], jwksUrl: issuer.jwksUrl, jwksRefetchSec: 1, jwksMinCacheSec: 60, jwksMaxCacheSec: 3_600, keys: undefined, algorithms: ['ES256'], clockSkewSec: 5, audiences: [] },
    scopes: ['mcp'],
    authorizationServers: [issuer.issuer],
  };
  gw = await startGateway({ ...base, auth }, { logger: createTestLogger('debug', logLines) });
});

afterAll(async () => {
  await gw?.close();
  await issuer?.close();
});

describe('authentication at the edge', () => {
  it('publishes RFC 9728 metadata per MCP path, whose resource is the URL the client calls', async () => {
    const res = await fetch(metadataUrl('/servers/col/mcp'));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      resource: resource('/servers/col/mcp'),
      authorization_servers: [issuer.issuer],
      scopes_supported: ['mcp'],
      bearer_methods_supported: ['header'],
    });
    expect(((await (await fetch(metadataUrl('/groups/g/ws'))).json()) as { resource: string }).resource).toBe(resource('/groups/g/ws'));
    expect((await fetch(metadataUrl('/healthz'))).status).toBe(404);
  });

  it('no credential: 401 on every route, pointing at that path\'s metadata, with the required scope', async () => {
    for (const r of await everyRoute({})) {
      expect({ path: r.path, status: r.status }).toEqual({ path: r.path, status: 401 });
      expect(r.challenge, r.path).toBe(`Bearer resource_metadata="${metadataUrl(resourceOf(r.path))}", scope="mcp"`);
      if (!r.path.endsWith('/ws')) expect(JSON.parse(r.body), r.path).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'GW_UNAUTHORIZED' } } });
    }
  });

  it.each([
    ['another audience', () => mint({ aud: 'https://elsewhere.example/mcp' })],
    ['another issuer', () => mint({ iss: 'https://evil.example' })],
    ['expired', () => mint({ exp: Math.floor(Date.now() / 1000) - 60 })],
    ['not yet valid', () => mint({ nbf: Math.floor(Date.now() / 1000) + 60 })],
    ['a bad signature', async () => mint({}, { kid: 'k1', key: await issuer.addKey('forger') })],
    ['alg none', async () => unsignedToken({ iss: issuer.issuer, sub: 'alice', aud: resource('/servers/col/mcp'), exp: Math.floor(Date.now() / 1000) + 300, scope: 'mcp' })],
    ['an ID token', () => mint({ nonce: 'n-0S6_WzA2Mj' }, { typ: 'JWT' })],
    ['a wrong API key', async () => 'sbk_test_not_the_right_key!'],
  ])('%s: 401 invalid_token, the same answer whatever the reason', async (_label, make) => {
    const token = await make();
    tokensUsed.push(token);
    const res = await fetch(resource('/servers/col/mcp'), { method: 'POST', headers: { ...JSON_HEADERS, ...bearer(token) }, body: INIT });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer error="invalid_token", resource_metadata="${metadataUrl('/servers/col/mcp')}", scope="mcp"`);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Unauthorized: a valid bearer token or API key is required', data: { code: 'GW_UNAUTHORIZED' } } });
  });

  it('an expired token is refused on every route, the WebSocket upgrade included', async () => {
    const token = await mint({ exp: Math.floor(Date.now() / 1000) - 60 });
    for (const r of await everyRoute(bearer(token))) expect({ path: r.path, status: r.status }).toEqual({ path: r.path, status: 401 });
  });

  it('insufficient scope: 403 with the scope to step up to', async () => {
    const token = await mint({ scope: 'read' });
    const res = await fetch(resource('/servers/col/mcp'), { method: 'POST', headers: { ...JSON_HEADERS, ...bearer(token) }, body: INIT });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", resource_metadata="${metadataUrl('/servers/col/mcp')}", scope="mcp"`);
    expect(((await res.json()) as Envelope).error.data).toEqual({ code: 'GW_INSUFFICIENT_SCOPE' });
  });

  it('an unknown kid is refused, then accepted once the JWKS publishes it; the JWKS is not fetched per token', async () => {
    await issuer.addKey('k2');
    const token = await mint({}, { kid: 'k2' });
    const before = issuer.fetches;
    for (let i = 0; i < 5; i++) {
      const res = await fetch(resource('/servers/col/mcp'), { method: 'POST', headers: { ...JSON_HEADERS, ...bearer(token) }, body: INIT });
      expect(res.status).toBe(401);
    }
    expect(issuer.fetches - before).toBeLessThanOrEqual(1);
    issuer.publish('k2');
    await new Promise((r) => setTimeout(r, 1_100));
    const res = await fetch(resource('/servers/col/mcp'), { method: 'POST', headers: { ...JSON_HEADERS, ...bearer(token) }, body: INIT });
    expect(res.status).toBe(200);
    await fetch(resource('/servers/col/mcp'), { method: 'DELETE', headers: { 'mcp-session-id': res.headers.get('mcp-session-id')!, ...bearer(token) } });
  });
});

describe('authenticated clients', () => {
  async function sdkClient(path: string, token: string) {
    const transport = new StreamableHTTPClientTransport(new URL(path, gw.url), { requestInit: { headers: bearer(token) } });
    const client = new Client({ name: 'auth-test', version: '1' });
    await client.connect(transport);
    return { client, transport };
  }

  it('the SDK client with a token calls tools on a server path and on the aggregate', async () => {
    for (const [path, tool] of [['/servers/col/mcp', 'echo'], ['/mcp', 'col__echo']] as const) {
      const token = await issuer.mint({ aud: resource(path) });
      tokensUsed.push(token);
      const { client, transport } = await sdkClient(path, token);
      expect(textOf(await client.callTool({ name: tool, arguments: { message: 'hi' } }))).toContain('hi');
      await transport.terminateSession();
      await client.close();
    }
  });

  it('an API key works as a bearer credential', async () => {
    const { client, transport } = await sdkClient('/servers/col/mcp', API_KEY);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await transport.terminateSession();
    await client.close();
  });

  it('a browser-style WebSocket carries its token as a subprotocol (never the query string)', async () => {
    const token = await issuer.mint({ aud: resource('/servers/col/ws') });
    tokensUsed.push(token);
    const peer = await openWs(wsUrl(gw.url, '/servers/col/ws'), ['mcp', `bearer.${token}`]);
    expect(peer.socket.protocol).toBe('mcp');
    expect(await initializeWs(peer)).toMatchObject({ result: { serverInfo: expect.any(Object) } });
    peer.socket.close();
    expect((await upgrade(`/servers/col/ws?access_token=${token}`)).status).toBe(401);
  });
});

describe('sessions belong to their principal', () => {
  const post = (token: string, session: string, body: unknown) =>
    fetch(resource('/servers/col/mcp'), { method: 'POST', headers: { ...JSON_HEADERS, ...bearer(token), 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify(body) });

  it("another principal presenting A's session id gets 404 on every route; A carries on, also with a refreshed token", async () => {
    const alice = await mint({ sub: 'alice' });
    const bob = await mint({ sub: 'bob' });
    const opened = await fetch(resource('/servers/col/mcp'), { method: 'POST', headers: { ...JSON_HEADERS, ...bearer(alice) }, body: INIT });
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id')!;
    expect((await post(alice, session, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);

    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const foreign = [
      await post(bob, session, list),
      await fetch(resource('/servers/col/mcp'), { headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'last-event-id': '1-1', ...bearer(bob) } }),
      await fetch(resource('/servers/col/mcp'), { method: 'DELETE', headers: { 'mcp-session-id': session, ...bearer(bob) } }),
      await fetch(resource('/servers/col/mcp'), { method: 'DELETE', headers: { 'mcp-session-id': session, authorization: `Bearer ${API_KEY}` } }),
    ];
    for (const res of foreign) {
      expect(res.status).toBe(404);
      expect(((await res.json()) as Envelope).error.data.code).toBe('GW_SESSION_NOT_FOUND');
    }

    const refreshed = await mint({ sub: 'alice', iat: Math.floor(Date.now() / 1000) + 1 });
    expect(refreshed).not.toBe(alice);
    for (const token of [alice, refreshed]) {
      const res = await post(token, session, list);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
    }
    expect((await fetch(resource('/servers/col/mcp'), { method: 'DELETE', headers: { 'mcp-session-id': session, ...bearer(alice) } })).status).toBe(200);
  });

  it("another principal cannot post into A's legacy SSE session", async () => {
    const alice = await issuer.mint({ sub: 'alice', aud: resource('/servers/col/sse') });
    const bob = await issuer.mint({ sub: 'bob', aud: resource('/servers/col/sse') });
    tokensUsed.push(alice, bob);
    const controller = new AbortController();
    const stream = await fetch(resource('/servers/col/sse'), { headers: { accept: 'text/event-stream', ...bearer(alice) }, signal: controller.signal });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    const endpoint = /data: (\S+)/.exec(text)![1]!;
    const postAs = (token: string) => fetch(new URL(endpoint, gw.url), { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: INIT });
    expect((await postAs(bob)).status).toBe(404);
    expect((await postAs(alice)).status).toBe(202);
    controller.abort();
  });
});

describe('secrets', () => {
  it('no token or key used in this file appears in any log line', () => {
    expect(logLines.length).toBeGreaterThan(10);
    const log = logLines.join('\n');
    for (const secret of tokensUsed) expect(log.includes(secret), `a credential leaked into the log: ${secret.slice(0, 12)}...`).toBe(false);
    expect(log).toContain('request refused by authentication');
  });
});

describe('a token that expires on an open connection', () => {
  it('is refused on that same keep-alive connection once expired, though it was accepted there before', async () => {
    const { Pool } = await import('undici');
    const short = await startIssuer();
    const base = buildAggregateConfig({ targets: { col: colliderServer() } });
    const auth: AuthConfig = {
      anonymous: false,
      publicUrl: 'http://gw.test',
      apiKeys: [],
      apiKeyHeader: 'authorization',
      jwt: { issuers: [short.issuer], jwksUrl: short.jwksUrl, jwksRefetchSec: 30, jwksMinCacheSec: 60, jwksMaxCacheSec: 3_600, keys: undefined, algorithms: ['ES256'], clockSkewSec: 0, audiences: [] },
      scopes: [],
      authorizationServers: [short.issuer],
    };
    const gateway = await startGateway({ ...base, auth }, { logger: createTestLogger('silent', undefined) });
    const pool = new Pool(gateway.url, { connections: 1 });
    try {
      // Three seconds of life: the first initialize starts a child, which takes a while on a loaded machine.
      const exp = Math.floor(Date.now() / 1000) + 3;
      const token = await short.mint({ aud: 'http://gw.test/mcp', exp });
      const post = async () => {
        const res = await pool.request({ path: '/mcp', method: 'POST', headers: { ...JSON_HEADERS, ...bearer(token) }, body: INIT });
        await res.body.text();
        return res.statusCode;
      };
      expect(await post()).toBe(200);
      expect(await post()).toBe(200);
      await new Promise((r) => setTimeout(r, Math.max(0, exp * 1000 - Date.now()) + 100));
      expect(await post()).toBe(401);
    } finally {
      await pool.close();
      await gateway.close();
      await short.close();
    }
  });
});
