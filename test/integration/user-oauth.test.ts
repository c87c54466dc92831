/**
 * Each user's own account at a hosted MCP server (issue 32; docs/upstreams.md, "Each user's own
 * account"), with real parts: a second oidc-provider as the upstream's own authorization server
 * (another issuer than anything the gateway trusts), the SDK's server behind a bearer check of
 * that issuer's tokens (test/fixtures/protected-upstream.ts), the gateway with API-key principals.
 * Each principal follows the consent URL the gateway hands out as a browser would (login and
 * consent at the provider, then the gateway's callback), and from then on every call of theirs
 * reaches the upstream with their own token. Attacks: a replayed or forged state, a response from
 * another issuer, metadata claiming another resource; every log line, error and the vault file
 * are searched for the tokens.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfig, RemoteTargetConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { startProtectedUpstream, type ProtectedUpstream } from '../fixtures/protected-upstream.ts';
import { buildAggregateConfig } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { createTestLogger, remoteTarget } from '../support/gateway.ts';
import { openLegacyStream } from '../support/legacy-sse.ts';
import { modern, resultOf } from '../support/modern.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';
import { initializeWs, openWs, wsUrl } from '../support/ws-client.ts';

const KEYS = {
  alice: 'alice-key-0123456789abcdef',
  bob: 'bob-key-0123456789abcdef',
  carol: 'carol-key-0123456789abcdef',
};
const VAULT_KEY = 'vault-key-for-tests-0123456789abcdefghij';
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'user-oauth-test', version: '1' } } };

let as: AuthorizationServer;
let upstream: ProtectedUpstream;
let liar: ProtectedUpstream;
let gw: RunningGateway;
let dir: string;
let config: GatewayConfig;
const logLines: string[] = [];
const outputs: string[] = [];

const perUser = (name: string, url: string): RemoteTargetConfig => ({
  ...remoteTarget(name, { type: 'http', url }),
  oauth: { perUser: true, scopes: undefined, clientId: undefined, clientSecret: undefined },
});

/** A raw initialize on `path` as `who`: its JSON answer (kept for the token search). */
async function initialize(who: keyof typeof KEYS, path: string): Promise<Record<string, any>> {
  const res = await fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${KEYS[who]}` }, body: JSON.stringify(INIT) });
  const text = await res.text();
  outputs.push(text);
  return JSON.parse(text) as Record<string, any>;
}

/** The consent URL the gateway gives `who` for `path`'s upstream. */
async function consentUrl(who: keyof typeof KEYS, path = '/servers/docs/mcp'): Promise<string> {
  const answer = await initialize(who, path);
  expect(answer.error).toMatchObject({ code: -32042, data: { code: 'GW_UPSTREAM_AUTH_REQUIRED', target: 'docs' } });
  expect(answer.error.data.elicitations[0]).toMatchObject({ mode: 'url', url: answer.error.data.authorizationUrl });
  return answer.error.data.authorizationUrl as string;
}

/** The browser's visit to the gateway's callback. */
async function visit(url: URL | string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  const text = await res.text();
  outputs.push(text);
  return { status: res.status, text };
}

async function connectAccount(who: keyof typeof KEYS, account: string): Promise<void> {
  const back = await as.consent(await consentUrl(who), account);
  expect(back.origin).toBe(new URL(gw.url).origin);
  const page = await visit(back);
  expect(page.status, page.text).toBe(200);
}

async function client(who: keyof typeof KEYS, path: string): Promise<Client> {
  const c = new Client({ name: 'user-oauth-test', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(path, gw.url), { requestInit: { headers: { authorization: `Bearer ${KEYS[who]}` } } }));
  return c;
}

async function whoami(who: keyof typeof KEYS, path = '/servers/docs/mcp', tool = 'whoami'): Promise<string> {
  const c = await client(who, path);
  try {
    const result = await c.callTool({ name: tool, arguments: {} });
    outputs.push(JSON.stringify(result));
    return (result.content as Array<{ text: string }>)[0]!.text;
  } finally {
    await c.close();
  }
}

/** A tools/call on a fresh raw session of `who`: its JSON-RPC answer. */
async function rawCall(who: keyof typeof KEYS, path: string, tool: string): Promise<Record<string, any>> {
  const headers = { ...HEADERS, authorization: `Bearer ${KEYS[who]}` };
  const opened = await fetch(new URL(path, gw.url), { method: 'POST', headers, body: JSON.stringify(INIT) });
  outputs.push(await opened.text());
  const session = { ...headers, 'mcp-session-id': opened.headers.get('mcp-session-id') ?? '' };
  await (await fetch(new URL(path, gw.url), { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
  const res = await fetch(new URL(path, gw.url), { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } }) });
  const text = await res.text();
  outputs.push(text);
  await fetch(new URL(path, gw.url), { method: 'DELETE', headers: session });
  return JSON.parse(text) as Record<string, any>;
}

/** whoami over a raw WebSocket (the key offered as the `bearer.` subprotocol). */
async function whoamiWs(who: keyof typeof KEYS, path: string, tool: string): Promise<string> {
  const peer = await openWs(wsUrl(gw.url, path), ['mcp', `bearer.${KEYS[who]}`]);
  try {
    await initializeWs(peer);
    peer.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: tool, arguments: {} } });
    const answer = (await peer.until(7)).at(-1) as Record<string, any>;
    outputs.push(JSON.stringify(answer));
    return answer.result.content[0].text as string;
  } finally {
    peer.socket.close();
  }
}

/** whoami over the legacy HTTP+SSE transport. */
async function whoamiSse(who: keyof typeof KEYS, path: string, tool: string): Promise<string> {
  const auth = { authorization: `Bearer ${KEYS[who]}` };
  const stream = await openLegacyStream(new URL(path, gw.url), auth);
  const post = (message: unknown) => fetch(stream.endpoint, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(message) });
  try {
    await post(INIT);
    await stream.nextMessage();
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: tool, arguments: {} } });
    const answer = (await stream.nextMessage()) as Record<string, any>;
    outputs.push(JSON.stringify(answer));
    return answer.result.content[0].text as string;
  } finally {
    stream.close();
  }
}

/** whoami as one stateless 2026-07-28 request. */
async function whoami2026(who: keyof typeof KEYS, path: string, tool: string): Promise<string> {
  const answer = await modern(new URL(path, gw.url), 'tools/call', { name: tool, arguments: {} }, { headers: { authorization: `Bearer ${KEYS[who]}` } });
  outputs.push(answer.text);
  return ((resultOf(answer).content as Array<{ text: string }>)[0]!).text;
}

const bearerTokens = () => [...new Set(upstream.seen.map((h) => h.replace(/^Bearer /, '')))];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'user-oauth-'));
  as = await startAuthorizationServer({ scopes: ['mcp', 'write'], refreshTokens: true });
  upstream = await startProtectedUpstream(as);
  liar = await startProtectedUpstream(as);
  liar.claimedResource = 'http://127.0.0.1:1/elsewhere';
  const base = buildAggregateConfig({ targets: { docs: { target: perUser('docs', upstream.url) }, liar: { target: perUser('liar', liar.url) } } });
  config = { ...base, auth: keyAuth(KEYS), oauth: { key: VAULT_KEY, vaultFile: join(dir, 'vault.json'), publicUrl: undefined, consentTtlSec: 600, clientName: 'Switchboard test' } };
  gw = await startGateway(config, { logger: createTestLogger('debug', logLines) });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await liar?.close();
  await as?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("each user's own account at a remote server (oauth.perUser)", () => {
  it('two principals connect their own accounts; every later call carries their own token, on the server path and the aggregate', async () => {
    await connectAccount('alice', 'alice-upstream');
    await connectAccount('bob', 'bob-upstream');
    expect(await whoami('alice')).toBe('alice-upstream');
    expect(await whoami('bob')).toBe('bob-upstream');
    expect(await whoami('alice', '/mcp', 'docs__whoami')).toBe('alice-upstream');
    expect(await whoami('bob', '/mcp', 'docs__whoami')).toBe('bob-upstream');
    expect(bearerTokens().length).toBeGreaterThanOrEqual(2);
    const listed = await gw.connections!.connections();
    expect(listed.map((c) => [c.principal, c.target, c.upstreamSubject]).sort()).toEqual([
      ['key:alice', 'docs', 'alice-upstream'],
      ['key:bob', 'docs', 'bob-upstream'],
    ]);
  });

  it('an aggregate call to a server the caller has not connected asks for that server only', async () => {
    const answer = await rawCall('carol', '/mcp', 'docs__whoami');
    expect(answer.error).toMatchObject({ code: -32042, data: { code: 'GW_UPSTREAM_AUTH_REQUIRED', target: 'docs' } });
    expect(answer.error.data.elicitations).toHaveLength(1);
    expect(new URL(answer.error.data.authorizationUrl as string).searchParams.get('resource')).toBe(upstream.url);

    // An SDK v1 client (no URL elicitation) gets the clear error with the URL; after consent the same session goes on.
    const c = await client('carol', '/mcp');
    try {
      // Its tools are left out of the lists until the account is connected (documented).
      expect((await c.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('docs__'))).toEqual([]);
      const refused = await c.callTool({ name: 'docs__whoami', arguments: {} }).then(() => undefined, (err: unknown) => err as { code: number; message: string; data?: Record<string, unknown> });
      expect(refused?.code).toBe(-32042);
      expect(refused?.message).toContain('Connect your account at "docs": open http');
      const link = /open (\S+)/.exec(refused!.message)![1]!;
      expect((await visit(await as.consent(link, 'carol-upstream'))).status).toBe(200);
      const after = await c.callTool({ name: 'docs__whoami', arguments: {} });
      expect((after.content as Array<{ text: string }>)[0]!.text).toBe('carol-upstream');
      expect((await c.listTools()).tools.map((t) => t.name)).toContain('docs__whoami');
    } finally {
      await c.close();
    }
  });

  it("each principal's own token on every path: WebSocket, legacy SSE and 2026, server path and aggregate", async () => {
    for (const [who, account] of [['alice', 'alice-upstream'], ['bob', 'bob-upstream']] as const) {
      expect(await whoamiWs(who, '/servers/docs/ws', 'whoami')).toBe(account);
      expect(await whoamiWs(who, '/ws', 'docs__whoami')).toBe(account);
      expect(await whoamiSse(who, '/servers/docs/sse', 'whoami')).toBe(account);
      expect(await whoamiSse(who, '/sse', 'docs__whoami')).toBe(account);
      expect(await whoami2026(who, '/servers/docs/mcp', 'whoami')).toBe(account);
      expect(await whoami2026(who, '/mcp', 'docs__whoami')).toBe(account);
    }
  });

  it('a consent link is single-use; a forged state and a response from another issuer are refused', async () => {
    await gw.connections!.disconnect('key:alice', perUser('docs', upstream.url));
    await gw.connections!.disconnect('key:bob', perUser('docs', upstream.url));
    const back = await as.consent(await consentUrl('alice'), 'alice-upstream');
    const forged = new URL(back);
    forged.searchParams.set('state', 'forged-state');
    expect((await visit(forged)).status).toBe(400);
    const mixedUp = new URL(back);
    mixedUp.searchParams.set('iss', 'http://127.0.0.1:1');
    const refused = await visit(mixedUp);
    expect(refused.status).toBe(502);
    expect(refused.text).toContain('not from the expected authorization server');
    // The state was spent by the refused attempt: the genuine answer cannot be used after it.
    expect((await visit(back)).status).toBe(400);
    const again = await as.consent(await consentUrl('bob'), 'bob-upstream');
    expect((await visit(again)).status).toBe(200);
    expect((await visit(again)).status).toBe(400);
    expect(await whoami('bob')).toBe('bob-upstream');
    // Alice's refused attempt left no connection: she is asked again, with a fresh link.
    await connectAccount('alice', 'alice-upstream');
    expect(await whoami('alice')).toBe('alice-upstream');
  });

  it('a principal who follows a link made for another connects that other principal only', async () => {
    // Bob's link, completed in Alice's browser with Alice's upstream login: the state says Bob.
    await gw.connections!.disconnect('key:bob', perUser('docs', upstream.url));
    const link = await consentUrl('bob');
    expect((await visit(await as.consent(link, 'alice-upstream'))).status).toBe(200);
    expect(await whoami('alice')).toBe('alice-upstream');
    expect(await whoami('bob')).toBe('alice-upstream');
    await gw.connections!.disconnect('key:bob', perUser('docs', upstream.url));
    await connectAccount('bob', 'bob-upstream');
    expect(await whoami('bob')).toBe('bob-upstream');
  });

  it('metadata that names another resource is refused before any consent', async () => {
    const answer = await initialize('alice', '/servers/liar/mcp');
    expect(answer.error.data).toMatchObject({ code: 'GW_UPSTREAM_AUTH_FAILED', target: 'liar', reason: 'the protected resource metadata is for another resource' });
  });

  it('a token the upstream refuses is refreshed for the next request', async () => {
    expect(await whoami('alice')).toBe('alice-upstream');
    const before = bearerTokens();
    upstream.refuse(upstream.seen.at(-1)!.replace(/^Bearer /, ''));
    const c = await client('alice', '/mcp');
    try {
      await expect(c.callTool({ name: 'docs__whoami', arguments: {} })).rejects.toThrow(/401/);
    } finally {
      await c.close();
    }
    expect(await whoami('alice')).toBe('alice-upstream');
    expect(bearerTokens().length).toBeGreaterThan(before.length);
  });

  it('disconnecting revokes at the server; the next call asks for consent again, and reconnecting works', async () => {
    const revoked = as.revocations;
    expect(await gw.connections!.disconnect('key:alice', perUser('docs', upstream.url))).toBe(true);
    expect(as.revocations).toBeGreaterThan(revoked);
    await connectAccount('alice', 'alice-upstream');
    expect(await whoami('alice')).toBe('alice-upstream');
    expect(await whoami('bob')).toBe('bob-upstream');
  });

  it("an upstream's 403 insufficient_scope asks for consent to the union of scopes; the held token keeps serving", async () => {
    const refused = await rawCall('alice', '/mcp', 'docs__write_note');
    expect(refused.error).toMatchObject({ code: -32042, data: { code: 'GW_UPSTREAM_AUTH_REQUIRED', target: 'docs', reason: 'insufficient_scope', requiredScopes: ['mcp', 'write'] } });
    const link = new URL(refused.error.data.authorizationUrl as string);
    expect(link.searchParams.get('scope')?.split(' ').sort()).toEqual(['mcp', 'write']);
    expect(link.searchParams.get('resource')).toBe(upstream.url);
    expect(link.searchParams.get('code_challenge_method')).toBe('S256');
    expect(await whoami('alice')).toBe('alice-upstream');
    expect((await visit(await as.consent(link, 'alice-upstream'))).status).toBe(200);
    expect((await rawCall('alice', '/mcp', 'docs__write_note')).result.content[0].text).toBe('noted');
    // Bob's grant is his own: still without write.
    expect((await rawCall('bob', '/servers/docs/mcp', 'write_note')).error.data).toMatchObject({ code: 'GW_UPSTREAM_AUTH_REQUIRED', reason: 'insufficient_scope' });
  });

  it('connections survive a restart (the vault file), and the new process serves them', async () => {
    await gw.close();
    gw = await startGateway(config, { logger: createTestLogger('debug', logLines) });
    expect(await whoami('alice')).toBe('alice-upstream');
    expect(await whoami('bob', '/mcp', 'docs__whoami')).toBe('bob-upstream');
  });

  it('/connections shows a signed-in user their own accounts, connects and disconnects, under a strict CSP', async () => {
    const as_ = (who: keyof typeof KEYS) => ({ authorization: `Bearer ${KEYS[who]}` });
    expect((await fetch(new URL('/connections', gw.url))).status).toBe(401);
    const mine = await fetch(new URL('/connections', gw.url), { headers: as_('bob') });
    const html = await mine.text();
    outputs.push(html);
    expect(mine.status).toBe(200);
    expect(mine.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(html).toContain('connected as bob-upstream');
    expect(html).not.toContain('alice-upstream');
    const disconnect = await fetch(new URL('/connections/docs/disconnect', gw.url), { method: 'POST', headers: { ...as_('bob'), 'content-type': 'application/x-www-form-urlencoded' }, body: '', redirect: 'manual' });
    expect(disconnect.status).toBe(303);
    expect(await (await fetch(new URL('/connections', gw.url), { headers: as_('bob') })).text()).toContain('not connected');
    expect(await whoami('alice')).toBe('alice-upstream');
    const connect = await fetch(new URL('/connections/docs/connect', gw.url), { headers: as_('bob'), redirect: 'manual' });
    expect(connect.status).toBe(302);
    expect((await visit(await as.consent(connect.headers.get('location')!, 'bob-upstream'))).status).toBe(200);
    expect(await whoami('bob')).toBe('bob-upstream');
    expect((await fetch(new URL('/connections/nope/connect', gw.url), { headers: as_('bob'), redirect: 'manual' })).status).toBe(404);
  });

  it("one user's refused token never opens the target's circuit for everyone", async () => {
    upstream.refusedSubjects.add('alice-upstream');
    try {
      // More failed starts than circuitBreaker.startFailures (5), on the server path and the aggregate.
      for (let i = 0; i < 4; i++) {
        expect((await initialize('alice', '/servers/docs/mcp')).error.data).toMatchObject({ code: 'GW_UPSTREAM_HTTP_ERROR', status: 401 });
        expect((await rawCall('alice', '/mcp', 'docs__whoami')).error).toBeDefined();
      }
      expect(await whoami('bob')).toBe('bob-upstream');
      expect(await whoami('bob', '/mcp', 'docs__whoami')).toBe('bob-upstream');
    } finally {
      upstream.refusedSubjects.delete('alice-upstream');
    }
  });

  it('no token in the vault file, the log, or any answer', async () => {
    const vault = await readFile(join(dir, 'vault.json'), 'utf8');
    const tokens = bearerTokens();
    expect(tokens.length).toBeGreaterThan(2);
    for (const token of tokens) {
      expect(vault).not.toContain(token);
      for (const line of [...logLines, ...outputs]) expect(line).not.toContain(token);
    }
    expect(vault).not.toContain('alice');
    expect(logLines.some((l) => l.includes('connected an upstream account') && l.includes('alice-upstream'))).toBe(true);
  });
});
