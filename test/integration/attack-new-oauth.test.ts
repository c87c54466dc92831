/**
 * Attacks on each user's own upstream account (issue 32) by a hostile upstream and its hostile
 * authorization server (a real HTTP server of this test, speaking RFC 9728 / RFC 8414 / RFC 7591
 * as a liar would): an authorization endpoint that is not a web address (`javascript:`, `data:`,
 * `file:`), one with credentials in it, and a registration answer that is not JSON. The gateway
 * hands a consent link to the user's client (and URL-mode elicitation tells the client to open
 * it), so a link the gateway hands out must be an https (or loopback http) URL it checked; the
 * gateway keeps serving. Real gateway, API-key principals, raw HTTP.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RemoteTargetConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { createTestLogger, remoteTarget } from '../support/gateway.ts';

const KEYS = { alice: 'alice-key-0123456789abcdef' };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', authorization: `Bearer ${KEYS.alice}` };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { elicitation: { url: {} } }, clientInfo: { name: 'attack', version: '1' } } };
const VARIANTS: Record<string, string> = {
  js: 'javascript:alert(document.cookie)//',
  data: 'data:text/html,<script>alert(1)</script>',
  file: 'file:///etc/passwd',
  spaced: ' javascript:alert(1)',
};

let hostile: Server;
let dir: string;
let base: string;
let gw: RunningGateway;
const lines: string[] = [];

function startHostile(): Promise<void> {
  hostile = createServer((req, res) => {
    const url = new URL(req.url ?? '/', base);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const [, variant, rest] = /^\/([a-z]+)(\/.*)?$/.exec(url.pathname.replace('/.well-known/oauth-protected-resource', '').replace('/.well-known/oauth-authorization-server', '')) ?? [];
    if (url.pathname.startsWith('/.well-known/oauth-protected-resource/')) return json(200, { resource: `${base}/${variant}/mcp`, authorization_servers: [`${base}/${variant}/as`], scopes_supported: ['mcp'] });
    if (url.pathname.startsWith('/.well-known/oauth-authorization-server/') || url.pathname.startsWith('/.well-known/openid-configuration')) {
      return json(200, {
        issuer: `${base}/${variant}/as`,
        authorization_endpoint: VARIANTS[variant ?? ''] ?? `${base}/${variant}/as/authorize`,
        token_endpoint: `${base}/${variant}/as/token`,
        registration_endpoint: `${base}/${variant}/as/register`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (rest === '/as/register') return json(201, { client_id: 'hostile-client', redirect_uris: [] });
    if (rest === '/mcp') {
      res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/${variant}/mcp", scope="mcp"`, 'content-type': 'application/json' });
      return res.end('{"error":"unauthorized"}');
    }
    json(404, {});
  });
  return new Promise((resolve) => hostile.listen(0, '127.0.0.1', () => resolve()));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'attack-oauth-'));
  await startHostile();
  base = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  const targets: Record<string, { target: RemoteTargetConfig }> = {};
  for (const name of [...Object.keys(VARIANTS), 'fine']) {
    targets[name] = { target: { ...remoteTarget(name, { type: 'http', url: `${base}/${name}/mcp` }), oauth: { perUser: true, scopes: undefined, clientId: undefined, clientSecret: undefined } } };
  }
  const config = buildAggregateConfig({ targets });
  gw = await startGateway(
    { ...config, auth: keyAuth(KEYS), oauth: { key: 'vault-key-for-tests-0123456789abcdefghij', vaultFile: join(dir, 'vault.json'), publicUrl: undefined, consentTtlSec: 600, clientName: 'attack' } },
    { logger: createTestLogger('info', lines) },
  );
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await new Promise((resolve) => hostile?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

async function initialize(path: string): Promise<{ status: number; text: string; json: Record<string, any> }> {
  const res = await fetch(new URL(path, gw.url), { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as Record<string, any> };
}

describe('attack: a hostile authorization server', () => {
  it('the control: an honest-looking one gets a consent link at its own https/http endpoint', async () => {
    const answer = await initialize('/servers/fine/mcp');
    expect(answer.json.error?.data?.code, answer.text).toBe('GW_UPSTREAM_AUTH_REQUIRED');
    expect(new URL(answer.json.error.data.authorizationUrl as string).origin).toBe(base);
  });

  it('an authorization endpoint that is not a web address is never handed to a client', async () => {
    for (const [name, endpoint] of Object.entries(VARIANTS)) {
      const answer = await initialize(`/servers/${name}/mcp`);
      expect(answer.json.error, answer.text).toBeDefined();
      expect(answer.json.error.data?.code, answer.text).toBe('GW_UPSTREAM_AUTH_FAILED');
      expect(answer.text, name).not.toContain(endpoint.trim().slice(0, 12));
      expect(answer.json.error.data?.authorizationUrl, name).toBeUndefined();
    }
    // The gateway still serves the others.
    expect((await initialize('/servers/fine/mcp')).json.error.data.code).toBe('GW_UPSTREAM_AUTH_REQUIRED');
  });

  it('the callback page reflects no markup from its query (error, error_description, state, code, iss)', async () => {
    const xss = '<script>alert(1)</script><img src=x onerror=alert(2)>"\'';
    for (const query of [
      { error: xss, error_description: xss, state: xss },
      { code: xss, state: xss, iss: xss },
      { code: 'c', state: 'x'.repeat(100_000) },
    ]) {
      const res = await fetch(new URL(`/oauth/callback?${new URLSearchParams(query).toString()}`, gw.url));
      const text = await res.text();
      expect(res.status, text.slice(0, 200)).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(text).not.toContain('<script>alert');
      expect(text).not.toContain('<img src=x');
      expect(text.length).toBeLessThan(20_000);
      if ((res.headers.get('content-type') ?? '').includes('html')) expect(res.headers.get('content-security-policy') ?? '').toContain("default-src 'none'");
    }
  });
});
