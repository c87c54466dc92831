/**
 * The JWKS cache against a real JWKS over HTTP (test/support/auth-server.ts) that counts its
 * fetches and sets Cache-Control; the cache's clock is moved by the test.
 */
import { jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJwksCache, fetchJwks, type JwksCache } from '../../../src/auth/jwks.ts';
import { startIssuer, type Issuer } from '../../support/auth-server.ts';

let issuer: Issuer;
let clock = 1_000_000;

beforeAll(async () => {
  issuer = await startIssuer();
});
afterAll(() => issuer.close());

function cache(): JwksCache {
  return createJwksCache({ url: issuer.jwksUrl, minCacheSec: 60, maxCacheSec: 3_600, refetchSec: 30, now: () => clock });
}

async function verifyWith(jwks: JwksCache, kid = 'k1'): Promise<boolean> {
  const token = await issuer.mint({ aud: 'x' }, { kid });
  return jwtVerify(token, jwks.getKey).then(
    () => true,
    () => false,
  );
}

/** Fetches the cache makes for `steps` (seconds from now: verify at each). */
async function fetchesOver(cacheControl: string | undefined, steps: number[]): Promise<number[]> {
  issuer.cacheControl = cacheControl;
  const jwks = cache();
  const start = issuer.fetches;
  const seen: number[] = [];
  const t0 = clock;
  for (const s of steps) {
    clock = t0 + s * 1_000;
    expect(await verifyWith(jwks)).toBe(true);
    seen.push(issuer.fetches - start);
  }
  clock += 10_000_000;
  return seen;
}

describe('JWKS cache', () => {
  it("keeps the set for the response's max-age, then fetches it again", async () => {
    expect(await fetchesOver('public, max-age=120', [0, 60, 119, 121, 200])).toEqual([1, 1, 1, 2, 2]);
  });

  it('a max-age under the floor counts as the floor (no fetch per token)', async () => {
    expect(await fetchesOver('max-age=5', [0, 10, 59, 61])).toEqual([1, 1, 1, 2]);
    expect(await fetchesOver('no-store', [0, 1, 2, 61])).toEqual([1, 1, 1, 2]);
  });

  it('a max-age over the ceiling counts as the ceiling', async () => {
    expect(await fetchesOver('max-age=999999', [0, 3_599, 3_601])).toEqual([1, 1, 2]);
  });

  it('without a max-age: 10 minutes, clamped the same way', async () => {
    expect(await fetchesOver(undefined, [0, 599, 601])).toEqual([1, 1, 2]);
  });

  it('an unknown kid fetches again at once, but at most once per refetch interval', async () => {
    issuer.cacheControl = 'max-age=3600';
    const jwks = cache();
    const start = issuer.fetches;
    expect(await verifyWith(jwks)).toBe(true);
    clock += 31_000;
    // Rotated: the new key is published after the set was cached.
    await issuer.addKey('r2');
    issuer.publish('r2');
    expect(await verifyWith(jwks, 'r2')).toBe(true);
    expect(issuer.fetches - start).toBe(2);
    // Made-up kids within the interval fetch nothing.
    for (const kid of ['bogus1', 'bogus2', 'bogus3']) expect(await verifyWith(jwks, kid)).toBe(false);
    expect(issuer.fetches - start).toBe(2);
    clock += 31_000;
    expect(await verifyWith(jwks, 'bogus4')).toBe(false);
    expect(issuer.fetches - start).toBe(3);
  });

  it('a failed fetch keeps the known keys and is not retried within the interval', async () => {
    issuer.cacheControl = 'max-age=60';
    let down = false;
    let tries = 0;
    const jwks = createJwksCache({
      url: issuer.jwksUrl, minCacheSec: 60, maxCacheSec: 3_600, refetchSec: 30, now: () => clock,
      fetchSet: (url) => (tries++, down ? Promise.reject(new Error('down')) : fetchJwks(url)),
    });
    expect(await verifyWith(jwks)).toBe(true);
    down = true;
    clock += 61_000;
    expect(await verifyWith(jwks), 'the keys already known still verify').toBe(true);
    expect(tries).toBe(2);
    clock += 10_000;
    expect(await verifyWith(jwks)).toBe(true);
    expect(tries, 'no retry within the refetch interval').toBe(2);
    clock += 21_000;
    down = false;
    expect(await verifyWith(jwks)).toBe(true);
    expect(tries).toBe(3);
    expect(jwks.expiresAt).toBe(clock + 60_000);
    const never = createJwksCache({ url: `${issuer.jwksUrl}-gone`, minCacheSec: 60, maxCacheSec: 3_600, refetchSec: 30, now: () => clock });
    expect(await verifyWith(never), 'no keys at all: refused').toBe(false);
  });
});
