/**
 * A security pass of the console's own routes, over real HTTP against a real gateway signed in
 * through the real oidc-provider: who may call the API (cookie, bearer with and without the admin
 * scope, nobody, a forged or tampered or wrong-purpose cookie), CSRF on every change (token,
 * Origin, a same-site page of another origin), Host and Origin checks, the full hash for a pin,
 * headers (CSP, cookie attributes), and that a scripted client with an admin key gets the same API.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';
import { ADMIN_KEY, ALICE_KEY, signIn, startConsoleGateway, type ConsoleGateway } from '../support/console.ts';

let as: AuthorizationServer;
let gw: ConsoleGateway;
let cookie: string;
let csrf: string;
const url = (path: string) => new URL(path, gw.gateway.url);
const codeOf = async (res: Response) => ((await res.json()) as { error?: { data?: { code?: string } } }).error?.data?.code;

beforeAll(async () => {
  as = await startAuthorizationServer({ scopes: ['mcp', 'switchboard:admin'] });
  gw = await startConsoleGateway(as);
  ({ cookie, csrf } = await signIn(gw.gateway, as));
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await as?.close();
});

const post = (path: string, headers: Record<string, string>, body: unknown = {}) =>
  fetch(url(path), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('console API: who may call it', () => {
  it('refuses a request with no cookie and no credential (401), and a key without the admin scope (403)', async () => {
    const none = await fetch(url('/admin/api/servers'));
    expect(none.status).toBe(401);
    expect(await codeOf(none)).toBe('GW_UNAUTHORIZED');
    const alice = await fetch(url('/admin/api/servers'), { headers: { authorization: `Bearer ${ALICE_KEY}` } });
    expect(alice.status).toBe(403);
    expect(await codeOf(alice)).toBe('GW_INSUFFICIENT_SCOPE');
  });

  it('answers the sign-in page at /admin and /admin/ to anyone, holding no data', async () => {
    for (const path of ['/admin', '/admin/']) {
      const res = await fetch(url(path));
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(html).toContain('href="/admin/login"');
      expect(html).not.toContain('csrf-token');
    }
    // The error text is one of the page's own, never the query's.
    expect(await (await fetch(url('/admin/?error=<script>x</script>'))).text()).not.toContain('<script>x');
  });

  it('serves a script with an admin key, and a signed-in cookie', async () => {
    const script = await fetch(url('/admin/api/servers'), { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(script.status).toBe(200);
    expect(((await script.json()) as { servers: Array<{ name: string }> }).servers.map((s) => s.name)).toEqual(['rug', 'evil']);
    const browser = await fetch(url('/admin/api/sessions'), { headers: { cookie } });
    expect(browser.status).toBe(200);
  });

  it('refuses a forged, a tampered and a wrong-purpose cookie', async () => {
    const value = cookie.slice(cookie.indexOf('=') + 1);
    const flipped = `${value.slice(0, 20)}${value[20] === 'A' ? 'B' : 'A'}${value.slice(21)}`;
    for (const bad of ['switchboard_console=forged', `switchboard_console=${flipped}`, `switchboard_console=${'A'.repeat(5000)}`]) {
      expect((await fetch(url('/admin/api/servers'), { headers: { cookie: bad } })).status).toBe(401);
    }
    // A login cookie (sealed with the same key, another purpose) is not a session.
    const login = await fetch(url('/admin/login'), { redirect: 'manual' });
    const loginValue = login.headers.getSetCookie()[0]!.split(';', 1)[0]!.split('=')[1]!;
    expect((await fetch(url('/admin/api/servers'), { headers: { cookie: `switchboard_console=${loginValue}` } })).status).toBe(401);
  });

  it('sets the login cookie HttpOnly, SameSite=Lax (the issuer sends the browser back), scoped to the callback', async () => {
    const login = await fetch(url('/admin/login'), { redirect: 'manual' });
    const line = login.headers.getSetCookie()[0]!;
    expect(line).toMatch(/HttpOnly/);
    expect(line).toMatch(/SameSite=Lax/);
    expect(line).toMatch(/Path=\/admin\/callback/);
  });
});

describe('console API: CSRF on every change', () => {
  const origin = () => new URL(gw.gateway.url).origin;
  it('refuses a change without the token, with a wrong one, or from another Origin', async () => {
    const body = { handle: 'x' };
    const cases: Array<Record<string, string>> = [
      { cookie, origin: origin() },
      { cookie, origin: origin(), 'x-csrf-token': `${csrf}x` },
      { cookie, 'x-csrf-token': csrf },
      { cookie, origin: 'http://127.0.0.1:1', 'x-csrf-token': csrf },
    ];
    for (const headers of cases) {
      const res = await post('/admin/api/sessions/end', headers, body);
      expect(res.status, JSON.stringify(Object.keys(headers))).toBe(403);
      expect(await codeOf(res)).toBe('GW_CSRF_REFUSED');
    }
    // The right token and Origin pass the check (the session does not exist: 404).
    const ok = await post('/admin/api/sessions/end', { cookie, origin: origin(), 'x-csrf-token': csrf }, body);
    expect(ok.status).toBe(404);
    expect(gw.lines.some((l) => l.includes('"reason":"csrf"'))).toBe(true);
  });

  it('refuses a form post (urlencoded) before reading it, cookie or not', async () => {
    const form = await fetch(url('/admin/api/sessions/end'), { method: 'POST', headers: { cookie, origin: 'http://127.0.0.1:1', 'content-type': 'application/x-www-form-urlencoded' }, body: 'handle=x' });
    expect(form.status).toBe(403);
  });

  it('refuses a foreign Origin and a foreign Host outright', async () => {
    const foreign = await fetch(url('/admin/api/servers'), { headers: { cookie, origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(await codeOf(foreign)).toBe('GW_FORBIDDEN_ORIGIN');
    // fetch cannot set Host: a raw request, as a DNS-rebinding page's browser would send it.
    const host = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(url('/admin/'), { headers: { host: 'evil.example', cookie } }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(host.status).toBe(403);
    expect(host.body).toContain('GW_FORBIDDEN_HOST');
  });
});

describe('console API: bad input', () => {
  const change = (hash: string) => ({ target: 'rug', kind: 'tool', name: 'echo', hash });
  it('approving a pin needs the full 64-digit hash', async () => {
    const headers = { cookie, origin: new URL(gw.gateway.url).origin, 'x-csrf-token': csrf };
    const short = await post('/admin/api/pins/approve', headers, change('abcd'));
    expect(short.status).toBe(400);
    expect(await codeOf(short)).toBe('GW_INVALID_PARAMS');
    const none = await post('/admin/api/pins/approve', headers, change('a'.repeat(64)));
    expect(none.status).toBe(404);
    const notJson = await fetch(url('/admin/api/pins/approve'), { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{' });
    expect(notJson.status).toBe(400);
  });

  it('sends the page with a strict CSP and no inline script', async () => {
    const page = await fetch(url('/admin/'), { headers: { cookie } });
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html).not.toMatch(/<script>(?!<)/);
    expect(html).not.toMatch(/ on[a-z]+=/);
  });
});
