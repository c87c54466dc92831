/**
 * The console's sealed cookies (http/console-seal.ts): opened only by a key of the ring, only for
 * the purpose they were sealed for, only before they expire, and not after a single bit changed;
 * the newest key seals and the older ones still open (rotation).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cookieOf, createSealer, sameToken } from '../../../src/http/console-seal.ts';

describe('console cookies', () => {
  const key = randomBytes(32);
  const sealer = createSealer([key]);
  const until = Date.now() + 60_000;

  it('opens what it sealed, for the same purpose only', () => {
    const sealed = sealer.seal('session', { operator: 'iss#alice', csrf: 't' }, until);
    expect(sealer.open('session', sealed)).toEqual({ operator: 'iss#alice', csrf: 't', until });
    expect(sealer.open('login', sealed)).toBeUndefined();
    expect(sealed).not.toContain('alice');
  });

  it('refuses an expired value, a changed bit, another key, junk and oversize input', () => {
    expect(sealer.open('session', sealer.seal('session', { operator: 'a' }, Date.now() - 1))).toBeUndefined();
    const raw = Buffer.from(sealer.seal('session', { operator: 'a' }, until), 'base64url');
    for (let i = 0; i < raw.length; i += 7) {
      const copy = Buffer.from(raw);
      copy[i] = (copy[i] as number) ^ 1;
      expect(sealer.open('session', copy.toString('base64url'))).toBeUndefined();
    }
    expect(createSealer([randomBytes(32)]).open('session', raw.toString('base64url'))).toBeUndefined();
    for (const junk of [undefined, '', 'x', 'A'.repeat(5000), '%%%']) expect(sealer.open('session', junk)).toBeUndefined();
  });

  it('rotation: the first key seals, every key of the ring opens', () => {
    const next = createSealer([randomBytes(32), key]);
    expect(next.open('session', sealer.seal('session', { operator: 'a' }, until))).toMatchObject({ operator: 'a' });
    expect(sealer.open('session', next.seal('session', { operator: 'a' }, until))).toBeUndefined();
  });

  it('reads a cookie by its exact name, compares tokens by value', () => {
    expect(cookieOf('a=1; switchboard_console=v; switchboard_console_login=w', 'switchboard_console')).toBe('v');
    expect(cookieOf('xswitchboard_console=v', 'switchboard_console')).toBeUndefined();
    expect(sameToken('abc', 'abc')).toBe(true);
    expect(sameToken('abd', 'abc')).toBe(false);
    expect(sameToken(undefined, 'abc')).toBe(false);
  });
});

describe('console cookies across replicas', () => {
  it('every replica of a cluster derives the same console key from the cluster keys, and a key of its own for nothing else', async () => {
    const { deriveKeyRing } = await import('../../../src/cluster/keyring.ts');
    const keys = ['k'.repeat(32), 'old'.repeat(11)];
    const a = deriveKeyRing(keys);
    const b = deriveKeyRing(keys);
    expect(a[0]!.console.equals(b[0]!.console)).toBe(true);
    expect(a[0]!.console.equals(a[0]!.seal.export())).toBe(false);
    const replicaA = createSealer(a.map((k) => k.console));
    const replicaB = createSealer(b.map((k) => k.console));
    expect(replicaB.open('session', replicaA.seal('session', { operator: 'x' }, Date.now() + 1_000))).toMatchObject({ operator: 'x' });
  });
});

describe('console cookie attributes', () => {
  it('HttpOnly and SameSite always; Secure beyond loopback, or behind an https public URL', async () => {
    const { createConsoleContext } = await import('../../../src/http/console-context.ts');
    const { createOriginPolicy } = await import('../../../src/http/guards.ts');
    const { NOOP_OBSERVER } = await import('../../../src/log/observer.ts');
    const { buildConfig, createTestLogger } = await import('../../support/gateway.ts');
    const base = buildConfig({ targets: {} });
    const settings = { enabled: true, sessionTtlSec: 60 };
    const cookieOn = (config: typeof base) => createConsoleContext(config, settings, [randomBytes(32)], createOriginPolicy(config), createTestLogger('silent', undefined), NOOP_OBSERVER, () => undefined).cookie('n', 'v', '/admin', 'Strict', 60);
    expect(cookieOn(base)).toBe('n=v; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=60');
    expect(cookieOn({ ...base, listen: { host: '0.0.0.0', port: 0 } })).toMatch(/; HttpOnly; SameSite=Strict; Max-Age=60; Secure$/);
    const auth = { anonymous: false, apiKeys: [], apiKeyHeader: 'authorization', scopes: [], stepUp: 'http', publicUrl: 'https://mcp.example.com', jwt: undefined, authorizationServers: [] } as const;
    expect(cookieOn({ ...base, auth })).toMatch(/; Secure$/);
  });
});
