/**
 * The console on any replica: its cookie is sealed with a key derived from the cluster keys, so a
 * session started on one replica (real processes, real Redis) is good on another, CSRF token and
 * all; a forged one is not (another key's: test/unit/http/console-seal.test.ts). (Without gateway.auth on loopback, the local
 * operator signs in at once: what is tested here is the cookie, not the issuer.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type TestCluster } from '../support/cluster.ts';

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startCluster({ replicas: 2, gateway: { admin: { console: { enabled: true } } } });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

describe('the console across replicas', () => {
  it('a session signed in on r0 reads and changes through r1', async () => {
    const [r0, r1] = cluster.replicas as [(typeof cluster.replicas)[0], (typeof cluster.replicas)[0]];
    const login = await fetch(new URL('/admin/login', r0.url));
    const cookie = login.headers.getSetCookie().find((c) => c.startsWith('switchboard_console='))!.split(';', 1)[0]!;
    const page = await (await fetch(new URL('/admin/', r1.url), { headers: { cookie } })).text();
    expect(page).toContain('<code id="operator">local</code>');
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(page)![1]!;
    const end = (headers: Record<string, string>) => fetch(new URL('/admin/api/sessions/end', r1.url), { method: 'POST', headers: { 'content-type': 'application/json', cookie, origin: new URL(r1.url).origin, ...headers }, body: '{"handle":"none"}' });
    expect((await end({ 'x-csrf-token': csrf })).status).toBe(404);
    expect((await end({ 'x-csrf-token': 'wrong' })).status).toBe(403);
    // A forged cookie is no session here.
    const forged = await fetch(new URL('/admin/', r1.url), { headers: { cookie: `switchboard_console=${Buffer.alloc(80, 7).toString('base64url')}` } });
    expect(await forged.text()).not.toContain('csrf-token');
  });
});
