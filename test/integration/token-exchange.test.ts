/**
 * RFC 8693 token exchange for a remote target, against oidc-provider's token endpoint (the grant
 * registered with `registerGrantType`, test/support/oidc-provider.ts) and a recording Streamable
 * HTTP upstream: each principal's token is exchanged for one whose audience is the upstream; the
 * upstream sees only that, never the client's own token; two principals never share one; a
 * principal's sessions reuse its token; a failed exchange is a clear JSON-RPC error without
 * secrets, and the gateway keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { buildAggregateConfig } from '../support/aggregate.ts';
import { createTestLogger, remoteTarget } from '../support/gateway.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';
import { initializeWs, openWs, wsUrl } from '../support/ws-client.ts';
import { jwtAuth } from '../support/auth-server.ts';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'exchange-test', version: '1' } } };

let as: AuthorizationServer;
let upstream: HttpFixture;
let gw: RunningGateway;
const logLines: string[] = [];
const secrets: string[] = [];

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

/** A session on `path` with `token`: its tool calls answer with their JSON-RPC message. */
async function sessionWith(token: string, path: string) {
  let auth = { authorization: `Bearer ${token}` };
  const opened = await fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...auth }, body: JSON.stringify(INIT) });
  const initText = await opened.text();
  const session = { 'mcp-session-id': opened.headers.get('mcp-session-id') ?? '' };
  const post = (body: unknown) => fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...auth, ...session }, body: JSON.stringify(body) });
  if (opened.status === 200) await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text();
  return {
    status: opened.status,
    init: JSON.parse(initText) as Record<string, any>,
    async call(tool: string): Promise<Record<string, any>> {
      const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } });
      return (await res.json()) as Record<string, any>;
    },
    /** The client refreshed its token: later requests carry this one. */
    refresh(next: string) {
      auth = { authorization: `Bearer ${next}` };
    },
    close: () => fetch(new URL(path, gw.url), { method: 'DELETE', headers: { ...auth, ...session } }),
  };
}

/** The Authorization the upstream saw on the `headers` call of a new session of `token`. */
async function upstreamAuthorization(token: string): Promise<string> {
  const s = await sessionWith(token, '/servers/remote/mcp');
  try {
    const answer = await s.call('headers');
    return (JSON.parse(answer.result.content[0].text as string) as Record<string, string>).authorization!;
  } finally {
    await s.close();
  }
}

const gatewayResource = (path: string) => new URL(path, gw.url).href;

beforeAll(async () => {
  as = await startAuthorizationServer();
  upstream = await startHttpFixture({ getStream: false });
  const exchange = { tokenEndpoint: as.tokenEndpoint, ...as.client('gateway'), audience: undefined, resource: upstream.url, scope: undefined, maxCachedTokens: 100 };
  secrets.push(exchange.clientSecret);
  const base = buildAggregateConfig({
    targets: {
      remote: { target: remoteTarget('remote', { type: 'http', url: upstream.url, tokenExchange: exchange }) },
      // The same endpoint, but the gateway's client secret is wrong: every exchange is refused.
      broken: { target: remoteTarget('broken', { type: 'http', url: upstream.url, tokenExchange: { ...exchange, clientSecret: 'wrong-secret-0123456789' } }) },
    },
  });
  secrets.push('wrong-secret-0123456789');
  const auth: AuthConfig = jwtAuth(as);
  gw = await startGateway({ ...base, auth }, { logger: createTestLogger('debug', logLines) });
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await as?.close();
});

describe('token exchange (RFC 8693) for a remote target', () => {
  it("sends each principal's exchanged token upstream, never the client's own, and never one principal's to another", async () => {
    const clientA = await as.issue('svc-a', gatewayResource('/servers/remote/mcp'));
    const clientB = await as.issue('svc-b', gatewayResource('/servers/remote/mcp'));
    secrets.push(clientA, clientB);
    const before = as.exchanges;
    const seenA = await upstreamAuthorization(clientA);
    const seenB = await upstreamAuthorization(clientB);
    const [tokenA, tokenB] = [seenA.replace(/^Bearer /, ''), seenB.replace(/^Bearer /, '')];
    secrets.push(tokenA, tokenB);
    expect(seenA).toMatch(/^Bearer /);
    expect(tokenA).not.toBe(clientA);
    expect(tokenB).not.toBe(clientB);
    expect(tokenA).not.toBe(tokenB);
    expect(claimsOf(tokenA)).toMatchObject({ iss: as.issuer, sub: 'svc-a', aud: upstream.url });
    expect(claimsOf(tokenB)).toMatchObject({ iss: as.issuer, sub: 'svc-b', aud: upstream.url });
    // Not one request reached the upstream with a client's own token.
    const presented = upstream.seen.map((r) => r.headers.authorization);
    expect(presented.every((h) => h === seenA || h === seenB)).toBe(true);
    expect(as.exchanges - before).toBe(2);

    // A's next session, with a fresh token of A's own: the cached exchanged token, no new exchange.
    const clientA2 = await as.issue('svc-a', gatewayResource('/servers/remote/mcp'));
    secrets.push(clientA2);
    expect(await upstreamAuthorization(clientA2)).toBe(seenA);
    expect(as.exchanges - before).toBe(2);
  });

  it('a token the upstream refuses (401) is forgotten: the next request exchanges again', async () => {
    const client = await as.issue('svc-a', gatewayResource('/servers/remote/mcp'));
    secrets.push(client);
    const s = await sessionWith(client, '/servers/remote/mcp');
    try {
      const first = JSON.parse((await s.call('headers')).result.content[0].text as string) as Record<string, string>;
      const before = as.exchanges;
      expect((await s.call('fail401')).error.data).toMatchObject({ code: 'GW_UPSTREAM_HTTP_ERROR', status: 401 });
      const after = JSON.parse((await s.call('headers')).result.content[0].text as string) as Record<string, string>;
      secrets.push(after.authorization!.replace(/^Bearer /, ''));
      expect(as.exchanges - before).toBe(1);
      expect(after.authorization).not.toBe(first.authorization);
    } finally {
      await s.close();
    }
  });

  it("a client's refreshed token on the same session is the subject of the next exchange", async () => {
    const first = await as.issue('svc-b', gatewayResource('/servers/remote/mcp'));
    const refreshed = await as.issue('svc-b', gatewayResource('/servers/remote/mcp'));
    secrets.push(first, refreshed);
    const s = await sessionWith(first, '/servers/remote/mcp');
    try {
      expect((await s.call('headers')).result).toBeDefined();
      s.refresh(refreshed);
      // The upstream refuses the exchanged token: the next request exchanges again, with the refreshed token.
      await s.call('fail401');
      const after = JSON.parse((await s.call('headers')).result.content[0].text as string) as Record<string, string>;
      secrets.push(after.authorization!.replace(/^Bearer /, ''));
      expect(as.lastSubjectToken === refreshed, 'the refreshed token was presented').toBe(true);
    } finally {
      await s.close();
    }
  });

  it('a refused exchange is GW_TOKEN_EXCHANGE_FAILED, without token or secret, and the gateway keeps serving', async () => {
    const token = await as.issue('svc-a', gatewayResource('/servers/broken/mcp'));
    secrets.push(token);
    const s = await sessionWith(token, '/servers/broken/mcp');
    // initialize is the first request that needs the upstream: it carries the error.
    const error = (s.init.error ?? (await s.call('headers')).error) as { code: number; message: string; data: Record<string, unknown> };
    expect(error.code).toBe(-32603);
    expect(error.data).toMatchObject({ code: 'GW_TOKEN_EXCHANGE_FAILED', target: 'broken', reason: 'refused', status: 401, correlationId: expect.any(String) });
    const text = JSON.stringify(error);
    expect(secrets.some((secret) => text.includes(secret))).toBe(false);
    await s.close();
    const good = await as.issue('svc-b', gatewayResource('/servers/remote/mcp'));
    secrets.push(good);
    expect(await upstreamAuthorization(good)).toMatch(/^Bearer /);
  });

  it("a browser's WebSocket token (carried as a subprotocol) is exchanged like a header's", async () => {
    const token = await as.issue('gateway', gatewayResource('/servers/remote/ws'));
    secrets.push(token);
    const peer = await openWs(wsUrl(gw.url, '/servers/remote/ws'), ['mcp', `bearer.${token}`]);
    await initializeWs(peer);
    peer.send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'headers', arguments: {} } });
    const [answer] = (await peer.until(5)).slice(-1) as Array<{ result: { content: Array<{ text: string }> } }>;
    const seen = (JSON.parse(answer!.result.content[0]!.text) as Record<string, string>).authorization!;
    const exchanged = seen.replace(/^Bearer /, '');
    secrets.push(exchanged);
    expect(exchanged).not.toBe(token);
    expect(claimsOf(exchanged)).toMatchObject({ sub: 'gateway', aud: upstream.url });
    peer.socket.close();
  });

  it('no token, key or secret used in this file appears in any log line', () => {
    expect(logLines.length).toBeGreaterThan(0);
    const all = logLines.join('\n');
    expect(secrets.filter((secret) => all.includes(secret))).toEqual([]);
  });
});
