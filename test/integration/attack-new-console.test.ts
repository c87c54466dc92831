/**
 * Attacks on the operator console's sign-in and session (issue 35), over HTTP against a real
 * oidc-provider: login CSRF (an attacker's own code and state delivered to a victim's browser,
 * which holds another login cookie or none), a callback replayed, an open redirect through the
 * login or callback, a CSRF token of one session used with another session's cookie, the session
 * cookie sent as a bearer, and a cookie replayed after its operator signed out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn, startConsoleGateway, type ConsoleGateway } from '../support/console.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';

let as: AuthorizationServer;
let gw: ConsoleGateway;
const url = (path: string) => new URL(path, gw.gateway.url);
const origin = () => new URL(gw.gateway.url).origin;
const cookiesOf = (res: Response) => res.headers.getSetCookie().map((line) => line.split(';', 1)[0] as string);

beforeAll(async () => {
  as = await startAuthorizationServer({ scopes: ['mcp', 'switchboard:admin'] });
  gw = await startConsoleGateway(as);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await as?.close();
});

/** An attacker's own sign-in up to the callback: its URL (code and state) and the login cookie it belongs to. */
async function ownCallback(): Promise<{ callback: URL; loginCookie: string }> {
  const login = await fetch(url('/admin/login'), { redirect: 'manual' });
  const location = login.headers.get('location')!;
  const code = await as.followAuthorization(location);
  const callback = url('/admin/callback');
  callback.searchParams.set('code', code);
  callback.searchParams.set('state', new URL(location).searchParams.get('state') ?? '');
  return { callback, loginCookie: cookiesOf(login).join('; ') };
}

const sessionCookie = (res: Response) => cookiesOf(res).find((c) => c.startsWith('switchboard_console=') && c !== 'switchboard_console=');

describe('attack: the console sign-in', () => {
  it("login CSRF: an attacker's code and state in a victim's browser (another login cookie, or none) start no session", async () => {
    const attacker = await ownCallback();
    const victimLogin = await fetch(url('/admin/login'), { redirect: 'manual' });
    for (const cookie of [cookiesOf(victimLogin).join('; '), '']) {
      const res = await fetch(attacker.callback, { headers: cookie === '' ? {} : { cookie }, redirect: 'manual' });
      expect(res.status, cookie).not.toBe(200);
      expect(sessionCookie(res), cookie).toBeUndefined();
    }
  });

  it('a callback replayed (same code, state and login cookie) starts no second session', async () => {
    const own = await ownCallback();
    const first = await fetch(own.callback, { headers: { cookie: own.loginCookie }, redirect: 'manual' });
    expect(sessionCookie(first)).toBeDefined();
    const again = await fetch(own.callback, { headers: { cookie: own.loginCookie }, redirect: 'manual' });
    expect(sessionCookie(again)).toBeUndefined();
  });

  it('no open redirect: the login goes to the issuer only, whatever it is asked', async () => {
    for (const query of ['?next=https://evil.example/', '?returnTo=//evil.example', '?redirect_uri=https://evil.example/cb', '?redirect=https://evil.example']) {
      const res = await fetch(url(`/admin/login${query}`), { redirect: 'manual' });
      const location = new URL(res.headers.get('location') ?? '', gw.gateway.url);
      expect(location.origin, query).toBe(new URL(as.issuer).origin);
      expect(location.searchParams.get('redirect_uri'), query).toBe(url('/admin/callback').href);
      expect(location.href, query).not.toContain('evil.example');
    }
  });
});

describe('attack: the console session', () => {
  it("one session's CSRF token does not authorise another session's change; the cookie is no bearer", async () => {
    const a = await signIn(gw.gateway, as);
    const b = await signIn(gw.gateway, as);
    expect(a.csrf).not.toBe(b.csrf);
    const mixed = await fetch(url('/admin/api/sessions/end'), { method: 'POST', headers: { 'content-type': 'application/json', cookie: a.cookie, 'x-csrf-token': b.csrf, origin: origin() }, body: '{"handle":"x"}' });
    expect(mixed.status).toBe(403);
    const bearer = await fetch(url('/admin/api/servers'), { headers: { authorization: `Bearer ${a.cookie.slice(a.cookie.indexOf('=') + 1)}` } });
    expect(bearer.status).toBe(401);
  });

  it('a cookie replayed after its operator signed out opens nothing', async () => {
    const { cookie, csrf } = await signIn(gw.gateway, as);
    expect((await fetch(url('/admin/api/servers'), { headers: { cookie } })).status).toBe(200);
    const out = await fetch(url('/admin/api/logout'), { method: 'POST', headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf, origin: origin() }, body: '{}' });
    expect(out.status).toBeLessThan(300);
    // The browser forgets it; someone who copied it (a shared machine, a proxy log) replays it.
    const replayed = await fetch(url('/admin/api/servers'), { headers: { cookie } });
    expect(replayed.status).toBe(401);
    const change = await fetch(url('/admin/api/sessions/end'), { method: 'POST', headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf, origin: origin() }, body: '{"handle":"x"}' });
    expect([401, 403]).toContain(change.status);
  });
});
