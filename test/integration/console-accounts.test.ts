/**
 * The console's Upstream accounts section can disconnect an account (docs/operations.md, "The
 * console"), as a script uses the API (a bearer with the admin scope): real parts as in
 * user-oauth.test.ts (a second oidc-provider as the upstream's own authorization server, the SDK's
 * server behind its bearer check, the consent followed as a browser would). Disconnecting
 * forgets (and revokes) the user's tokens, so their next call asks for consent again; the action is
 * an audit record (`admin/disconnect-account`, who did it) in the same trail as the calls, and the
 * console's recent calls read that trail. A change from another origin is refused (CSRF), and a
 * non-operator is refused.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_DEFAULTS, type RemoteTargetConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { startProtectedUpstream, type ProtectedUpstream } from '../fixtures/protected-upstream.ts';
import { buildAggregateConfig } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { createTestLogger, remoteTarget } from '../support/gateway.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';

const KEYS = { alice: 'alice-key-0123456789abcdef', ops: 'ops-key-0123456789abcdef0' };
const VAULT_KEY = 'vault-key-for-tests-0123456789abcdefghij';
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'console-accounts', version: '1' } } };

let as: AuthorizationServer;
let upstream: ProtectedUpstream;
let gw: RunningGateway;
let dir: string;

const perUser = (name: string, url: string): RemoteTargetConfig => ({
  ...remoteTarget(name, { type: 'http', url }),
  oauth: { perUser: true, scopes: undefined, clientId: undefined, clientSecret: undefined },
});

/** An initialize on the docs server as alice: its JSON answer (an error naming a consent URL until she connects). */
async function initialize(): Promise<Record<string, any>> {
  const res = await fetch(new URL('/servers/docs/mcp', gw.url), { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${KEYS.alice}` }, body: JSON.stringify(INIT) });
  return (await res.json()) as Record<string, any>;
}

async function connectAlice(): Promise<void> {
  const answer = await initialize();
  const back = await as.consent(answer.error.data.authorizationUrl as string, 'alice-upstream');
  expect((await fetch(back)).status).toBe(200);
}

const api = async (method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(new URL(`/admin/api/${path}`, gw.url), {
    method,
    headers: { authorization: `Bearer ${KEYS.ops}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'console-accounts-'));
  as = await startAuthorizationServer({ scopes: ['mcp'], refreshTokens: true });
  upstream = await startProtectedUpstream(as);
  const base = buildAggregateConfig({ targets: { docs: { target: perUser('docs', upstream.url) } } });
  const auth = keyAuth(KEYS);
  gw = await startGateway(
    {
      ...base,
      auth: { ...auth, apiKeys: auth.apiKeys.map((k) => (k.name === 'ops' ? { ...k, scopes: ['switchboard:admin'] } : k)) },
      oauth: { key: VAULT_KEY, vaultFile: join(dir, 'vault.json'), publicUrl: undefined, consentTtlSec: 600, clientName: 'Switchboard test' },
      // No trail configured: the console keeps one of its own (its recent ring).
      logging: { ...base.logging, audit: false },
      admin: { ...ADMIN_DEFAULTS, console: { enabled: true, clientId: 'console-not-signed-in-here', sessionTtlSec: 600 } },
    },
    { logger: createTestLogger('warn', undefined), env: {} },
  );
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await as?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe("the console's upstream accounts", () => {
  it('lists the account, disconnects it (the next call asks for consent again), and the action is an audit record naming who', async () => {
    await connectAlice();
    expect((await initialize()).result).toBeDefined();
    const listed = await api('GET', 'accounts');
    expect(listed.body).toMatchObject({ provider: true, accounts: [{ principal: 'key:alice', server: 'docs' }] });

    const done = await api('POST', 'accounts/disconnect', { principal: 'key:alice', server: 'docs' });
    expect(done).toMatchObject({ status: 200, body: { disconnected: true, principal: 'key:alice', server: 'docs' } });
    expect((await api('GET', 'accounts')).body.accounts).toEqual([]);
    expect((await initialize()).error?.data?.code).toBe('GW_UPSTREAM_AUTH_REQUIRED');
    // Again: there is none now.
    expect((await api('POST', 'accounts/disconnect', { principal: 'key:alice', server: 'docs' })).status).toBe(404);

    const audit = await api('GET', 'audit?limit=1000');
    const admin = (audit.body.records as Array<Record<string, any>>).filter((r) => r.method === 'admin/disconnect-account');
    expect(admin[1]).toMatchObject({
      schema: 'switchboard.audit/v1.1',
      principal: 'key:ops',
      credential: 'api-key',
      endpoint: 'admin',
      era: null,
      transport: null,
      server: 'docs',
      upstreamAccount: 'key:alice',
      outcome: 'ok',
      admin: { action: 'disconnect-account', details: { target: 'docs', account: 'key:alice' } },
    });
    expect(admin[0]).toMatchObject({ outcome: 'error', code: 'GW_ROUTE_NOT_FOUND' });
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
    addFormats.default(ajv);
    const validate = ajv.compile(JSON.parse(readFileSync(new URL('../../docs/audit-record.schema.json', import.meta.url), 'utf8')) as object);
    for (const record of audit.body.records as unknown[]) expect(validate(record), JSON.stringify(validate.errors)).toBe(true);
    // The console's recent calls are the same trail: the action and alice's calls.
    const calls = (await api('GET', 'calls?principal=key:ops')).body.calls as Array<Record<string, any>>;
    expect(calls[0]).toMatchObject({ method: 'admin/disconnect-account', name: 'disconnect-account', server: 'docs', decision: 'allow' });
  });

  it('refuses a disconnect from another origin (another site: the Origin check; the same host on another port: CSRF) or by a non-operator, and a malformed one', async () => {
    await connectAlice();
    const cross = await api('POST', 'accounts/disconnect', { principal: 'key:alice', server: 'docs' }, { origin: 'http://127.0.0.1:1' });
    expect(cross.status).toBe(403);
    expect(cross.body.error?.data?.code).toBe('GW_CSRF_REFUSED');
    const foreign = await api('POST', 'accounts/disconnect', { principal: 'key:alice', server: 'docs' }, { origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error?.data?.code).toBe('GW_FORBIDDEN_ORIGIN');
    const user = await api('POST', 'accounts/disconnect', { principal: 'key:alice', server: 'docs' }, { authorization: `Bearer ${KEYS.alice}` });
    expect(user.status).toBe(403);
    expect((await api('POST', 'accounts/disconnect', { principal: 'key:alice' })).status).toBe(400);
    expect((await api('POST', 'accounts/disconnect', { principal: 'key:alice', server: 'nope' })).status).toBe(404);
    expect((await api('GET', 'accounts')).body.accounts).toMatchObject([{ principal: 'key:alice', server: 'docs' }]);
    // The CSRF refusal is an admin record too: denied, with its code.
    const refused = ((await api('GET', 'audit?limit=1000')).body.records as Array<Record<string, any>>).find((r) => r.method === 'admin/refused');
    expect(refused).toMatchObject({ decision: 'deny', outcome: 'denied', code: 'GW_CSRF_REFUSED', reason: 'GW_CSRF_REFUSED', admin: { action: 'refused', details: { reason: 'csrf', path: '/admin/api/accounts/disconnect', origin: 'http://127.0.0.1:1' } } });
  });
});
