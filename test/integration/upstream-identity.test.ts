/**
 * Per-principal upstream identity, seen by recording upstreams: a remote target gets the headers
 * its `principalHeaders` templates make for each caller, a stdio child the variables of its
 * `principalEnv`; the client's own credential reaches neither; and in shared mode a child started
 * for one principal never serves another.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { buildAggregateConfig, colliderServer } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { createTestLogger, remoteTarget } from '../support/gateway.ts';

const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef0' };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'identity-test', version: '1' } } };

let gw: RunningGateway;
let remote: HttpFixture;

/** A session on `path` as `who`: call tools on it, then end it. */
async function sessionAs(who: keyof typeof KEYS, path: string) {
  const auth = { authorization: `Bearer ${KEYS[who]}` };
  const opened = await fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...auth }, body: JSON.stringify(INIT) });
  expect(opened.status).toBe(200);
  await opened.text();
  const session = { 'mcp-session-id': opened.headers.get('mcp-session-id')! };
  const post = (body: unknown) => fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...auth, ...session }, body: JSON.stringify(body) });
  await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text();
  return {
    async call(tool: string): Promise<string> {
      const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } });
      return ((await res.json()) as { result: { content: Array<{ text: string }> } }).result.content[0]!.text;
    },
    close: () => fetch(new URL(path, gw.url), { method: 'DELETE', headers: { ...auth, ...session } }),
  };
}

async function callAs(who: keyof typeof KEYS, path: string, tool: string): Promise<string> {
  const session = await sessionAs(who, path);
  try {
    return await session.call(tool);
  } finally {
    await session.close();
  }
}

beforeAll(async () => {
  remote = await startHttpFixture({ getStream: false });
  const base = buildAggregateConfig({
    targets: {
      remote: { target: remoteTarget('remote', { type: 'http', url: remote.url, principalHeaders: { 'x-user': '{sub}', 'x-principal': '{principal}' } }), exposure: { eager: false } },
      child: { ...colliderServer(), principalEnv: { MCP_USER: 'user-{sub}' } },
      pooled: { ...colliderServer(), principalEnv: { MCP_USER: '{sub}' }, upstream: { mode: 'shared', children: 1 } },
    },
  });
  const auth = keyAuth(KEYS);
  gw = await startGateway({ ...base, auth }, { logger: createTestLogger('silent', undefined) });
});

afterAll(async () => {
  await gw?.close();
  await remote?.close();
});

describe('upstream identity per principal', () => {
  it('a remote target sees each caller in its templated headers, and never the client credential', async () => {
    for (const who of ['alice', 'bob'] as const) {
      const seen = JSON.parse(await callAs(who, '/servers/remote/mcp', 'headers')) as Record<string, string | undefined>;
      expect(seen['x-user']).toBe(who);
      expect(seen['x-principal']).toBe(`key:${who}`);
      expect(seen.authorization).toBeUndefined();
    }
  });

  it("a stdio child gets the caller's variables", async () => {
    for (const who of ['alice', 'bob'] as const) {
      expect(JSON.parse(await callAs(who, '/servers/child/mcp', 'whoami')).user).toBe(`user-${who}`);
    }
  });

  it('in shared mode, a principal gets a child of its own, shared only among its own sessions', async () => {
    type Whoami = { pid: number; user: string };
    const alice = await sessionAs('alice', '/servers/pooled/mcp');
    const alice2 = await sessionAs('alice', '/servers/pooled/mcp');
    const bob = await sessionAs('bob', '/servers/pooled/mcp');
    try {
      const [a, a2, b] = [JSON.parse(await alice.call('whoami')) as Whoami, JSON.parse(await alice2.call('whoami')) as Whoami, JSON.parse(await bob.call('whoami')) as Whoami];
      expect([a.user, a2.user, b.user]).toEqual(['alice', 'alice', 'bob']);
      // Alice's two sessions share her live child; Bob's runs elsewhere while hers is still up.
      expect(a2.pid).toBe(a.pid);
      expect(b.pid).not.toBe(a.pid);
    } finally {
      await Promise.all([alice.close(), alice2.close(), bob.close()]);
    }
  });

  it("an aggregate session never sees what a per-principal upstream told another principal's session", async () => {
    // Alice's session starts the (lazy) remote member: the gateway learns its capabilities and instructions.
    const alice = await sessionAs('alice', '/mcp');
    expect(JSON.parse(await alice.call('remote__headers'))['x-user']).toBe('alice');
    await alice.close();
    // Bob's initialize answers before his own remote member starts: Alice's instructions must not be in it.
    const opened = await fetch(new URL('/mcp', gw.url), { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${KEYS.bob}` }, body: JSON.stringify(INIT) });
    const init = (await opened.json()) as { result: { instructions?: string } };
    expect(init.result.instructions ?? '').not.toContain('alice');
    await fetch(new URL('/mcp', gw.url), { method: 'DELETE', headers: { authorization: `Bearer ${KEYS.bob}`, 'mcp-session-id': opened.headers.get('mcp-session-id')! } });
    // Alice's next session is told what her own upstream said.
    const again = await fetch(new URL('/mcp', gw.url), { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${KEYS.alice}` }, body: JSON.stringify(INIT) });
    expect(((await again.json()) as { result: { instructions?: string } }).result.instructions).toContain('Serving alice');
    await fetch(new URL('/mcp', gw.url), { method: 'DELETE', headers: { authorization: `Bearer ${KEYS.alice}`, 'mcp-session-id': again.headers.get('mcp-session-id')! } });
  });
});
