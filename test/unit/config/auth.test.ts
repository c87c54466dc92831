import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.ts';

const withAuth = (auth: unknown) => () => parseConfig({ mcpServers: { a: { command: 'x' } }, gateway: { auth } });

describe('gateway.auth', () => {
  it.each([
    ['no method at all', {}, 'auth needs a method: "apiKeys", "jwt", or "anonymous: true" said explicitly'],
    ['alg none', { jwt: { issuers: ['https://as.example'], jwksUrl: 'https://as.example/jwks', algorithms: ['none'] } }, 'expected some of RS256'],
    ['an HMAC algorithm', { jwt: { issuers: ['https://as.example'], jwksUrl: 'https://as.example/jwks', algorithms: ['HS256'] } }, 'expected some of RS256'],
    ['both a JWKS URL and keys', { jwt: { issuers: ['https://as.example'], jwksUrl: 'https://as.example/jwks', keys: [{ kty: 'EC' }] } }, 'give exactly one of "jwksUrl" or "keys"'],
    ['no issuer', { jwt: { issuers: [], jwksUrl: 'https://as.example/jwks' } }, 'name at least one issuer'],
    ['a short key', { apiKeys: [{ name: 'ci', key: 'short' }] }, 'an API key needs at least 16 characters'],
    ['a key and its hash', { apiKeys: [{ name: 'ci', key: '0123456789abcdef', sha256: 'a'.repeat(64) }] }, 'give exactly one of "sha256" or "key"'],
    ['a public URL with a path', { anonymous: true, publicUrl: 'https://mcp.example.com/base' }, 'expected an origin'],
    ['a JWKS floor above its ceiling', { jwt: { issuers: ['https://as.example'], jwksUrl: 'https://as.example/jwks', jwksMinCacheSec: 600, jwksMaxCacheSec: 60 } }, '"jwksMinCacheSec" must not exceed "jwksMaxCacheSec"'],
  ])('refuses %s, saying how to fix it', (_label, auth, message) => {
    expect(withAuth(auth)).toThrow(message);
  });

  it('explicit anonymous access is a method of its own', () => {
    expect(withAuth({ anonymous: true })().auth).toMatchObject({ anonymous: true, apiKeys: [], jwt: undefined, authorizationServers: [] });
  });

  it('no auth section: no client authentication', () => {
    expect(parseConfig({ mcpServers: { a: { command: 'x' } } }).auth).toBeUndefined();
  });

  it('policy rules match claims by a glob or a list of globs; an empty list is refused', () => {
    const policy = (rules: unknown) => () => parseConfig({ mcpServers: { a: { command: 'x' } }, gateway: { auth: { anonymous: true }, policy: { rules } } });
    expect(policy([{ claims: { groups: 'admins', roles: ['a*', 'b'] } }])().policy?.rules[0]?.claims).toEqual({ groups: ['admins'], roles: ['a*', 'b'] });
    expect(policy([{}])().policy?.rules[0]?.claims).toEqual({});
    expect(policy([{ claims: { groups: [] } }])).toThrow('name at least one glob');
    expect(policy([{ claims: { groups: 5 } }])).toThrow('expected a glob or a list of globs');
  });
});

describe('mcpServers.<name>.tokenExchange', () => {
  const remote = (server: Record<string, unknown>) => () => parseConfig({ mcpServers: { up: { type: 'http', url: 'https://up.example/mcp', ...server } } });
  const te = { tokenEndpoint: 'https://as.example/token', clientId: 'gw', clientSecret: 'secret' };

  it('defaults the resource to the server URL, unless an audience names the upstream', () => {
    expect(remote({ tokenExchange: te })().targets.get('up')).toMatchObject({ tokenExchange: { ...te, resource: 'https://up.example/mcp', audience: undefined, maxCachedTokens: 10_000 } });
    expect(remote({ tokenExchange: { ...te, audience: 'api://up' } })().targets.get('up')).toMatchObject({ tokenExchange: { audience: 'api://up', resource: undefined } });
  });

  it.each([
    ['forwardAuthorization', { forwardAuthorization: true }],
    ['an Authorization header', { headers: { Authorization: 'Bearer x' } }],
    ['an Authorization template', { principalHeaders: { authorization: '{sub}' } }],
  ])('refuses it beside %s: the exchanged token is the Authorization', (_label, extra) => {
    expect(remote({ tokenExchange: te, ...extra })).toThrow('"tokenExchange" and "oauth" set the upstream\'s Authorization themselves');
  });

  it('needs its endpoint, client id and secret', () => {
    expect(remote({ tokenExchange: { clientId: 'gw', clientSecret: 's' } })).toThrow('tokenEndpoint');
    expect(remote({ tokenExchange: { ...te, clientSecret: '' } })).toThrow('must not be empty');
  });
});

describe('mcpServers.<name>.oauth (each user\'s own account)', () => {
  const KEY = 'k'.repeat(32);
  const auth = { apiKeys: [{ name: 'a', key: 'a-key-0123456789abcdef' }] };
  const parse = (server: Record<string, unknown>, gateway: Record<string, unknown> = { auth, oauth: { key: KEY } }) => () =>
    parseConfig({ gateway, mcpServers: { up: { type: 'http', url: 'https://up.example/mcp', ...server } } });

  it('needs gateway.oauth and gateway.auth', () => {
    expect(parse({ oauth: { perUser: true } }, { auth })).toThrow('needs gateway.oauth');
    expect(parse({ oauth: { perUser: true } }, { oauth: { key: KEY } })).toThrow('needs gateway.auth');
    expect(parse({ oauth: { perUser: true } })).not.toThrow();
  });

  it('refuses a short vault key, a secret without a client id, perUser other than true, and a second Authorization', () => {
    expect(parse({ oauth: { perUser: true } }, { auth, oauth: { key: 'short' } })).toThrow('at least 32 characters');
    expect(parse({ oauth: { perUser: true, clientSecret: 's' } })).toThrow('"clientSecret" needs "clientId"');
    expect(parse({ oauth: { perUser: false } })).toThrow('expected true');
    expect(parse({ oauth: { perUser: true }, forwardAuthorization: true })).toThrow('"oauth" set the upstream');
    expect(parse({ oauth: { perUser: true }, tokenExchange: { tokenEndpoint: 'https://as.example/token', clientId: 'gw', clientSecret: 's' } })).toThrow('use one');
    expect(parse({ oauth: { perUser: true, scopes: ['a b'] } })).toThrow('without spaces');
  });
});
