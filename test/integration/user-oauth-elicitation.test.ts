/**
 * URL-mode elicitation of the per-user upstream consent (issue 32; docs/upstreams.md, "How the
 * consent reaches the client"), with real parts: a second oidc-provider as the upstream's own
 * authorization server, the SDK's server behind a bearer check, the gateway's aggregate, and the
 * SDK v2 client in both eras declaring URL elicitation. 2025-11-25: a call gets -32042, a list that
 * left the server out brings `elicitation/create`, the callback brings
 * `notifications/elicitation/complete` and list_changed to that principal's session only, then the
 * call succeeds. 2026: the call gets an `input_required` URL elicitation and the retry succeeds.
 * Attacks: another principal's waiting session, a client that declared form mode only, a 2026
 * request that declared no URL mode; no token in any answer or log line.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2, UrlElicitationRequiredError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RemoteTargetConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { startProtectedUpstream, type ProtectedUpstream } from '../fixtures/protected-upstream.ts';
import { buildAggregateConfig } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { createTestLogger, remoteTarget } from '../support/gateway.ts';
import { modern } from '../support/modern.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';

const KEYS = {
  dave: 'dave-key-0123456789abcdef',
  erin: 'erin-key-0123456789abcdef',
  frank: 'frank-key-0123456789abcdef',
  grace: 'grace-key-0123456789abcdef',
};

let as: AuthorizationServer;
let upstream: ProtectedUpstream;
/** A second server (its metadata names another resource, so it never connects): the aggregate has two members, as in user-oauth.test.ts. */
let other: ProtectedUpstream;
let gw: RunningGateway;
let dir: string;
const logLines: string[] = [];
const outputs: string[] = [];

const perUser = (name: string, url: string): RemoteTargetConfig => ({
  ...remoteTarget(name, { type: 'http', url }),
  oauth: { perUser: true, scopes: undefined, clientId: undefined, clientSecret: undefined },
});

/** The browser's visit to the gateway's callback. */
async function visit(url: URL | string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  const text = await res.text();
  outputs.push(text);
  return { status: res.status, text };
}

/** Waits for `done` (events the test awaits, never a fixed sleep). */
async function until(done: () => boolean): Promise<void> {
  await expect.poll(done, { timeout: 10_000 }).toBe(true);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'user-oauth-elicitation-'));
  as = await startAuthorizationServer({ scopes: ['mcp'], refreshTokens: true });
  upstream = await startProtectedUpstream(as);
  other = await startProtectedUpstream(as);
  other.claimedResource = 'http://127.0.0.1:1/elsewhere';
  const base = buildAggregateConfig({ targets: { docs: { target: perUser('docs', upstream.url) }, other: { target: perUser('other', other.url) } } });
  const config = { ...base, auth: keyAuth(KEYS), oauth: { key: 'vault-key-for-tests-0123456789abcdefghij', vaultFile: join(dir, 'vault.json'), publicUrl: undefined, consentTtlSec: 600, clientName: 'Switchboard test' } };
  gw = await startGateway(config, { logger: createTestLogger('debug', logLines) });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await other?.close();
  await as?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('URL-mode elicitation of an upstream account (oauth.perUser)', () => {
  it('the SDK v2 client (2025-11-25) declaring URL elicitation: the call gets -32042, the list brings elicitation/create, the callback brings elicitation/complete and list_changed, then the call succeeds', async () => {
    const v2 = (who: keyof typeof KEYS) => new ClientV2({ name: 'user-oauth-v2', version: '1' }, { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: 'legacy' } });
    const seen = { asked: [] as Array<Record<string, unknown>>, completed: [] as string[], toolsChanged: 0 };
    const dave = v2('dave');
    const frank = v2('frank');
    const frankSeen = { asked: 0, completed: [] as string[] };
    dave.setRequestHandler('elicitation/create', async (request) => {
      seen.asked.push(request.params as Record<string, unknown>);
      return { action: 'accept' };
    });
    dave.setNotificationHandler('notifications/elicitation/complete', (n) => void seen.completed.push(n.params.elicitationId));
    dave.setNotificationHandler('notifications/tools/list_changed', () => void seen.toolsChanged++);
    frank.setRequestHandler('elicitation/create', async () => {
      frankSeen.asked++;
      return { action: 'accept' };
    });
    frank.setNotificationHandler('notifications/elicitation/complete', (n) => void frankSeen.completed.push(n.params.elicitationId));
    const transport = (who: keyof typeof KEYS) => new TransportV2(new URL('/mcp', gw.url), { requestInit: { headers: { authorization: `Bearer ${KEYS[who]}` } } });
    await dave.connect(transport('dave'));
    await frank.connect(transport('frank'));
    try {
      // A tools/call that needs the account: the -32042 error only (the spec's error flow), no second prompt.
      const refused = await dave.callTool({ name: 'docs__whoami', arguments: {} }).then(() => undefined, (err: unknown) => err);
      expect(refused).toBeInstanceOf(UrlElicitationRequiredError);
      const [elicitation] = (refused as UrlElicitationRequiredError).elicitations;
      expect(elicitation).toMatchObject({ mode: 'url', elicitationId: expect.any(String) });
      expect(seen.asked).toEqual([]);
      // A list that leaves the server out asks with elicitation/create: the same pending consent, once per session.
      expect((await dave.listTools()).tools.map((t) => t.name)).not.toContain('docs__whoami');
      await dave.listTools();
      await until(() => seen.asked.length > 0);
      expect(seen.asked).toEqual([{ mode: 'url', elicitationId: elicitation!.elicitationId, url: elicitation!.url, message: 'Connect your account at "docs"' }]);
      // Another principal's session is asked about its own consent, never told of Dave's.
      await frank.listTools();
      await until(() => frankSeen.asked > 0);
      // A client that declared form mode only is never sent a URL elicitation (the spec: no undeclared mode).
      const grace = new ClientV2({ name: 'user-oauth-v2', version: '1' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'legacy' } });
      let graceAsked = 0;
      grace.setRequestHandler('elicitation/create', async () => {
        graceAsked++;
        return { action: 'decline' };
      });
      await grace.connect(transport('grace'));
      expect((await grace.listTools()).tools.map((t) => t.name)).not.toContain('docs__whoami');
      await grace.callTool({ name: 'docs__whoami', arguments: {} }).catch(() => undefined);
      expect((await grace.listTools()).tools.map((t) => t.name)).not.toContain('docs__whoami');
      await grace.close();
      expect(graceAsked).toBe(0);
      // Dave follows the URL as a browser: the callback tells his waiting session.
      expect((await visit(await as.consent(elicitation!.url, 'dave-upstream'))).status).toBe(200);
      await until(() => seen.completed.length > 0 && seen.toolsChanged > 0);
      expect(seen.completed).toEqual([elicitation!.elicitationId]);
      expect(frankSeen.completed).toEqual([]);
      expect((await dave.listTools()).tools.map((t) => t.name)).toContain('docs__whoami');
      const after = await dave.callTool({ name: 'docs__whoami', arguments: {} });
      outputs.push(JSON.stringify(after));
      expect((after.content as Array<{ text: string }>)[0]!.text).toBe('dave-upstream');
      expect(seen.asked).toHaveLength(1);
    } finally {
      await dave.close();
      await frank.close();
    }
  });

  it('the SDK v2 client (2026-07-28) declaring URL elicitation gets an input_required URL elicitation, consents, and its retry succeeds', async () => {
    const erin = new ClientV2({ name: 'user-oauth-v2', version: '1' }, { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const asked: Array<Record<string, unknown>> = [];
    erin.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params as Record<string, unknown>);
      // The user opens the URL and consents before the client answers: its retry then finds the token.
      expect((await visit(await as.consent((request.params as { url: string }).url, 'erin-upstream'))).status).toBe(200);
      return { action: 'accept' };
    });
    await erin.connect(new TransportV2(new URL('/mcp', gw.url), { requestInit: { headers: { authorization: `Bearer ${KEYS.erin}` } } }));
    try {
      const result = await erin.callTool({ name: 'docs__whoami', arguments: {} });
      outputs.push(JSON.stringify(result));
      expect((result.content as Array<{ text: string }>)[0]!.text).toBe('erin-upstream');
      expect(asked).toEqual([{ mode: 'url', url: expect.stringContaining('code_challenge_method=S256'), message: 'Connect your account at "docs"' }]);
    } finally {
      await erin.close();
    }
    // A 2026 request that declares no URL elicitation keeps the clear -32042 error with the URL.
    const bare = await modern(new URL('/mcp', gw.url), 'tools/call', { name: 'docs__whoami', arguments: {} }, { headers: { authorization: `Bearer ${KEYS.frank}` } });
    outputs.push(bare.text);
    expect(JSON.parse(bare.text).error).toMatchObject({ code: -32042, data: { code: 'GW_UPSTREAM_AUTH_REQUIRED', target: 'docs' } });
  });

  it('no token in any answer or log line', () => {
    const tokens = [...new Set(upstream.seen.map((h) => h.replace(/^Bearer /, '')))];
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    for (const token of tokens) for (const line of [...logLines, ...outputs]) expect(line).not.toContain(token);
  });
});
