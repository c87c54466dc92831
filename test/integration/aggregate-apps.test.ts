/**
 * MCP Apps (SEP-1865) through an aggregate, against a real npm server: the ext-apps example
 * `@modelcontextprotocol/server-basic-react` (its `get-time` tool names `ui://get-time/mcp-app.html`
 * in `_meta.ui.resourceUri` and in the older flat `_meta["ui/resourceUri"]`). The tool's reference
 * is encoded like every resource URI of its server, the host reads the app's HTML through it, and
 * the app's own call (`get-time`, the name its server gave it) reaches the server when one server
 * alone lists that name: on a 2025 session and on stateless 2026 requests. Two servers listing it
 * make the bare name ambiguous (refused, naming the prefixed names); a filter's hidden tool is not
 * a candidate; `bareNames: "off"` takes prefixed names only.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig, connectClient, errorOf, textOf, type AggregateGatewayOptions } from '../support/aggregate.ts';
import { createTestLogger } from '../support/gateway.ts';
import { modern, resultOf } from '../support/modern.ts';
import { fileURLToPath } from 'node:url';

const APP_SERVER = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-basic-react/dist/index.js', import.meta.url));
const app = { command: process.execPath, args: [APP_SERVER, '--stdio'] };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/;

let gw: RunningGateway | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  await gw?.close();
  client = undefined;
  gw = undefined;
});

async function start(options: AggregateGatewayOptions, bareNames?: 'off' | 'unambiguous'): Promise<RunningGateway> {
  const config = buildAggregateConfig(options);
  const aggregate = { ...config.aggregate!, ...(bareNames ? { bareNames } : {}) };
  gw = await startGateway({ ...config, aggregate }, { logger: createTestLogger('warn', undefined) });
  return gw;
}

describe('MCP Apps through an aggregate', () => {
  it('encodes the UI resource reference, serves the app HTML and routes the app call by its bare name (2025 session)', async () => {
    // `other` lists get-time too but is filtered out of it: not a candidate for the bare name.
    await start({ targets: { app, other: { ...app, exposure: { tools: { allow: [], deny: ['get-time'] } } } } });
    client = await connectClient(gw!);
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'app__get-time');
    expect(tools.map((t) => t.name)).toEqual(['app__get-time']);
    expect(tool?._meta).toMatchObject({ ui: { resourceUri: 'app+ui://get-time/mcp-app.html' }, 'ui/resourceUri': 'app+ui://get-time/mcp-app.html' });
    const html = await client.readResource({ uri: 'app+ui://get-time/mcp-app.html' });
    expect(html.contents[0]).toMatchObject({ uri: 'app+ui://get-time/mcp-app.html', mimeType: 'text/html;profile=mcp-app' });
    expect((html.contents[0] as { text: string }).text).toContain('<html');
    // The app, inside the host, calls its server's tool by the server's own name.
    expect(textOf(await client.callTool({ name: 'get-time', arguments: {} }))).toMatch(ISO);
    expect(textOf(await client.callTool({ name: 'app__get-time', arguments: {} }))).toMatch(ISO);
    // A spelling that is no tool's name stays unknown.
    for (const name of ['GET-TIME', 'get-time ', 'other__get-time']) {
      const err = await errorOf(client.callTool({ name, arguments: {} }));
      expect(err.data, name).toMatchObject({ code: 'GW_UNKNOWN_TOOL' });
    }
  });

  it('routes the bare name on stateless 2026 requests too', async () => {
    await start({ targets: { app, skills: { command: process.execPath, args: [fileURLToPath(new URL('../fixtures/skills-server.mjs', import.meta.url))] } } });
    const url = new URL('/mcp', gw!.url);
    const listed = resultOf(await modern(url, 'tools/list', {}, { id: 1 }));
    const tool = (listed.tools as Array<{ name: string; _meta?: unknown }>).find((t) => t.name === 'app__get-time');
    expect(tool?._meta).toMatchObject({ ui: { resourceUri: 'app+ui://get-time/mcp-app.html' } });
    const called = resultOf(await modern(url, 'tools/call', { name: 'get-time', arguments: {} }, { id: 2 }));
    expect(textOf(called)).toMatch(ISO);
    const read = resultOf(await modern(url, 'resources/read', { uri: 'app+ui://get-time/mcp-app.html' }, { id: 3 }));
    expect((read.contents as Array<{ mimeType: string }>)[0]?.mimeType).toBe('text/html;profile=mcp-app');
  });

  it('refuses a bare name two servers list, naming the prefixed names; "off" takes prefixed names only', async () => {
    await start({ targets: { a: app, b: app } });
    client = await connectClient(gw!);
    const err = await errorOf(client.callTool({ name: 'get-time', arguments: {} }));
    expect(err.data).toMatchObject({ code: 'GW_UNKNOWN_TOOL' });
    expect(err.message).toContain('call a__get-time, b__get-time');
    await client.close();
    await gw!.close();
    await start({ targets: { a: app, b: { command: process.execPath, args: [fileURLToPath(new URL('../fixtures/skills-server.mjs', import.meta.url))] } } }, 'off');
    client = await connectClient(gw!);
    const off = await errorOf(client.callTool({ name: 'get-time', arguments: {} }));
    expect(off.data).toMatchObject({ code: 'GW_UNKNOWN_TOOL' });
    expect(textOf(await client.callTool({ name: 'a__get-time', arguments: {} }))).toMatch(ISO);
  });
});
