/**
 * The status page in a real headless Chromium (playwright-core over Debian's chromium), served by
 * a real gateway with a real stdio child and called by the MCP SDK client: the first paint with
 * JavaScript off (everything is in the HTML), then live updates over /status/events with
 * JavaScript on (a new call and a new error appear without a reload). Also /tools, the bounds of
 * the event stream, and that no secret reaches the page.
 *
 * Screenshots: set SWITCHBOARD_SCREENSHOTS=<dir> to keep them (docs/status-light.png and
 * docs/status-dark.png were made that way).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_DEFAULTS } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { CHROMIUM_ARGS, findChromium } from '../support/browser.ts';
import { buildConfig, createTestLogger } from '../support/gateway.ts';
import { fixture } from '../support/recorder.ts';

const SECRET = 'env-secret-value-never-shown';
const executablePath = findChromium();
if (executablePath === undefined) {
  console.warn('status-page.test.ts: SKIPPED: no Chromium found (install Debian\'s "chromium", or set CHROMIUM_PATH)');
}

let gw: RunningGateway;
let browser: Browser;
let client: Client;
const shots = process.env.SWITCHBOARD_SCREENSHOTS;

beforeAll(async () => {
  const config = buildConfig({
    targets: {
      files: {
        command: process.execPath,
        args: [fixture('misbehaving-server.mjs'), 'normal'],
        env: { API_TOKEN: SECRET },
        restart: { onExit: 'restart', maxRestarts: 3, initialBackoffMs: 20, maxBackoffMs: 50 },
      },
      search: { command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'normal'] },
    },
  });
  gw = await startGateway({ ...config, admin: { ...ADMIN_DEFAULTS, maxStatusStreams: 2 } }, { logger: createTestLogger('silent', undefined) });
  client = new Client({ name: 'status-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/servers/files/mcp', gw.url), { requestInit: { headers: { authorization: `Bearer ${SECRET}-header` } } }));
  await client.listTools();
  await client.callTool({ name: 'echo', arguments: { text: 'first' } });
  if (executablePath !== undefined) browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await client?.close();
  await gw?.close();
});

const callsOf = (target: string) => `#targets-body tr:has(th:text-is("${target}")) td:nth-of-type(10)`;

describe.skipIf(executablePath === undefined)('/status in headless Chromium', () => {
  it('first paint without JavaScript: targets, sessions, errors and tools are in the HTML, accessibly marked up', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, colorScheme: 'light', viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const response = await page.goto(new URL('/status', gw.url).href);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await expect.poll(() => page.title()).toBe('Switchboard status');
    expect(await page.locator('h1').innerText()).toBe('Gateway status');
    expect(await page.locator('main').count()).toBe(1);
    expect(await page.locator('nav[aria-label]').count()).toBe(1);
    expect(await page.locator('h2').allInnerTexts()).toEqual(['Targets', 'Live sessions', 'Recent errors', 'Tools per target']);
    // Every table has a caption and column headers; rows are headed by their first cell.
    expect(await page.locator('table').count()).toBe(4);
    expect(await page.locator('table caption').count()).toBe(4);
    expect(await page.locator('table thead th[scope="col"]').count()).toBeGreaterThan(20);
    expect(await page.locator('#targets-body th[scope="row"]').allInnerTexts()).toEqual(['files', 'search']);
    // tools/list and tools/call: every request forwarded to the target counts.
    expect(await page.locator(callsOf('files')).innerText()).toBe('2');
    expect(await page.locator('#targets-body tr:has(th:text-is("files")) .badge').innerText()).toBe('up');
    expect(await page.locator('#targets-body tr:has(th:text-is("search")) .badge').innerText()).toBe('idle');
    expect(await page.locator('#sessions-body tr').count()).toBe(1);
    expect(await page.locator('#sessions-body td').allInnerTexts()).toEqual(expect.arrayContaining(['target:files', 'streamable-http', '2025']));
    expect(await page.locator('#tools-body tr:has(th:text-is("files")) code').allInnerTexts()).toContain('echo');
    expect(await page.locator('#live').innerText()).toBe('Reload for fresh numbers.');
    const html = await page.content();
    expect(html).not.toContain(SECRET);
    if (shots !== undefined) await page.screenshot({ path: join(shots, 'status-light.png'), fullPage: true });
    await context.close();
  });

  it('with JavaScript: a new call and a new error show up live over /status/events', async () => {
    const context = await browser.newContext({ colorScheme: 'dark', viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    await page.goto(new URL('/status', gw.url).href);
    await page.locator('#live', { hasText: /^Live$/ }).waitFor({ timeout: 10_000 });
    const before = Number(await page.locator(callsOf('files')).innerText());
    await client.callTool({ name: 'echo', arguments: { text: 'live' } });
    await page.locator(callsOf('files'), { hasText: String(before + 1) }).waitFor({ timeout: 10_000 });
    await expect(client.callTool({ name: 'crash', arguments: { code: 7 } })).rejects.toThrow();
    await page.locator('#errors-body code', { hasText: 'GW_UPSTREAM_EXITED' }).waitFor({ timeout: 10_000 });
    expect(await page.locator('#errors-body tr:has(code:text-is("GW_UPSTREAM_EXITED")) td').first().innerText()).toBe('files');
    expect(await page.content()).not.toContain(SECRET);
    if (shots !== undefined) await page.screenshot({ path: join(shots, 'status-dark.png'), fullPage: true });
    await context.close();
  });

  it('/tools lists every server and its tools with their descriptions', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(new URL('/tools', gw.url).href);
    expect(await page.locator('h2').allInnerTexts()).toEqual([expect.stringMatching(/^files/), expect.stringMatching(/^search/)]);
    expect(await page.locator('section:has(h2:text-matches("^files")) tbody th').allInnerTexts()).toContain('echo');
    expect(await page.locator('section:has(h2:text-matches("^search")) tbody').innerText()).toContain('Not listed yet');
    await context.close();
  });
});

describe('/status/events', () => {
  it('sends the page fragments as a snapshot event, and refuses readers past maxStatusStreams with 503', async () => {
    const controllers = [new AbortController(), new AbortController()];
    const first = await fetch(new URL('/status/events', gw.url), { signal: controllers[0]!.signal });
    expect(first.headers.get('content-type')).toBe('text/event-stream');
    const reader = first.body!.getReader();
    let text = '';
    while (!text.includes('event: snapshot')) text += new TextDecoder().decode((await reader.read()).value);
    await fetch(new URL('/status/events', gw.url), { signal: controllers[1]!.signal });
    const third = await fetch(new URL('/status/events', gw.url));
    expect(third.status).toBe(503);
    expect(await third.json()).toMatchObject({ error: { data: { code: 'GW_TOO_MANY_STREAMS', limit: 2 } } });
    for (const c of controllers) c.abort();
  });
});

describe('/tools through an aggregate endpoint', () => {
  it('shows the tools each server listed to an aggregate session, under the server that has them', async () => {
    const aggregate = new Client({ name: 'status-aggregate', version: '1' });
    await aggregate.connect(new StreamableHTTPClientTransport(new URL('/mcp', gw.url)));
    const names = (await aggregate.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['files__echo', 'search__echo']));
    const html = await (await fetch(new URL('/tools', gw.url))).text();
    const search = html.slice(html.indexOf('id="tools-search"'));
    expect(search).toContain('<code>echo</code>');
    expect(search).not.toContain('Not listed yet');
    await aggregate.close();
  });
});
