/**
 * Expiry of a user's own upstream token (upstream/oauth/user-oauth.ts) against the real
 * authorization server: the client's clock is moved past the token's life, and the next request
 * gets a refreshed token for the same account without a new consent; a grant the server revoked
 * (invalid_grant on refresh) forgets the connection and asks for consent again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RemoteTargetConfig } from '../../src/config/types.ts';
import { createUserOAuth, type UserOAuth } from '../../src/upstream/oauth/user-oauth.ts';
import { createFileVaultStore } from '../../src/upstream/oauth/vault-file.ts';
import { createVault, deriveVaultKeys } from '../../src/upstream/oauth/vault.ts';
import { startProtectedUpstream, type ProtectedUpstream } from '../fixtures/protected-upstream.ts';
import { createTestLogger, remoteTarget } from '../support/gateway.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';

let as: AuthorizationServer;
let upstream: ProtectedUpstream;
let dir: string;
let oauth: UserOAuth;
let target: RemoteTargetConfig;
let clock = Date.now();
const logLines: string[] = [];
const sub = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { sub: string }).sub;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'user-oauth-refresh-'));
  as = await startAuthorizationServer({ refreshTokens: true, accessTokenTtlSec: 300 });
  upstream = await startProtectedUpstream(as);
  target = { ...remoteTarget('docs', { type: 'http', url: upstream.url }), oauth: { perUser: true, scopes: undefined, clientId: undefined, clientSecret: undefined } };
  const vault = createVault(deriveVaultKeys('vault-key-for-tests-0123456789abcdefghij'), await createFileVaultStore(join(dir, 'vault.json')));
  // The callback is never served here: the test redeems the redirect's query itself.
  oauth = createUserOAuth({ vault, logger: createTestLogger('debug', logLines), baseUrl: () => 'http://127.0.0.1:9', clientName: 'refresh-test', consentTtlSec: 600, now: () => clock });
}, 30_000);

afterAll(async () => {
  await upstream?.close();
  await as?.close();
  await rm(dir, { recursive: true, force: true });
});

async function connect(principal: string, account: string): Promise<void> {
  const refused = await oauth.tokenFor(target, { id: principal }).then(() => undefined, (err: { details: { authorizationUrl: string } }) => err);
  const back = await as.consent(refused!.details.authorizationUrl, account);
  expect(await oauth.redeem(back.searchParams)).toMatchObject({ principal, target: 'docs' });
}

describe("a user's own upstream token over time", () => {
  it('is refreshed once it nears expiry, for the same account, without a new consent', async () => {
    await connect('key:alice', 'alice-upstream');
    const first = await oauth.tokenFor(target, { id: 'key:alice' });
    expect(await oauth.tokenFor(target, { id: 'key:alice' })).toBe(first);
    clock += 290_000; // within the refresh margin of its 300 s
    const second = await oauth.tokenFor(target, { id: 'key:alice' });
    expect(second).not.toBe(first);
    expect(sub(second)).toBe('alice-upstream');
    expect((await oauth.connections('key:alice'))[0]?.expiresAt).toBeGreaterThan(clock);
    for (const token of [first, second]) for (const line of logLines) expect(line).not.toContain(token);
  });

  it('a grant the server no longer honours (revoked) means a new consent', async () => {
    await connect('key:bob', 'bob-upstream');
    await oauth.tokenFor(target, { id: 'key:bob' });
    // Revoked at the server behind the gateway's back (the user did it there): the refresh answers invalid_grant.
    const reader = createVault(deriveVaultKeys('vault-key-for-tests-0123456789abcdefghij'), await createFileVaultStore(join(dir, 'vault.json')));
    const held = await reader.get<{ refreshToken: string; client: { clientId: string } }>('conn', ['key:bob', 'docs']);
    expect(held?.refreshToken).toBeDefined();
    const revoked = await fetch(`${as.issuer}/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: held!.refreshToken, token_type_hint: 'refresh_token', client_id: held!.client.clientId }),
    });
    expect(revoked.status).toBe(200);
    clock += 290_000;
    await expect(oauth.tokenFor(target, { id: 'key:bob' })).rejects.toMatchObject({ code: 'GW_UPSTREAM_AUTH_REQUIRED' });
    expect(await oauth.connections('key:bob')).toEqual([]);
    expect(logLines.some((l) => l.includes('refreshing an upstream token failed') && l.includes('invalid_grant'))).toBe(true);
  });
});
