/**
 * Overrides (`mcpServers.<n>.overrides`) as a real SDK client sees them, on the server's own path,
 * on the aggregate and in a 2026 stateless request: renamed, re-described and re-annotated tools
 * and prompts, the new name reaching the original, the old one refused like an unknown name, and
 * all of it again after the server changes its list (`list_changed`). Policy rules name a tool by
 * its server's name and by its client name: either one denies it. The collider fixture is the
 * server that changes its list (`add-tool`); server-everything the neighbour.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyRule, TargetExposureConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig, colliderServer, connectClient, errorOf, textOf, type AggregateTarget } from '../support/aggregate.ts';
import { createTestLogger, everythingServer } from '../support/gateway.ts';
import { modern, resultOf } from '../support/modern.ts';

const overrides: NonNullable<TargetExposureConfig['overrides']> = {
  tools: {
    echo: { name: 'say', description: 'Say it back', annotations: { readOnlyHint: true, title: 'Say' } },
    whoami: { title: 'Who am I' },
    newtool: { name: 'fresh', description: 'A fresh tool' },
  },
  prompts: { greet: { name: 'hello', description: 'Say hello' } },
  serverName: 'renamed-collider',
  instructions: 'Use say, not echo.',
};

function targets(): Record<string, AggregateTarget> {
  return { collider: { ...colliderServer('--page-size=50', '--instructions=collider own words'), exposure: { overrides } }, everything: everythingServer() };
}

async function start(policy?: PolicyRule[]): Promise<RunningGateway> {
  const config = buildAggregateConfig({ targets: targets() });
  const withPolicy = policy === undefined ? config : { ...config, policy: { rules: policy } };
  return startGateway(withPolicy, { logger: createTestLogger(config.logging.level, undefined) });
}

type Tool = { name: string; description?: string; title?: string; annotations?: Record<string, unknown> };
const toolsOf = async (client: Client): Promise<Tool[]> => (await client.listTools()).tools as Tool[];
const listChanged = (client: Client) => new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));

describe.each([
  ['/servers/collider/mcp', ''],
  ['/mcp (aggregate)', 'collider__'],
])('overrides on %s', (label, prefix) => {
  const path = label.startsWith('/servers') ? '/servers/collider/mcp' : '/mcp';
  let gw: RunningGateway;
  let client: Client;
  beforeAll(async () => {
    gw = await start();
    client = await connectClient(gw, path);
  });
  afterAll(async () => {
    await client?.close();
    await gw?.close();
  });

  it('lists the overridden tool under its new name with its new description and merged annotations', async () => {
    const tools = await toolsOf(client);
    const names = tools.map((t) => t.name);
    expect(names).toContain(`${prefix}say`);
    expect(names).not.toContain(`${prefix}echo`);
    const say = tools.find((t) => t.name === `${prefix}say`);
    expect(say?.description).toBe('Say it back');
    expect(say?.annotations).toEqual({ readOnlyHint: true, title: 'Say' });
    // An unset field passes the server's value through.
    const who = tools.find((t) => t.name === `${prefix}whoami`);
    expect(who?.title).toBe('Who am I');
    expect(who?.description).toBe('collider whoami');
  });

  it('routes the new name to the original and refuses the old one like an unknown name', async () => {
    expect(textOf(await client.callTool({ name: `${prefix}say`, arguments: { message: 'hi' } }))).toBe('collider echo: hi');
    const old = await errorOf(client.callTool({ name: `${prefix}echo`, arguments: { message: 'hi' } }));
    const unknown = await errorOf(client.callTool({ name: `${prefix}no_such_tool`, arguments: {} }));
    expect(old.code).toBe(-32602);
    expect(old.code).toBe(unknown.code);
    expect(old.message).toBe(unknown.message.replace('no_such_tool', 'echo'));
  });

  it('renames prompts: listed and fetched by the new name, the old one refused', async () => {
    const prompts = (await client.listPrompts()).prompts;
    const hello = prompts.find((p) => p.name === `${prefix}hello`);
    expect(hello?.description).toBe('Say hello');
    expect(prompts.map((p) => p.name)).not.toContain(`${prefix}greet`);
    const got = await client.getPrompt({ name: `${prefix}hello` });
    expect(JSON.stringify(got.messages)).toContain('prompt greet');
    expect((await errorOf(client.getPrompt({ name: `${prefix}greet` }))).code).toBe(-32602);
  });

  it('overrides the instructions (and, on the server\'s own path, its serverInfo name)', () => {
    const instructions = client.getInstructions() ?? '';
    if (prefix === '') {
      expect(client.getServerVersion()?.name).toBe('renamed-collider');
      expect(instructions).toBe('Use say, not echo.');
    } else {
      expect(instructions).toContain('## collider\n\nUse say, not echo.');
    }
    expect(instructions).not.toContain('collider own words');
  });

  it('applies the overrides again after the server changes its list', async () => {
    const changed = listChanged(client);
    await client.callTool({ name: `${prefix}add-tool`, arguments: { name: 'newtool' } });
    await changed;
    const fresh = (await toolsOf(client)).find((t) => t.name === `${prefix}fresh`);
    expect(fresh?.description).toBe('A fresh tool');
    expect(textOf(await client.callTool({ name: `${prefix}fresh`, arguments: {} }))).toBe('newtool');
    expect((await errorOf(client.callTool({ name: `${prefix}newtool`, arguments: {} }))).code).toBe(-32602);
  });

  it('keeps the rename when the server later adds a tool under the new name: the override wins', async () => {
    const changed = listChanged(client);
    await client.callTool({ name: `${prefix}add-tool`, arguments: { name: 'say' } });
    await changed;
    const listed = await client.listTools();
    // On an aggregate the withheld item is reported, as a collision is.
    if (prefix !== '') expect(JSON.stringify(listed._meta?.['switchboard/collisions'])).toContain('"dropped":{"target":"collider","name":"say"}');
    const says = (listed.tools as Tool[]).filter((t) => t.name === `${prefix}say`);
    expect(says).toHaveLength(1);
    expect(says[0]?.description).toBe('Say it back');
    expect(textOf(await client.callTool({ name: `${prefix}say`, arguments: { message: 'still' } }))).toBe('collider echo: still');
  });

  it('leaves the other server alone', async () => {
    if (prefix === '') return;
    expect(textOf(await client.callTool({ name: 'everything__echo', arguments: { message: 'x' } }))).toContain('x');
  });
});

describe('overrides in a 2026 stateless request', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await start();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('lists, calls and discovers with the overrides on the server\'s path and on the aggregate', async () => {
    const own = new URL('/servers/collider/mcp', gw.url);
    const names = (resultOf(await modern(own, 'tools/list')).tools as Tool[]).map((t) => t.name);
    expect(names).toContain('say');
    expect(names).not.toContain('echo');
    const called = resultOf(await modern(own, 'tools/call', { name: 'say', arguments: { message: 'modern' } }));
    expect(textOf(called)).toBe('collider echo: modern');
    const old = await modern(own, 'tools/call', { name: 'echo', arguments: { message: 'modern' } });
    expect(old.json.error).toMatchObject({ code: -32602 });
    const discover = resultOf(await modern(own, 'server/discover'));
    expect((discover.serverInfo as { name: string }).name).toBe('renamed-collider');
    expect(discover.instructions).toBe('Use say, not echo.');
    const aggregate = new URL('/mcp', gw.url);
    const merged = (resultOf(await modern(aggregate, 'tools/list')).tools as Tool[]).map((t) => t.name);
    expect(merged).toContain('collider__say');
    expect(merged).not.toContain('collider__echo');
  });
});

const rule = (effect: 'allow' | 'deny', tools: string[]): PolicyRule => ({
  effect,
  principals: ['*'],
  scopes: [],
  claims: {},
  servers: effect === 'allow' ? ['*'] : ['collider'],
  tools,
  prompts: effect === 'allow' ? ['*'] : [],
  resources: effect === 'allow' ? ['*'] : [],
});

// Policy and filters match a tool under its server's name AND its client name: a rule written for
// either one holds (docs/governance.md, "Overrides and virtual servers").
describe.each([
  ['the server\'s name (echo)', 'echo'],
  ['the client\'s name (say)', 'say'],
])('a policy denying %s', (_label, denied) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await start([rule('allow', ['*']), rule('deny', [denied])]);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it.each([
    ['/servers/collider/mcp', ''],
    ['/mcp', 'collider__'],
  ])('hides the overridden tool on %s and refuses both its names', async (path, prefix) => {
    const client = await connectClient(gw, path);
    try {
      const names = (await toolsOf(client)).map((t) => t.name);
      expect(names).not.toContain(`${prefix}say`);
      expect(names).not.toContain(`${prefix}echo`);
      expect(names).toContain(`${prefix}whoami`);
      for (const name of ['say', 'echo']) {
        const refused = await errorOf(client.callTool({ name: `${prefix}${name}`, arguments: { message: 'x' } }));
        expect(refused.code).toBe(-32602);
      }
    } finally {
      await client.close();
    }
  });
});
