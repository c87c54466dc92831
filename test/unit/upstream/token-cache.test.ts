import { describe, expect, it } from 'vitest';
import type { RemoteTargetConfig, TokenExchangeConfig } from '../../../src/config/types.ts';
import { GatewayError } from '../../../src/errors/gateway-error.ts';
import { createLogger } from '../../../src/log/logger.ts';
import type { TokenExchangeRequest } from '../../../src/transport/token-exchange.ts';
import { createTokenCache, MARGIN_SEC } from '../../../src/upstream/token-cache.ts';
import { subjectTokenOf } from '../../../src/upstream/identity.ts';

const logger = createLogger({ level: 'silent' });
const te = (over: Partial<TokenExchangeConfig> = {}): TokenExchangeConfig => ({
  tokenEndpoint: 'https://as.example/token', clientId: 'gw', clientSecret: 's', audience: undefined, resource: 'https://up.example/mcp', scope: undefined, maxCachedTokens: 100, ...over,
});
const target = (over: Partial<TokenExchangeConfig> = {}, name = 'up'): RemoteTargetConfig =>
  ({ type: 'http', name, url: 'https://up.example/mcp', tokenExchange: te(over) }) as RemoteTargetConfig;
const who = (id: string) => ({ id, kind: 'jwt' as const });

/** A cache over a fake exchange that mints `<subject>@<n>` and records its requests. */
function setup(expiresIn: number | null = 300) {
  const expiresInSec = expiresIn ?? undefined;
  let clock = 0;
  const calls: TokenExchangeRequest[] = [];
  const cache = createTokenCache({
    logger,
    now: () => clock,
    exchange: async (req) => {
      calls.push(req);
      if (req.subjectToken === 'bad') throw new GatewayError('GW_TOKEN_EXCHANGE_FAILED', 'refused', { target: req.target, reason: 'refused' });
      return { accessToken: `${req.subjectToken}@${calls.length}`, expiresInSec };
    },
  });
  return { cache, calls, advance: (sec: number) => (clock += sec * 1_000) };
}

describe('exchanged token cache', () => {
  it('keeps a token per (target, principal) until shortly before it expires', async () => {
    const { cache, calls, advance } = setup(300);
    const t = target();
    expect(await cache.tokenFor(t, who('a'), 'ta')).toBe('ta@1');
    expect(await cache.tokenFor(t, who('a'), 'ta2')).toBe('ta@1');
    expect(await cache.tokenFor(t, who('b'), 'tb')).toBe('tb@2');
    expect(await cache.tokenFor(target({}, 'other'), who('a'), 'ta')).toBe('ta@3');
    advance(300 - MARGIN_SEC - 1);
    expect(await cache.tokenFor(t, who('a'), 'ta')).toBe('ta@1');
    advance(2);
    expect(await cache.tokenFor(t, who('a'), 'ta4')).toBe('ta4@4');
    expect(calls.map((c) => c.resource)).toEqual(Array(4).fill('https://up.example/mcp'));
  });

  it('a short-lived token is kept for half its life; none given: 60 s', async () => {
    const short = setup(40);
    await short.cache.tokenFor(target(), who('a'), 't');
    short.advance(19);
    await short.cache.tokenFor(target(), who('a'), 't');
    short.advance(2);
    await short.cache.tokenFor(target(), who('a'), 't');
    expect(short.calls).toHaveLength(2);
    const unknown = setup(null);
    await unknown.cache.tokenFor(target(), who('a'), 't');
    unknown.advance(31);
    await unknown.cache.tokenFor(target(), who('a'), 't');
    expect(unknown.calls).toHaveLength(2);
  });

  it('concurrent requests of one principal wait on one exchange', async () => {
    const { cache, calls } = setup();
    const tokens = await Promise.all([1, 2, 3].map(() => cache.tokenFor(target(), who('a'), 't')));
    expect(new Set(tokens).size).toBe(1);
    expect(calls).toHaveLength(1);
  });

  it('is bounded per target: the least recently used goes first', async () => {
    const { cache, calls } = setup();
    const t = target({ maxCachedTokens: 2 });
    await cache.tokenFor(t, who('a'), 'a');
    await cache.tokenFor(t, who('b'), 'b');
    await cache.tokenFor(t, who('a'), 'a'); // a is now the most recent
    await cache.tokenFor(t, who('c'), 'c'); // b goes
    expect(cache.size).toBe(2);
    await cache.tokenFor(t, who('a'), 'a');
    expect(calls).toHaveLength(3);
    await cache.tokenFor(t, who('b'), 'b');
    expect(calls).toHaveLength(4);
  });

  it('failures are not cached; no subject token fails without asking the server', async () => {
    const { cache, calls } = setup();
    await expect(cache.tokenFor(target(), who('a'), 'bad')).rejects.toMatchObject({ code: 'GW_TOKEN_EXCHANGE_FAILED' });
    expect(await cache.tokenFor(target(), who('a'), 'good')).toBe('good@2');
    await expect(cache.tokenFor(target(), { id: 'key:k', kind: 'api-key' }, undefined)).rejects.toMatchObject({ code: 'GW_CREDENTIAL_NOT_EXCHANGEABLE', details: { credential: 'api-key' } });
    expect(calls).toHaveLength(2);
  });

  it('a reload that changes the settings drops the tokens exchanged under the old ones', async () => {
    const { cache, calls } = setup();
    await cache.tokenFor(target(), who('a'), 't');
    await cache.tokenFor(target(), who('a'), 't'); // an equal config object: kept
    await cache.tokenFor(target({ audience: 'api://other' }), who('a'), 't');
    expect(calls).toHaveLength(2);
  });

  it('only a verified JWT is ever a subject token (an API key never reaches the authorization server)', () => {
    expect(subjectTokenOf({ id: 'x', kind: 'jwt' }, 'Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(subjectTokenOf({ id: 'key:ci', kind: 'api-key' }, 'Bearer sbk_0123456789abcdef')).toBeUndefined();
    expect(subjectTokenOf(undefined, 'Bearer abc.def.ghi')).toBeUndefined();
    expect(subjectTokenOf({ id: 'x', kind: 'jwt' }, undefined)).toBeUndefined();
  });
});
