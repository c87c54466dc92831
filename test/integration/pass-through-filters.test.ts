/**
 * A server's filters hold on its own path (`/servers/<name>/mcp`, and `/mcp` when it is the only
 * server) exactly as behind the aggregate: a hidden tool, prompt or resource is absent from lists
 * and refused like one the server does not have. Real SDK client, the collider fixture as upstream.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/main.ts';
import { colliderServer, connectClient, errorOf, startAggregateGateway, textOf } from '../support/aggregate.ts';
import { everythingServer } from '../support/gateway.ts';

async function allNames(list: (cursor?: string) => Promise<{ items: string[]; nextCursor?: string | undefined }>): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 50; pages++) {
    const page = await list(cursor);
    names.push(...page.items);
    cursor = page.nextCursor;
    if (cursor === undefined) break;
  }
  return names;
}

const exposure = {
  tools: { allow: [], deny: ['secret_*'] },
  prompts: { allow: [], deny: ['summarise'] },
  resources: { allow: [], deny: ['collider://notes/2'] },
};

describe.each([
  ['/servers/collider/mcp', { collider: { ...colliderServer('--page-size=3'), exposure }, one: everythingServer() }],
  ['/mcp (the only server)', { collider: { ...colliderServer('--page-size=3'), exposure } }],
])('filters on %s', (label, targets) => {
  const path = label.startsWith('/mcp') ? '/mcp' : '/servers/collider/mcp';
  let gw: RunningGateway;
  let client: Client;
  beforeAll(async () => {
    gw = await startAggregateGateway({ targets });
    client = await connectClient(gw, path);
  });
  afterAll(async () => {
    await client?.close();
    await gw?.close();
  });

  it('keeps the server itself visible: its own serverInfo and unprefixed names', () => {
    expect(client.getServerVersion()?.name).not.toBe('switchboard');
  });

  it('leaves hidden items out of every list page', async () => {
    const tools = await allNames(async (cursor) => {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      return { items: page.tools.map((t) => t.name), nextCursor: page.nextCursor };
    });
    expect(tools).toContain('echo');
    expect(tools).not.toContain('secret_admin');
    expect(tools).toHaveLength(12);
    const prompts = await allNames(async (cursor) => {
      const page = await client.listPrompts(cursor === undefined ? {} : { cursor });
      return { items: page.prompts.map((p) => p.name), nextCursor: page.nextCursor };
    });
    expect(prompts.sort()).toEqual(['echo', 'greet']);
    const resources = await allNames(async (cursor) => {
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      return { items: page.resources.map((r) => r.uri), nextCursor: page.nextCursor };
    });
    expect(resources.sort()).toEqual(['collider://notes/1', 'collider://notes/3']);
  });

  it('refuses a hidden tool exactly as the server refuses one it does not have', async () => {
    const unknown = await errorOf(client.callTool({ name: 'no_such_tool', arguments: {} }));
    const hidden = await errorOf(client.callTool({ name: 'secret_admin', arguments: {} }));
    expect(hidden.code).toBe(-32602);
    expect(hidden.code).toBe(unknown.code);
    expect(hidden.message).toBe(unknown.message.replace('no_such_tool', 'secret_admin'));
    expect(hidden.data).toEqual(unknown.data);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'hi' } }))).toBe('collider echo: hi');
  });

  it('refuses a hidden prompt and a hidden resource', async () => {
    const unknown = await errorOf(client.getPrompt({ name: 'no_such_prompt' }));
    const hidden = await errorOf(client.getPrompt({ name: 'summarise' }));
    expect(hidden.code).toBe(unknown.code);
    expect(hidden.message).toBe(unknown.message.replace('no_such_prompt', 'summarise'));
    const resource = await errorOf(client.readResource({ uri: 'collider://notes/2' }));
    expect(resource.code).toBe(-32602);
    expect(resource.message).toContain('Resource not found: collider://notes/2');
    expect((await client.readResource({ uri: 'collider://notes/1' })).contents.length).toBeGreaterThan(0);
  });
});
