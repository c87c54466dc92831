import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../../src/auth/authenticator.ts';
import { AuthFailure } from '../../../src/auth/principal.ts';
import type { AuthConfig } from '../../../src/config/types.ts';

const KEY = 'key-0123456789abcdef';
const base: AuthConfig = {
  anonymous: false,
  publicUrl: undefined,
  apiKeys: [
    { name: 'ci', sha256: createHash('sha256').update(KEY).digest('hex'), scopes: ['mcp', 'admin'] },
    { name: 'reader', sha256: createHash('sha256').update(`${KEY}-r`).digest('hex'), scopes: ['read'] },
  ],
  apiKeyHeader: 'authorization',
  jwt: undefined,
  scopes: [],
  authorizationServers: [],
};
const RESOURCE = 'http://127.0.0.1:8080/mcp';
const none = { bearer: undefined, apiKey: undefined };

async function failure(promise: Promise<unknown>): Promise<AuthFailure> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(AuthFailure);
  return err as AuthFailure;
}

describe('authenticator', () => {
  it('an API key names its principal and grants its scopes', async () => {
    const { principal } = await createAuthenticator(base)({ bearer: KEY, apiKey: undefined }, RESOURCE);
    expect(principal).toMatchObject({ id: 'key:ci', kind: 'api-key' });
    expect([...principal.scopes]).toEqual(['mcp', 'admin']);
    expect((await createAuthenticator(base)({ bearer: `${KEY}-r`, apiKey: undefined }, RESOURCE)).principal.id).toBe('key:reader');
  });

  it('refuses no credential and a wrong one with 401, whatever anonymous says about the wrong one', async () => {
    expect(await failure(createAuthenticator(base)(none, RESOURCE))).toMatchObject({ status: 401, reason: 'no credential' });
    for (const anonymous of [false, true]) {
      const check = createAuthenticator({ ...base, anonymous });
      expect(await failure(check({ bearer: `${KEY}x`, apiKey: undefined }, RESOURCE))).toMatchObject({ status: 401, reason: 'unknown API key' });
    }
    expect((await createAuthenticator({ ...base, anonymous: true })(none, RESOURCE)).principal.id).toBe('anonymous');
  });

  it('reads keys from their own header when configured, and then a bearer value is no key', async () => {
    const check = createAuthenticator({ ...base, apiKeyHeader: 'x-api-key' });
    expect((await check({ bearer: undefined, apiKey: KEY }, RESOURCE)).principal.id).toBe('key:ci');
    expect(await failure(check({ bearer: KEY, apiKey: undefined }, RESOURCE))).toMatchObject({ status: 401 });
  });

  it('a valid credential without a required scope is 403, naming what is missing', async () => {
    const check = createAuthenticator({ ...base, scopes: ['mcp', 'write'] });
    expect(await failure(check({ bearer: `${KEY}-r`, apiKey: undefined }, RESOURCE))).toMatchObject({ status: 403, missing: ['mcp', 'write'] });
    expect(await failure(check({ bearer: KEY, apiKey: undefined }, RESOURCE))).toMatchObject({ status: 403, missing: ['write'] });
  });
});
