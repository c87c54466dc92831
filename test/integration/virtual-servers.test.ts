/**
 * Virtual servers (`gateway.virtualServers`): one endpoint built from chosen tools, prompts and
 * resources of two targets, loaded through the real config parser. A real SDK client over
 * Streamable HTTP and WebSocket, and a raw 2026 stateless request, see exactly what was picked
 * and reach each original; the names it did not pick, the originals of renamed picks, look-alike
 * spellings and a policy on the server's own names hold on this path too.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { colliderServer, connectClient, errorOf, textOf } from '../support/aggregate.ts';
import { createTestLogger, everythingServer } from '../support/gateway.ts';
import { modern, resultOf } from '../support/modern.ts';

function document(policy?: unknown, kit?: unknown, auth?: unknown): Record<string, unknown> {
  const collider = colliderServer('--page-size=50');
  const everything = everythingServer();
  return {
    mcpServers: {
      collider: { command: collider.command, args: collider.args, overrides: { tools: { whoami: { name: 'who', description: 'Who runs me' } } } },
      everything: { command: everything.command, args: everything.args },
    },
    gateway: {
      port: 0,
      logging: { level: 'silent' },
      ...(policy === undefined ? {} : { policy }),
      ...(auth === undefined ? {} : { auth }),
      virtualServers: {
        kit: kit ?? {
          tools: [
            { server: 'collider', tool: 'echo', as: 'say', description: 'Repeat a message' },
            { server: 'collider', tool: 'whoami' },
            { server: 'everything', tool: 'get-sum', as: 'add', annotations: { readOnlyHint: true } },
          ],
          prompts: [{ server: 'collider', prompt: 'greet' }],
          resources: [{ server: 'collider', uri: 'collider://notes/1' }],
        },
      },
    },
  };
}

async function start(policy?: unknown): Promise<RunningGateway> {
  const config = parseConfig(document(policy));
  return startGateway(config, { logger: createTestLogger('silent', undefined) });
}

type Tool = { name: string; description?: string; annotations?: Record<string, unknown> };

describe('a virtual server over two targets', () => {
  let gw: RunningGateway;
  let client: Client;
  beforeAll(async () => {
    gw = await start();
    client = await connectClient(gw, '/virtual/kit/mcp');
  });
  afterAll(async () => {
    await client?.close();
    await gw?.close();
  });

  it('lists exactly what it picked, under the names it gave', async () => {
    const tools = (await client.listTools()).tools as Tool[];
    expect(tools.map((t) => t.name).sort()).toEqual(['add', 'say', 'who']);
    expect(tools.find((t) => t.name === 'say')?.description).toBe('Repeat a message');
    // No `as`: the name the server's own overrides give it.
    expect(tools.find((t) => t.name === 'who')?.description).toBe('Who runs me');
    expect(tools.find((t) => t.name === 'add')?.annotations?.readOnlyHint).toBe(true);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['greet']);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['collider+collider://notes/1']);
  });

  it('routes each call to its own target', async () => {
    expect(textOf(await client.callTool({ name: 'say', arguments: { message: 'hi' } }))).toBe('collider echo: hi');
    expect(textOf(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }))).toContain('5');
    expect(textOf(await client.callTool({ name: 'who', arguments: {} }))).toContain('pid');
    const read = await client.readResource({ uri: 'collider+collider://notes/1' });
    expect(JSON.stringify(read.contents)).toContain('content of collider://notes/1');
    expect(JSON.stringify((await client.getPrompt({ name: 'greet' })).messages)).toContain('prompt greet');
  });

  it.each([
    ['the original of a renamed pick', 'echo'],
    ['the original of an overridden pick', 'whoami'],
    ['a tool it did not pick', 'crash'],
    ['the other server\'s tool of the same name', 'get-sum'],
    ['the aggregate\'s spelling', 'collider__echo'],
    ['a different case', 'Say'],
    ['a trailing space', 'say '],
    ['a zero-width character', 'sa\u200by'],
    ['a Cyrillic look-alike', 's\u0430y'],
  ])('refuses %s like an unknown tool', async (_label, name) => {
    const refused = await errorOf(client.callTool({ name, arguments: { message: 'x' } }));
    expect(refused.code).toBe(-32602);
    expect(refused.message).toContain('Unknown tool');
  });

  it('refuses a prompt and a resource it did not pick', async () => {
    expect((await errorOf(client.getPrompt({ name: 'summarise' }))).code).toBe(-32602);
    await expect(client.readResource({ uri: 'collider+collider://notes/2' })).rejects.toThrow(/not found/i);
  });

  it.each([
    ['WebSocket at /virtual/kit/ws', (base: string): Transport => new WebSocketClientTransport(new URL('/virtual/kit/ws', base.replace(/^http/, 'ws')))],
    ['legacy HTTP+SSE at /virtual/kit/sse', (base: string): Transport => new SSEClientTransport(new URL('/virtual/kit/sse', base))],
  ])('is served over %s too', async (_label, transportFor) => {
    const other = new Client({ name: 'virtual-transports', version: '1.0.0' });
    await other.connect(transportFor(gw.url));
    try {
      expect(((await other.listTools()).tools as Tool[]).map((t) => t.name).sort()).toEqual(['add', 'say', 'who']);
      expect(textOf(await other.callTool({ name: 'say', arguments: { message: 'other' } }))).toBe('collider echo: other');
      expect((await errorOf(other.callTool({ name: 'echo', arguments: { message: 'other' } }))).code).toBe(-32602);
    } finally {
      await other.close();
    }
  });

  it('answers a 2026 stateless request with the same picks', async () => {
    const url = new URL('/virtual/kit/mcp', gw.url);
    expect((resultOf(await modern(url, 'tools/list')).tools as Tool[]).map((t) => t.name).sort()).toEqual(['add', 'say', 'who']);
    expect(textOf(resultOf(await modern(url, 'tools/call', { name: 'say', arguments: { message: 'modern' } })))).toBe('collider echo: modern');
    expect((await modern(url, 'tools/call', { name: 'echo', arguments: { message: 'modern' } })).json.error).toMatchObject({ code: -32602 });
  });

  it('answers 404 for a virtual server that is not configured', async () => {
    const res = await fetch(new URL('/virtual/nope/mcp', gw.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(res.status).toBe(404);
  });
});

describe('a virtual server under a policy on the server\'s own names', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await start({
      rules: [
        { servers: ['*'] },
        { effect: 'deny', servers: ['collider'], tools: ['echo'] },
      ],
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('hides a pick whose original the policy denies, and refuses its call', async () => {
    const client = await connectClient(gw, '/virtual/kit/mcp');
    try {
      expect(((await client.listTools()).tools as Tool[]).map((t) => t.name).sort()).toEqual(['add', 'who']);
      expect((await errorOf(client.callTool({ name: 'say', arguments: { message: 'x' } }))).code).toBe(-32602);
    } finally {
      await client.close();
    }
  });
});

describe('a virtual server across a reload', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await start();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('tells a live session its picks changed, and then lists and routes only the new ones', async () => {
    const client = await connectClient(gw, '/virtual/kit/mcp');
    try {
      expect(((await client.listTools()).tools as Tool[]).map((t) => t.name).sort()).toEqual(['add', 'say', 'who']);
      const changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
      gw.reload(parseConfig(document(undefined, { tools: [{ server: 'collider', tool: 'echo', as: 'repeat' }] })));
      await changed;
      expect(((await client.listTools()).tools as Tool[]).map((t) => t.name)).toEqual(['repeat']);
      expect(textOf(await client.callTool({ name: 'repeat', arguments: { message: 'again' } }))).toBe('collider echo: again');
      expect((await errorOf(client.callTool({ name: 'say', arguments: { message: 'x' } }))).code).toBe(-32602);
      expect((await errorOf(client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }))).code).toBe(-32602);
    } finally {
      await client.close();
    }
  });
});

describe('a virtual server for two principals', () => {
  const keys = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef' };
  let gw: RunningGateway;
  beforeAll(async () => {
    const auth = { apiKeys: Object.entries(keys).map(([name, key]) => ({ name, key })) };
    // Alice may not use collider's echo (named by its client name here); Bob may.
    const policy = { rules: [{ servers: ['*'] }, { effect: 'deny', principals: ['key:alice'], servers: ['collider'], tools: ['say'] }] };
    gw = await startGateway(parseConfig(document(policy, undefined, auth)), { logger: createTestLogger('silent', undefined) });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const connectAs = async (who: keyof typeof keys): Promise<Client> => {
    const client = new Client({ name: `virtual-${who}`, version: '1.0.0' });
    const headers = { authorization: `Bearer ${keys[who]}` };
    await client.connect(new StreamableHTTPClientTransport(new URL('/virtual/kit/mcp', gw.url), { requestInit: { headers } }));
    return client;
  };

  it('gives each principal its own view of the same picks, on every call', async () => {
    const alice = await connectAs('alice');
    const bob = await connectAs('bob');
    try {
      expect(((await alice.listTools()).tools as Tool[]).map((t) => t.name).sort()).toEqual(['add', 'who']);
      expect(((await bob.listTools()).tools as Tool[]).map((t) => t.name).sort()).toEqual(['add', 'say', 'who']);
      expect((await errorOf(alice.callTool({ name: 'say', arguments: { message: 'x' } }))).code).toBe(-32602);
      expect(textOf(await bob.callTool({ name: 'say', arguments: { message: 'bob' } }))).toBe('collider echo: bob');
      // Each 2026 stateless request is judged by its own key.
      const url = new URL('/virtual/kit/mcp', gw.url);
      const asAlice = await modern(url, 'tools/call', { name: 'say', arguments: { message: 'x' } }, { headers: { authorization: `Bearer ${keys.alice}` } });
      expect(asAlice.json.error).toMatchObject({ code: -32602 });
      const asBob = await modern(url, 'tools/call', { name: 'say', arguments: { message: 'b' } }, { headers: { authorization: `Bearer ${keys.bob}` } });
      expect(textOf(resultOf(asBob))).toBe('collider echo: b');
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});
