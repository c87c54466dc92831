/**
 * Attacks on the reworked 2026-07-28 path (issue 34 item 4): a caller's host keys are now made
 * once per endpoint object, principal object, credential (at most 256) and asking capabilities,
 * and the endpoint the route resolved is reused. Each attack tries to make a cached key or
 * endpoint outlive what it stood for: a reload that changes what the same server name forwards or
 * removes it, 300 distinct credentials of one caller (past the memo's bound), two subjects over
 * one keep-alive socket, one caller declaring different capabilities. Raw 2026 requests over real
 * sockets to a recording Streamable HTTP upstream.
 */
import { Agent, fetch as fetchOn } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { buildAggregateConfig, colliderServer } from '../support/aggregate.ts';
import { type Issuer, jwtAuth, keyAuth, startIssuer } from '../support/auth-server.ts';
import { createTestLogger, remoteTarget } from '../support/gateway.ts';
import { envelope, errorOf, modern, resultOf, standardHeaders } from '../support/modern.ts';
import { textOf } from '../support/recorder.ts';

type Seen = Record<string, string | undefined>;

let remote: HttpFixture;
let gw: RunningGateway | undefined;

const configWith = (forwardAuthorization: boolean, withRemote = true, withGroup = false): GatewayConfig =>
  buildAggregateConfig({
    ...(withGroup ? { groups: { g: ['remote'] } } : {}),
    targets: {
      ...(withRemote ? { remote: { target: remoteTarget('remote', { type: 'http', url: remote.url, forwardAuthorization, protocol: '2025' }), exposure: { eager: false } } } : {}),
      col: colliderServer(),
    },
  });

/** What the upstream saw of the `headers` call a 2026 request with `authorization` made. */
async function seenBy(path: string, tool: string, authorization: string | undefined, meta?: Record<string, unknown>): Promise<Seen> {
  const answer = await modern(new URL(path, gw!.url), 'tools/call', { name: tool, arguments: {} }, { headers: { authorization }, ...(meta ? { meta } : {}) });
  return JSON.parse(textOf(resultOf(answer))) as Seen;
}

const PATHS = [
  ['/servers/remote/mcp', 'headers'],
  ['/mcp', 'remote__headers'],
] as const;

describe('a reload between two 2026 requests', () => {
  beforeAll(async () => {
    remote = await startHttpFixture({ getStream: false });
  });
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });
  afterAll(async () => {
    await remote?.close();
  });

  for (const [path, tool] of PATHS) {
    it(`on ${path}: forwardAuthorization turned on and off again for the same server name is what the next request sees`, async () => {
      gw = await startGateway(configWith(false), { logger: createTestLogger('silent', undefined) });
      const token = 'Bearer reload-token-0123';
      expect((await seenBy(path, tool, token)).authorization).toBeUndefined();
      gw.reload(configWith(true));
      expect((await seenBy(path, tool, token)).authorization).toBe(token);
      gw.reload(configWith(false));
      expect((await seenBy(path, tool, token)).authorization).toBeUndefined();
    });
  }

  it('a server removed between two requests on one keep-alive connection is 404 for the next, and served again once re-added', async () => {
    gw = await startGateway(configWith(false), { logger: createTestLogger('silent', undefined) });
    const url = new URL('/servers/remote/mcp', gw.url);
    const dispatcher = new Agent({ connections: 1 });
    const call = async () => {
      const params = { name: 'headers', arguments: {}, _meta: envelope() };
      const res = await fetchOn(url, { method: 'POST', headers: standardHeaders('tools/call', params), body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params }), dispatcher });
      return { status: res.status, body: (await res.json()) as { id?: unknown; result?: unknown; error?: { data?: { code?: string } } } };
    };
    try {
      expect((await call()).status).toBe(200);
      gw.reload(configWith(false, false));
      const refused = await call();
      expect(refused.status).toBe(404);
      expect(refused.body).toMatchObject({ id: 7, error: { data: { code: 'GW_ROUTE_NOT_FOUND' } } });
      // The aggregate no longer lists it either.
      expect(errorOf(await modern(new URL('/mcp', gw.url), 'tools/call', { name: 'remote__headers', arguments: {} })).code).toBe(-32602);
      gw.reload(configWith(false));
      const again = await call();
      expect(again.status).toBe(200);
      expect(again.body.result).toBeDefined();
    } finally {
      await dispatcher.close();
    }
  });

  it('a group removed between two 2026 requests is 404 for the next, and served again once re-added', async () => {
    gw = await startGateway(configWith(true, true, true), { logger: createTestLogger('silent', undefined) });
    const token = 'Bearer group-token';
    expect((await seenBy('/groups/g/mcp', 'remote__headers', token)).authorization).toBe(token);
    gw.reload(configWith(true, true, false));
    const refused = await modern(new URL('/groups/g/mcp', gw.url), 'tools/call', { name: 'remote__headers', arguments: {} }, { headers: { authorization: token }, id: 'gone' });
    expect(refused.status).toBe(404);
    expect(refused.json).toMatchObject({ id: 'gone', error: { data: { code: 'GW_ROUTE_NOT_FOUND' } } });
    gw.reload(configWith(true, true, true));
    expect((await seenBy('/groups/g/mcp', 'remote__headers', token)).authorization).toBe(token);
  });
});

describe('one caller, many credentials and capabilities (no gateway.auth, the credential forwarded)', () => {
  beforeAll(async () => {
    remote = await startHttpFixture({ getStream: false });
    // Each credential is a caller of its own here, with a held upstream session: room for all 300.
    const config = configWith(true);
    gw = await startGateway({ ...config, limits: { ...config.limits, maxSessions: 1000 } }, { logger: createTestLogger('silent', undefined) });
  });
  afterAll(async () => {
    await gw?.close();
    gw = undefined;
    await remote?.close();
  });

  it('300 distinct tokens (past the memo bound of 256 per endpoint and principal): each request carries its own, before and after the memo starts over', { timeout: 120_000 }, async () => {
    const tokens = Array.from({ length: 300 }, (_, i) => `Bearer many-${i}-${'x'.repeat(i % 7)}`);
    const wrong: string[] = [];
    const run = async (list: readonly string[]) => {
      for (let at = 0; at < list.length; at += 10) {
        await Promise.all(
          list.slice(at, at + 10).map(async (token) => {
            const seen = await seenBy('/servers/remote/mcp', 'headers', token);
            if (seen.authorization !== token) wrong.push(`${token} -> ${seen.authorization}`);
          }),
        );
      }
    };
    await run(tokens);
    // The first ones again, after the memo was cleared for the 257th: still each its own.
    await run(tokens.slice(0, 20));
    await run(tokens.slice(280));
    expect(wrong).toEqual([]);
  });

  it('the same credential declaring sampling, then nothing, then sampling: never the held session opened for the other declaration', async () => {
    const token = 'Bearer caps-token';
    const sampling = { 'io.modelcontextprotocol/clientCapabilities': { sampling: {} } };
    const none = { 'io.modelcontextprotocol/clientCapabilities': {} };
    const withSampling = (await seenBy('/servers/remote/mcp', 'headers', token, sampling))['mcp-session-id'];
    const without = (await seenBy('/servers/remote/mcp', 'headers', token, none))['mcp-session-id'];
    expect(withSampling).toBeDefined();
    expect(without).toBeDefined();
    expect(without).not.toBe(withSampling);
    expect((await seenBy('/servers/remote/mcp', 'headers', token, sampling))['mcp-session-id']).toBe(withSampling);
    expect((await seenBy('/servers/remote/mcp', 'headers', token, none))['mcp-session-id']).toBe(without);
    // What each upstream session was told at initialize: sampling only for the caller that declared it.
    const inits = remote.seen.filter((s) => (s.body as { method?: string } | undefined)?.method === 'initialize' && s.headers.authorization === token);
    const declared = inits.map((s) => 'sampling' in (((s.body as { params: { capabilities: object } }).params.capabilities) ?? {}));
    expect(declared.sort()).toEqual([false, true]);
  });
});

describe('two subjects alternating over one keep-alive socket (gateway.auth, the credential forwarded)', () => {
  let issuer: Issuer;
  beforeAll(async () => {
    issuer = await startIssuer();
    remote = await startHttpFixture({ getStream: false });
    gw = await startGateway({ ...configWith(true), auth: jwtAuth(issuer) }, { logger: createTestLogger('silent', undefined) });
  });
  afterAll(async () => {
    await gw?.close();
    gw = undefined;
    await remote?.close();
    await issuer?.close();
  });

  for (const [path, tool] of PATHS) {
    it(`on ${path}: each request is its own subject's, the socket's last proof never carried over`, async () => {
      const aud = new URL(path, gw!.url).href;
      const tokens = [
        `Bearer ${await issuer.mint({ aud, sub: 'alice', jti: 'a1' })}`,
        `Bearer ${await issuer.mint({ aud, sub: 'bob', jti: 'b1' })}`,
        `Bearer ${await issuer.mint({ aud, sub: 'alice', jti: 'a2' })}`,
      ];
      const dispatcher = new Agent({ connections: 1 });
      try {
        for (let round = 0; round < 3; round++) {
          for (const [i, token] of tokens.entries()) {
            const params = { name: tool, arguments: {}, _meta: envelope() };
            const headers = { ...standardHeaders('tools/call', params), authorization: token };
            const res = await fetchOn(new URL(path, gw!.url), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params }), dispatcher });
            const body = (await res.json()) as { result: unknown };
            expect((JSON.parse(textOf(body.result)) as Seen).authorization, `token ${i}, round ${round}`).toBe(token);
          }
        }
        // And without a token on that socket: refused, not served as the last subject.
        const params = { name: tool, arguments: {}, _meta: envelope() };
        const res = await fetchOn(new URL(path, gw!.url), { method: 'POST', headers: standardHeaders('tools/call', params), body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params }), dispatcher });
        expect(res.status).toBe(401);
        await res.arrayBuffer();
      } finally {
        await dispatcher.close();
      }
    });

    it(`on ${path}: two subjects' requests in flight at once, 40 of them, each carries its own token`, async () => {
      const aud = new URL(path, gw!.url).href;
      const tokens = [`Bearer ${await issuer.mint({ aud, sub: 'carol' })}`, `Bearer ${await issuer.mint({ aud, sub: 'dave' })}`];
      const seen = await Promise.all(Array.from({ length: 40 }, (_, i) => seenBy(path, tool, tokens[i % 2])));
      expect(seen.map((s) => s.authorization)).toEqual(Array.from({ length: 40 }, (_, i) => tokens[i % 2]));
    });
  }
});

describe('an API key in its own header, the Authorization forwarded (one principal object per socket, many credentials)', () => {
  beforeAll(async () => {
    remote = await startHttpFixture({ getStream: false });
    const auth = { ...keyAuth({ alice: 'key-of-alice-0123456789' }), apiKeyHeader: 'x-api-key', anonymous: true };
    gw = await startGateway({ ...configWith(true), auth }, { logger: createTestLogger('silent', undefined) });
  });
  afterAll(async () => {
    await gw?.close();
    gw = undefined;
    await remote?.close();
  });

  for (const [path, tool] of PATHS) {
    it(`on ${path}: the same key with a changed Authorization, and anonymous callers with theirs, each carry their own upstream`, async () => {
      const dispatcher = new Agent({ connections: 1 });
      const callWith = async (headers: Record<string, string>) => {
        const params = { name: tool, arguments: {}, _meta: envelope() };
        const res = await fetchOn(new URL(path, gw!.url), { method: 'POST', headers: { ...standardHeaders('tools/call', params), ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }), dispatcher });
        const text = await res.text();
        if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.headers.get('www-authenticate'))} ${text}`);
        return (JSON.parse(textOf((JSON.parse(text) as { result: unknown }).result)) as Seen).authorization;
      };
      try {
        for (let round = 0; round < 2; round++) {
          // Not Bearer: the gateway verifies a bearer token itself; another scheme is the upstream's alone.
          for (const upstream of ['Token upstream-one', 'Token upstream-two']) {
            expect(await callWith({ 'x-api-key': 'key-of-alice-0123456789', authorization: upstream }), `alice, round ${round}`).toBe(upstream);
            expect(await callWith({ authorization: `${upstream}-anonymous` }), `anonymous, round ${round}`).toBe(`${upstream}-anonymous`);
          }
        }
      } finally {
        await dispatcher.close();
      }
    });
  }
});
