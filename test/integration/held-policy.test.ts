/**
 * Every 2026 request is judged by its own credential and the policy in force (issue 21, item 3),
 * although it is served on a session the gateway holds: narrow and wide tokens of one subject,
 * minted by a real authorization server (oidc-provider), interleaved; a reload that denies a tool
 * while a 2026 caller keeps calling. And a listen stream is never granted a resource the policy
 * denies, nor is the upstream subscribed to it ("Also seen"). On a server's own path and through
 * the aggregate, over real sockets and real stdio children (the collider fixture).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AuthConfig, GatewayConfig, PolicyRule } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { encodeResourceUri } from '../../src/router/resource-uri.ts';
import { buildAggregateConfig, colliderServer, connectClient } from '../support/aggregate.ts';
import { createTestLogger } from '../support/gateway.ts';
import { envelope, errorOf, modern, readSseFrames, resultOf, standardHeaders } from '../support/modern.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';
import { textOf } from '../support/recorder.ts';
import { jwtAuth } from '../support/auth-server.ts';

const rule = (r: Partial<PolicyRule>): PolicyRule => ({ effect: 'allow', principals: ['*'], scopes: [], claims: {}, servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'], ...r });
const config = (rules: PolicyRule[]): GatewayConfig => ({
  ...buildAggregateConfig({ targets: { col: colliderServer('--page-size=100'), other: colliderServer('--page-size=100') } }),
  policy: { rules },
});
/** The tool named `name` on `path`: the aggregate prefixes it with its server. */
const toolOn = (path: string, name: string) => (path === '/mcp' ? `col__${name}` : name);
const PATHS = ['/servers/col/mcp', '/mcp'] as const;

const call = (url: URL, name: string, authorization?: string) => modern(url, 'tools/call', { name, arguments: { message: 'hi' } }, { headers: { authorization } });
const toolNames = async (url: URL, authorization?: string) => (resultOf(await modern(url, 'tools/list', {}, { headers: { authorization } })).tools as Array<{ name: string }>).map((t) => t.name);

describe('narrow and wide tokens of one subject, interleaved on the 2026 path', () => {
  let as: AuthorizationServer;
  let gw: RunningGateway;

  beforeAll(async () => {
    as = await startAuthorizationServer({ scopes: ['mcp', 'admin'] });
    const auth: AuthConfig = jwtAuth(as, ['mcp']);
    // Everyone: echo and whoami. The `admin` scope: every tool.
    gw = await startGateway({ ...config([rule({ tools: ['echo', 'whoami'] }), rule({ scopes: ['admin'] })]), auth }, { logger: createTestLogger('silent', undefined) });
  });

  afterAll(async () => {
    await gw?.close();
    await as?.close();
  });

  for (const path of PATHS) {
    it(`on ${path}: each request gets what its own token's scopes grant`, async () => {
      const url = new URL(path, gw.url);
      const wide = `Bearer ${await as.issue('svc-a', url.href, 'mcp admin')}`;
      const narrow = `Bearer ${await as.issue('svc-a', url.href, 'mcp')}`;
      const secret = toolOn(path, 'secret_admin');
      for (let round = 0; round < 2; round++) {
        // The wide token first: the session held for it has the wide grant.
        expect(textOf(resultOf(await call(url, secret, wide))), `round ${round}`).toContain('secret');
        const refused = await call(url, secret, narrow);
        expect(errorOf(refused), `round ${round}`).toMatchObject({ code: -32602, message: `Unknown tool: ${secret}` });
        expect(await toolNames(url, narrow)).not.toContain(secret);
        expect(await toolNames(url, narrow)).toContain(toolOn(path, 'echo'));
        expect(await toolNames(url, wide)).toContain(secret);
        expect(textOf(resultOf(await call(url, toolOn(path, 'echo'), narrow)))).toContain('hi');
      }
    });
  }
});

describe('a reload while a 2026 caller keeps calling', () => {
  let gw: RunningGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  for (const path of PATHS) {
    it(`on ${path}: the call after a reload that denies the tool is refused, as an unknown tool`, async () => {
      gw = await startGateway(config([rule({})]), { logger: createTestLogger('silent', undefined) });
      const url = new URL(path, gw.url);
      const echo = toolOn(path, 'echo');
      for (let i = 0; i < 2; i++) expect(textOf(resultOf(await call(url, echo)))).toContain('hi');
      gw.reload(config([rule({}), rule({ effect: 'deny', tools: ['echo'], prompts: [], resources: [] })]));
      for (let i = 0; i < 2; i++) {
        expect(errorOf(await call(url, echo)), `call ${i} after the reload`).toMatchObject({ code: -32602, message: `Unknown tool: ${echo}` });
        expect(await toolNames(url)).not.toContain(echo);
      }
      expect(textOf(resultOf(await call(url, toolOn(path, 'whoami'))))).toContain('pid');
    });
  }

  it('a live 2025 session on the aggregate gets the new policy too (as documented): its next call is refused', async () => {
    gw = await startGateway(config([rule({})]), { logger: createTestLogger('silent', undefined) });
    const client = await connectClient(gw);
    try {
      expect(textOf(await client.callTool({ name: 'col__echo', arguments: { message: 'hi' } }))).toContain('hi');
      gw.reload(config([rule({}), rule({ effect: 'deny', tools: ['echo'], prompts: [], resources: [] })]));
      await expect(client.callTool({ name: 'col__echo', arguments: { message: 'hi' } })).rejects.toThrow('Unknown tool: col__echo');
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('col__echo');
    } finally {
      await client.close();
    }
  });
});

/** Opens a listen stream on `url`; its frames arrive in `frames` until `stop()`. */
async function listen(url: URL, uris: string[]) {
  const abort = new AbortController();
  const params = { notifications: { resourceSubscriptions: uris }, _meta: envelope() };
  const res = await fetch(url, { method: 'POST', headers: standardHeaders('subscriptions/listen', {}), body: JSON.stringify({ jsonrpc: '2.0', id: 'L1', method: 'subscriptions/listen', params }), signal: abort.signal });
  const { frames, reading } = readSseFrames(res);
  return {
    frames,
    async stop() {
      abort.abort();
      await reading;
    },
  };
}

describe('subscriptions/listen and the policy', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    // Every tool; of the resources, only notes/1.
    gw = await startGateway(config([rule({ resources: ['collider://notes/1'] })]), { logger: createTestLogger('silent', undefined) });
  });
  afterAll(async () => {
    await gw?.close();
  });

  for (const path of PATHS) {
    it(`on ${path}: a denied URI is neither acknowledged nor subscribed upstream`, async () => {
      const url = new URL(path, gw.url);
      const uri = (n: number) => (path === '/mcp' ? encodeResourceUri('col', `collider://notes/${n}`) : `collider://notes/${n}`);
      const stream = await listen(url, [uri(1), uri(2)]);
      try {
        await expect.poll(() => stream.frames.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
        expect(stream.frames[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
        expect(stream.frames[0]?.params?.notifications).toEqual({ resourceSubscriptions: [uri(1)] });
        // What the upstream holds (its `touch` tool says): notes/1 subscribed, notes/2 never.
        const touched = async (n: number) =>
          textOf(resultOf(await modern(url, 'tools/call', { name: toolOn(path, 'touch'), arguments: { uri: `collider://notes/${n}` } })));
        await expect.poll(() => touched(1), { timeout: 5_000 }).toBe('touched');
        expect(await touched(2)).toBe('not subscribed');
      } finally {
        await stream.stop();
      }
    });
  }
});
