/**
 * The console without gateway.auth: off unless `gateway.admin.console` turns it on, and then only on
 * a loopback listener, as the local operator. A script on the machine (no Origin) may use the API;
 * a browser's change (it always sends an Origin) needs the console's cookie and CSRF token, so a
 * page of another local origin cannot drive it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_DEFAULTS, type GatewayConfig } from '../../src/config/types.ts';
import { consoleExposure } from '../../src/http/admin-routes.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildConfig, createTestLogger } from '../support/gateway.ts';
import { fixture } from '../support/recorder.ts';

let config: GatewayConfig;
let gw: RunningGateway;
let off: RunningGateway;
const consoleOn = { enabled: true, sessionTtlSec: 600 };

beforeAll(async () => {
  const base = buildConfig({ targets: { files: { command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'normal'] } } });
  config = { ...base, admin: { ...ADMIN_DEFAULTS, console: consoleOn } };
  gw = await startGateway(config, { logger: createTestLogger('silent', undefined) });
  off = await startGateway(base, { logger: createTestLogger('silent', undefined) });
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await off?.close();
});

const end = (headers: Record<string, string>) => fetch(new URL('/admin/api/sessions/end', gw.url), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ handle: 'nope' }) });

describe('the console without gateway.auth', () => {
  it('is not served unless turned on, nor beyond loopback, nor with auth but no client id', async () => {
    expect((await fetch(new URL('/admin/', off.url))).status).toBe(404);
    expect(consoleExposure({ ...config, listen: { host: '0.0.0.0', port: 0 }, admin: { ...ADMIN_DEFAULTS, exposeWithoutAuth: true, console: consoleOn } }).served).toBe(false);
    expect(consoleExposure({ ...config, auth: { anonymous: false, apiKeys: [], apiKeyHeader: 'authorization', scopes: [], stepUp: 'http' } as never }).served).toBe(false);
    expect(consoleExposure(config).served).toBe(true);
  });

  it('lets a local script read and change (no Origin), refuses a browser change without the cookie', async () => {
    expect((await fetch(new URL('/admin/api/servers', gw.url))).status).toBe(200);
    expect((await end({})).status).toBe(404);
    const browser = await end({ origin: new URL(gw.url).origin });
    expect(browser.status).toBe(403);
    expect(((await browser.json()) as { error: { data: { code: string } } }).error.data.code).toBe('GW_CSRF_REFUSED');
  });

  it('signs in the local operator, whose changes need the CSRF token', async () => {
    const login = await fetch(new URL('/admin/login', gw.url));
    const cookie = login.headers.getSetCookie()[0]!.split(';', 1)[0]!;
    const page = await (await fetch(new URL('/admin/', gw.url), { headers: { cookie } })).text();
    expect(page).toContain('<code id="operator">local</code>');
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(page)![1]!;
    const origin = new URL(gw.url).origin;
    expect((await end({ cookie, origin })).status).toBe(403);
    expect((await end({ cookie, origin, 'x-csrf-token': csrf })).status).toBe(404);
  });
});
