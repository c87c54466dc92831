/**
 * One caller's credential never reaches the upstream for another (issue 21, item 1). A recording
 * Streamable HTTP upstream (2025) behind `forwardAuthorization` reports the Authorization each
 * request carried; clients with their own tokens, and one with none, call it interleaved, on the
 * 2026 path (stateless requests, served on sessions the gateway holds) and the 2025 path (their own
 * sessions), on the server's own path and through the aggregate. Without gateway.auth and with it
 * (two tokens of one subject from a real issuer's keys).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { credentialTag, startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { buildAggregateConfig, colliderServer } from '../support/aggregate.ts';
import { type Issuer, jwtAuth, startIssuer } from '../support/auth-server.ts';
import { createTestLogger, remoteTarget } from '../support/gateway.ts';
import { modern, resultOf } from '../support/modern.ts';
import { MCP_HEADERS, textOf } from '../support/recorder.ts';

type Seen = Record<string, string | undefined>;

let remote: HttpFixture;
let gw: RunningGateway;

/** What the upstream saw of the request that ran `headers`, for a 2026 request with `authorization`. */
async function modernCall(path: string, tool: string, authorization: string | undefined): Promise<Seen> {
  const answer = await modern(new URL(path, gw.url), 'tools/call', { name: tool, arguments: {} }, { headers: { authorization } });
  return JSON.parse(textOf(resultOf(answer))) as Seen;
}

/** A 2025 session on `path` with `authorization` (none: no header). */
async function session(path: string, authorization: string | undefined) {
  const auth: Record<string, string> = authorization === undefined ? {} : { authorization };
  const url = new URL(path, gw.url);
  const headers = { ...MCP_HEADERS, 'mcp-protocol-version': '2025-11-25', ...auth };
  const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'identity', version: '1' } } };
  const opened = await fetch(url, { method: 'POST', headers, body: JSON.stringify(init) });
  expect(opened.status).toBe(200);
  await opened.text();
  const id = { 'mcp-session-id': opened.headers.get('mcp-session-id')! };
  await (await fetch(url, { method: 'POST', headers: { ...headers, ...id }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
  let next = 1;
  return {
    async call(tool: string): Promise<Seen> {
      const res = await fetch(url, { method: 'POST', headers: { ...headers, ...id }, body: JSON.stringify({ jsonrpc: '2.0', id: next++, method: 'tools/call', params: { name: tool, arguments: {} } }) });
      return JSON.parse(textOf(((await res.json()) as { result: unknown }).result)) as Seen;
    },
    close: async () => void (await fetch(url, { method: 'DELETE', headers: { ...auth, ...id } })).arrayBuffer(),
  };
}

/** Every upstream session carried one Authorization (or none) on every request it got. */
function oneCredentialPerUpstreamSession(fixture: HttpFixture): void {
  const bySession = new Map<string, Set<string>>();
  for (const seen of fixture.seen) {
    const id = seen.headers['mcp-session-id'];
    if (id === undefined) continue;
    let values = bySession.get(id);
    if (values === undefined) bySession.set(id, (values = new Set()));
    values.add(seen.headers.authorization ?? '(none)');
  }
  for (const [id, values] of bySession) expect([...values], `upstream session ${id}`).toHaveLength(1);
}

const CLIENTS = [
  { who: 'a', authorization: 'Bearer token-of-client-a' },
  { who: 'b', authorization: 'Bearer token-of-client-b' },
  { who: 'none', authorization: undefined },
] as const;

describe('without gateway.auth', () => {
  beforeAll(async () => {
    remote = await startHttpFixture({ getStream: false });
    const config = buildAggregateConfig({
      targets: {
        remote: { target: remoteTarget('remote', { type: 'http', url: remote.url, forwardAuthorization: true, protocol: '2025' }), exposure: { eager: false } },
        plain: { target: remoteTarget('plain', { type: 'http', url: remote.url, protocol: '2025' }), exposure: { eager: false } },
        col: colliderServer(),
      },
    });
    gw = await startGateway(config, { logger: createTestLogger('silent', undefined) });
  });

  afterAll(async () => {
    await gw?.close();
    await remote?.close();
  });

  for (const [path, tool] of [['/servers/remote/mcp', 'headers'], ['/mcp', 'remote__headers']] as const) {
    it(`2026 requests on ${path}: each client's own token reaches the upstream, never another's`, async () => {
      for (let round = 0; round < 2; round++) {
        for (const { who, authorization } of CLIENTS) {
          expect((await modernCall(path, tool, authorization)).authorization, `client ${who}, round ${round}`).toBe(authorization);
        }
      }
      oneCredentialPerUpstreamSession(remote);
    });

    it(`2025 sessions on ${path}: each client's own token reaches the upstream, never another's`, async () => {
      const sessions = await Promise.all(CLIENTS.map((c) => session(path, c.authorization)));
      try {
        for (let round = 0; round < 2; round++) {
          for (const [i, { who, authorization }] of CLIENTS.entries()) {
            expect((await sessions[i]!.call(tool)).authorization, `client ${who}, round ${round}`).toBe(authorization);
          }
        }
      } finally {
        await Promise.all(sessions.map((s) => s.close()));
      }
      oneCredentialPerUpstreamSession(remote);
    });
  }

  it("what the upstream told one client's session (its instructions) is never shown to another client, on either era", async () => {
    // Client A's session starts the lazy remote member: the gateway learns its instructions for A.
    const a = await session('/mcp', CLIENTS[0].authorization);
    try {
      expect((await a.call('remote__headers')).authorization).toBe(CLIENTS[0].authorization);
    } finally {
      await a.close();
    }
    const tagOfA = credentialTag(CLIENTS[0].authorization);
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'b', version: '1' } } });
    for (const { authorization } of CLIENTS.slice(1)) {
      // A 2025 initialize answers before the member starts; a 2026 discover from the held session's.
      const opened = await fetch(new URL('/mcp', gw.url), { method: 'POST', headers: { ...MCP_HEADERS, ...(authorization === undefined ? {} : { authorization }) }, body: initialize });
      expect(await opened.text()).not.toContain(tagOfA);
      await fetch(new URL('/mcp', gw.url), { method: 'DELETE', headers: { ...(authorization === undefined ? {} : { authorization }), 'mcp-session-id': opened.headers.get('mcp-session-id')! } });
      const discovered = await modern(new URL('/mcp', gw.url), 'server/discover', {}, { headers: { authorization } });
      expect(discovered.status).toBe(200);
      expect(discovered.text).not.toContain(tagOfA);
    }
    // A's own next session is told what its upstream said (the test can see a leak).
    const again = await fetch(new URL('/mcp', gw.url), { method: 'POST', headers: { ...MCP_HEADERS, authorization: CLIENTS[0].authorization }, body: initialize });
    expect(await again.text()).toContain(tagOfA);
    await fetch(new URL('/mcp', gw.url), { method: 'DELETE', headers: { authorization: CLIENTS[0].authorization, 'mcp-session-id': again.headers.get('mcp-session-id')! } });
  });

  it('where nothing is forwarded, callers presenting different credentials still get upstream sessions of their own; callers with none are one anonymous caller', async () => {
    const upstreamSession = async (authorization: string | undefined) => {
      const seen = await modernCall('/servers/plain/mcp', 'headers', authorization);
      expect(seen.authorization).toBeUndefined();
      return seen['mcp-session-id'];
    };
    const a = await upstreamSession('Bearer token-of-client-a');
    const b = await upstreamSession('Bearer token-of-client-b');
    const none = await upstreamSession(undefined);
    expect(new Set([a, b, none]).size).toBe(3);
    expect(await upstreamSession('Bearer token-of-client-a')).toBe(a);
    expect(await upstreamSession(undefined)).toBe(none);
  });
});

describe('with gateway.auth: two tokens of one subject, and another subject', () => {
  let issuer: Issuer;

  beforeAll(async () => {
    issuer = await startIssuer();
    remote = await startHttpFixture({ getStream: false });
    const config = buildAggregateConfig({
      targets: {
        remote: { target: remoteTarget('remote', { type: 'http', url: remote.url, forwardAuthorization: true, protocol: '2025' }), exposure: { eager: false } },
        col: colliderServer(),
      },
    });
    const auth: AuthConfig = jwtAuth(issuer);
    gw = await startGateway({ ...config, auth }, { logger: createTestLogger('silent', undefined) });
  });

  afterAll(async () => {
    await gw?.close();
    await remote?.close();
    await issuer?.close();
  });

  for (const [path, tool] of [['/servers/remote/mcp', 'headers'], ['/mcp', 'remote__headers']] as const) {
    it(`2026 requests on ${path}: each token is the one its own requests carry upstream`, async () => {
      const aud = new URL(path, gw.url).href;
      const tokens = [
        `Bearer ${await issuer.mint({ aud, sub: 'alice', jti: 'first' })}`,
        `Bearer ${await issuer.mint({ aud, sub: 'alice', jti: 'second' })}`,
        `Bearer ${await issuer.mint({ aud, sub: 'bob' })}`,
      ];
      for (let round = 0; round < 2; round++) {
        for (const [i, token] of tokens.entries()) expect((await modernCall(path, tool, token)).authorization, `token ${i}, round ${round}`).toBe(token);
      }
      oneCredentialPerUpstreamSession(remote);
    });
  }
});
