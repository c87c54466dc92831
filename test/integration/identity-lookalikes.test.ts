/**
 * Look-alike subjects upstream: principals whose token subjects differ only by invisible or
 * non-ASCII characters (`alice\u200b`, `al\u00adice`, `alice\u00a0`, `alice\u0000`) must reach a
 * remote upstream's `principalHeaders` and a stdio child's `principalEnv` as distinct values, none
 * equal to the plain `alice`; a subject with CR/LF cannot add a header. Tokens come from a real
 * issuer (JWKS over HTTP), the remote upstream records what it received.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { buildAggregateConfig, colliderServer } from '../support/aggregate.ts';
import { type Issuer, jwtAuth, startIssuer } from '../support/auth-server.ts';
import { createTestLogger, remoteTarget } from '../support/gateway.ts';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'lookalike-test', version: '1' } } };
const LOOK_ALIKES = ['alice\u200b', 'al\u00adice', 'alice\u00a0', 'alice\u0000', 'alice%E2%80%8B'];

let issuer: Issuer;
let gw: RunningGateway;
let remote: HttpFixture;

/** Calls `tool` on `path` in a session of its own as the token subject `sub`; the tool's text. */
async function callAs(sub: string, path: string, tool: string): Promise<string> {
  const auth = { authorization: `Bearer ${await issuer.mint({ sub, aud: new URL(path, gw.url).href })}` };
  const opened = await fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...auth }, body: JSON.stringify(INIT) });
  expect(opened.status).toBe(200);
  await opened.text();
  const session = { 'mcp-session-id': opened.headers.get('mcp-session-id')! };
  const post = (body: unknown) => fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...auth, ...session }, body: JSON.stringify(body) });
  try {
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text();
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } });
    return ((await res.json()) as { result: { content: Array<{ text: string }> } }).result.content[0]!.text;
  } finally {
    await fetch(new URL(path, gw.url), { method: 'DELETE', headers: { ...auth, ...session } });
  }
}

beforeAll(async () => {
  issuer = await startIssuer();
  remote = await startHttpFixture({ getStream: false });
  const base = buildAggregateConfig({
    targets: {
      remote: { target: remoteTarget('remote', { type: 'http', url: remote.url, principalHeaders: { 'x-user': '{sub}', 'x-principal': '{principal}' } }), exposure: { eager: false } },
      child: { ...colliderServer(), principalEnv: { MCP_USER: '{sub}' } },
    },
  });
  const auth: AuthConfig = jwtAuth(issuer);
  gw = await startGateway({ ...base, auth }, { logger: createTestLogger('silent', undefined) });
});

afterAll(async () => {
  await gw?.close();
  await remote?.close();
  await issuer?.close();
});

describe('look-alike subjects upstream', () => {
  it('arrive in principalHeaders as distinct values, none equal to the plain subject', async () => {
    const users: string[] = [];
    const principals: string[] = [];
    for (const sub of ['alice', ...LOOK_ALIKES]) {
      const seen = JSON.parse(await callAs(sub, '/servers/remote/mcp', 'headers')) as Record<string, string>;
      users.push(seen['x-user']!);
      principals.push(seen['x-principal']!);
    }
    expect(users[0]).toBe('alice');
    expect(new Set(users).size).toBe(users.length);
    expect(new Set(principals).size).toBe(principals.length);
    // The encoding is the documented one: percent-decoding gives each subject back.
    expect(users.map((u) => decodeURIComponent(u))).toEqual(['alice', ...LOOK_ALIKES]);
  });

  it('arrive in principalEnv as distinct values, none equal to the plain subject', async () => {
    const users: string[] = [];
    for (const sub of ['alice', ...LOOK_ALIKES]) users.push((JSON.parse(await callAs(sub, '/servers/child/mcp', 'whoami')) as { user: string }).user);
    expect(users[0]).toBe('alice');
    expect(new Set(users).size).toBe(users.length);
  });

  it('a subject with CR/LF cannot add a header', async () => {
    const seen = JSON.parse(await callAs('mallory\r\nX-Api-Key: injected', '/servers/remote/mcp', 'headers')) as Record<string, string | undefined>;
    expect(seen['x-api-key']).toBeUndefined();
    expect(seen['x-user']).toBe('mallory%0D%0AX-Api-Key: injected');
  });
});
