import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createJwtCheck, type JwtCheck } from '../../../src/auth/jwt.ts';
import { AuthFailure } from '../../../src/auth/principal.ts';

const ISSUER = 'https://as.example';
const RESOURCE = 'http://gw.example/mcp';
let sign: (claims: Record<string, unknown>) => Promise<string>;
let check: JwtCheck;

beforeAll(async () => {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1' };
  sign = (claims) =>
    new SignJWT({ sub: 'alice', iss: ISSUER, aud: RESOURCE, exp: Math.floor(Date.now() / 1000) + 300, ...claims }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(privateKey);
  check = createJwtCheck({ issuers: [ISSUER], jwksUrl: undefined, jwksRefetchSec: 30, jwksMinCacheSec: 60, jwksMaxCacheSec: 3_600, keys: [jwk], algorithms: ['ES256'], clockSkewSec: 0, audiences: [] });
});

async function refusal(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(AuthFailure);
  return (err as AuthFailure).reason;
}

describe('JWT check', () => {
  it('names the principal by issuer and subject, with the token scopes', async () => {
    const { principal } = await check(await sign({ scope: 'a b' }), RESOURCE);
    expect(principal).toMatchObject({ id: `${ISSUER}#alice`, kind: 'jwt' });
    expect([...principal.scopes]).toEqual(['a', 'b']);
  });

  it('a remembered token is still checked against the resource it is presented for', async () => {
    const token = await sign({});
    await check(token, RESOURCE);
    expect(await refusal(check(token, 'http://gw.example/servers/other/mcp'))).toContain('aud');
  });

  it('a remembered token stops working when it expires', async () => {
    const token = await sign({ exp: Math.floor(Date.now() / 1000) + 1 });
    expect((await check(token, RESOURCE)).principal.id).toBe(`${ISSUER}#alice`);
    await new Promise((r) => setTimeout(r, 1_100 + (1000 - (Date.now() % 1000))));
    expect(await refusal(check(token, RESOURCE))).toContain('exp');
  });
});
