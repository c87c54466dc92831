/**
 * The operator's console in a real headless Chromium (playwright-core over Debian's chromium),
 * served by a real gateway over real stdio children (the rug-pull fixture, pinned in block mode,
 * and a server whose names are markup), signed in through the real oidc-provider: approve a pin
 * shown as a diff, end a session, read the access view for two principals (hostile names shown as
 * text), the audit view; a non-operator refused; a cross-site form post refused.
 *
 * Screenshots: SWITCHBOARD_SCREENSHOTS=<dir> keeps them (docs/console-light.png and
 * docs/console-dark.png were made that way).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, findChromium } from '../support/browser.ts';
import { ALICE_KEY, freePort, startConsoleGateway, type ConsoleGateway } from '../support/console.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';

const executablePath = findChromium();
if (executablePath === undefined) console.warn('console.test.ts: SKIPPED: no Chromium found (install Debian\'s "chromium", or set CHROMIUM_PATH)');
const shots = process.env.SWITCHBOARD_SCREENSHOTS;

let as: AuthorizationServer;
let gw: ConsoleGateway;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const clients: Client[] = [];

async function connect(path: string, key: string): Promise<Client> {
  const client = new Client({ name: 'console-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, gw.gateway.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  clients.push(client);
  return client;
}

/** Signs in through the issuer in `ctx`; resolves on the console page (or wherever sign-in ends). */
async function signInWith(ctx: BrowserContext, base: string): Promise<Page> {
  const p = await ctx.newPage();
  await p.goto(new URL('/admin/', base).href);
  await p.getByRole('link', { name: 'Sign in' }).click();
  await p.waitForURL((u) => u.pathname === '/admin/' && u.port === new URL(base).port, { timeout: 20_000 });
  return p;
}

beforeAll(async () => {
  as = await startAuthorizationServer({ scopes: ['mcp', 'switchboard:admin'] });
  gw = await startConsoleGateway(as);
  if (executablePath === undefined) return;
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  context = await browser.newContext({ colorScheme: 'light', viewport: { width: 1280, height: 900 } });
  page = await signInWith(context, gw.gateway.url);
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await browser?.close();
  await gw?.close();
  await as?.close();
});

describe.skipIf(executablePath === undefined)('the console in headless Chromium', () => {
  it('signs in through the OpenID provider into a sealed HttpOnly SameSite=Strict cookie', async () => {
    await expect.poll(() => page.locator('#operator').innerText()).toBe(`${as.issuer}#alice`);
    const cookie = (await context.cookies()).find((c) => c.name === 'switchboard_console');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin' });
    expect(cookie?.value).not.toContain('alice');
    await page.locator('#servers-body tbody tr').first().waitFor();
    expect(await page.locator('#servers-body tbody th').allInnerTexts()).toEqual(['rug', 'evil']);
  });

  it('shows a pending change as a diff with its dangers, approves it by its full hash, and says who did', async () => {
    const alice = await connect('/servers/rug/mcp', ALICE_KEY);
    await alice.listTools();
    await writeFile(gw.state, 'inject');
    await expect.poll(async () => (await alice.listTools()).tools.some((t) => t.name === 'echo'), { timeout: 10_000 }).toBe(false);
    await page.goto(new URL('/admin/#pins', gw.gateway.url).href);
    const card = page.locator('article.pin', { hasText: 'rug · tool · echo' });
    await card.waitFor();
    expect(await card.locator('.diff .del').allInnerTexts()).toContain('- description: "Echoes the text back."');
    expect(await card.locator('.diff .add').first().innerText()).toContain('<IMPORTANT>');
    expect(await card.locator('li strong').allInnerTexts()).toContain('model-instructions');
    expect(await card.locator('code.hash').innerText()).toMatch(/^[0-9a-f]{64}$/);
    if (shots !== undefined) await page.screenshot({ path: join(shots, 'console-light.png'), fullPage: true });
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.locator('#notice', { hasText: 'Approved tool echo of rug.' }).waitFor();
    expect(await page.locator('#pins-body tbody tr').first().innerText()).toContain(`${as.issuer}#alice\tapproved`);
    expect((await alice.listTools()).tools.map((t) => t.name)).toContain('echo');
    expect(gw.lines.some((l) => l.includes('"action":"approve-pin"') && l.includes(`"by":"${as.issuer}#alice"`))).toBe(true);
    // An audit record too, in the trail the console reads (with the cookie, as the page does): who signed in, who approved what.
    const records = ((await (await page.request.get(new URL('/admin/api/calls?principal=' + encodeURIComponent(`${as.issuer}#alice`), gw.gateway.url).href)).json()) as { calls: Array<Record<string, unknown>> }).calls;
    expect(records.map((r) => r.method)).toEqual(expect.arrayContaining(['admin/approve-pin', 'admin/sign-in']));
    expect(records.find((r) => r.method === 'admin/approve-pin')).toMatchObject({ endpoint: 'admin', server: 'rug', outcome: 'ok', decision: 'allow' });
  });

  it('ends a session from the sessions view', async () => {
    const victim = await connect('/servers/rug/mcp', ALICE_KEY);
    await victim.callTool({ name: 'steady', arguments: {} });
    await page.goto(new URL('/admin/#sessions', gw.gateway.url).href);
    await page.getByLabel('Principal').fill('key:alice');
    await page.getByRole('button', { name: 'Apply' }).click();
    const before = await page.locator('#sessions-body tbody tr').count();
    expect(before).toBeGreaterThanOrEqual(2);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.locator('#sessions-body tbody tr').last().getByRole('button', { name: /^End session/ }).click();
    await page.locator('#notice', { hasText: /^Session .* ended\.$/ }).waitFor();
    await expect.poll(() => page.locator('#sessions-body tbody tr').count()).toBe(before - 1);
    expect(gw.lines.some((l) => l.includes('"action":"end-session"'))).toBe(true);
  });

  it('reads the access view for two principals, with the rule that decided each, hostile names as text', { timeout: 60_000 }, async () => {
    await (await connect('/servers/rug/mcp', ALICE_KEY)).listTools();
    const evil = await connect('/servers/evil/mcp', ALICE_KEY);
    await evil.listTools();
    await evil.listPrompts();
    await evil.listResources();
    await page.goto(new URL('/admin/#access', gw.gateway.url).href);
    const show = async (principal: string) => {
      await page.getByLabel('Principal id').fill(principal);
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.locator('#access-result p', { hasText: `As ${principal}` }).waitFor();
    };
    const rowOf = (path: string, name: string) => page.locator(`section.reach[data-path="${path}"] tr`, { has: page.locator(`td:text-is("${name}")`) });
    await show('key:alice');
    expect(await rowOf('/servers/rug/mcp', 'echo').locator('td').allInnerTexts()).toEqual(['tools', 'echo', 'allowed', 'policy.rules[0] (allow)']);
    expect(await rowOf('/servers/rug/mcp', 'mutate').locator('td').allInnerTexts()).toEqual(['tools', 'mutate', 'denied', 'policy.rules[2] (deny)']);
    expect(await rowOf('/mcp', 'rug__echo').locator('td').nth(2).innerText()).toBe('allowed');
    // The hostile server's names are text in the table, not markup in the page.
    await page.locator('#access-result td', { hasText: '<img src=x onerror="window.__pwned=1">' }).first().waitFor();
    await page.locator('#access-result td', { hasText: '<iframe src="javascript:window.__pwned=5">' }).first().waitFor();
    if (shots !== undefined) {
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.screenshot({ path: join(shots, 'console-dark.png'), fullPage: false });
      await page.emulateMedia({ colorScheme: 'light' });
    }
    await show('key:bob');
    expect(await rowOf('/servers/rug/mcp', 'echo').locator('td').allInnerTexts()).toEqual(['tools', 'echo', 'denied', 'no policy rule grants it']);
    expect(await rowOf('/servers/rug/mcp', 'steady').locator('td').allInnerTexts()).toEqual(['tools', 'steady', 'allowed', 'policy.rules[1] (allow)']);
    expect(await page.locator('section.reach[data-path="/servers/evil/mcp"] tbody tr').first().innerText()).toContain('denied');
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await page.locator('main img, main svg, main iframe, main script').count()).toBe(0);
  });

  it('filters the recent calls in the audit view, and is usable by keyboard', async () => {
    await page.goto(new URL('/admin/#servers', gw.gateway.url).href);
    await page.locator('nav a[href="#audit"]').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate('document.activeElement && document.activeElement.id')).toBe('audit-title');
    await page.getByLabel('Tool').fill('steady');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(async () => (await page.locator('#audit-body tbody tr td:nth-of-type(4)').allInnerTexts()).every((t) => t === 'steady')).toBe(true);
    expect(await page.locator('#audit-body tbody tr').count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#audit-body tbody tr').first().innerText()).toContain('key:alice');
  });

  it('refuses a cross-site form post (a page of another origin on the same site, with the cookie)', async () => {
    const before = await (await page.request.get(new URL('/admin/api/sessions', gw.gateway.url).href)).json() as { total: number; sessions: Array<{ handle: string }> };
    const handle = before.sessions[0]!.handle;
    const port = await freePort();
    const attacker: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<form method="post" action="${gw.gateway.url}/admin/api/sessions/end" enctype="text/plain"><input name='{"handle":"${handle}","x":"' value='"}'></form><script>document.forms[0].submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(port, '127.0.0.1', resolve));
    try {
      const other = await context.newPage();
      const answered = other.waitForResponse((r) => r.url().endsWith('/admin/api/sessions/end'));
      await other.goto(`http://127.0.0.1:${port}/`);
      const response = await answered;
      expect(response.status()).toBe(403);
      expect(await response.text()).toContain('GW_CSRF_REFUSED');
      await other.close();
    } finally {
      await new Promise((resolve) => attacker.close(resolve));
    }
    const after = await (await page.request.get(new URL('/admin/api/sessions', gw.gateway.url).href)).json() as { total: number };
    expect(after.total).toBe(before.total);
  });

  it('refuses a non-operator: signed in at the issuer, not let in', async () => {
    const strict = await startConsoleGateway(as, { operatorClaim: { name: 'sub', values: ['carol'] } });
    const ctx = await browser.newContext();
    try {
      const p = await signInWith(ctx, strict.gateway.url);
      await p.locator('[role="alert"]', { hasText: 'not an operator' }).waitFor();
      expect((await ctx.cookies()).some((c) => c.name === 'switchboard_console')).toBe(false);
      expect((await p.request.get(new URL('/admin/api/servers', strict.gateway.url).href)).status()).toBe(401);
      expect(strict.lines.some((l) => l.includes('"reason":"not an operator"'))).toBe(true);
    } finally {
      await ctx.close();
      await strict.close();
    }
  });
});
