/**
 * Progressive discovery on `/mcp` over a realistic catalog: the tools/list of 11 real npm servers
 * (bench/fixtures/catalog-tools.json, captured by bench/capture-catalog.ts), each served by a child
 * of the catalog fixture. For every query of bench/fixtures/catalog-queries.json (written from the
 * tools' own descriptions) an SDK client searches, finds the expected tool among the results and
 * calls it through `call_tool`, on a 2025 session and with stateless 2026 requests. A caller the
 * policy denies tools never sees them in any result, cannot describe or call them; the call
 * through the meta-tool is audited under the real tool; a member's list_changed reaches the index.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import catalog from '../../bench/fixtures/catalog-tools.json' with { type: 'json' };
import queries from '../../bench/fixtures/catalog-queries.json' with { type: 'json' };
import type { PolicyRule } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig, errorOf, textOf, type AggregateTarget } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { createTestLogger } from '../support/gateway.ts';
import { modern, resultOf } from '../support/modern.ts';
import { eventually } from '../support/pinning.ts';
import { fileURLToPath } from 'node:url';

const FIXTURE = fileURLToPath(new URL('../fixtures/catalog-server.mjs', import.meta.url));
const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdef0';
const DENIED_FOR_BOB = ['github__merge_pull_request', 'filesystem__write_file'];
const rule = (r: Partial<PolicyRule>): PolicyRule => ({ effect: 'allow', principals: ['*'], scopes: [], claims: {}, servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'], ...r });
const RULES = [
  rule({}),
  rule({ effect: 'deny', principals: ['key:bob'], servers: ['github'], tools: ['merge_pull_request'], prompts: [], resources: [] }),
  rule({ effect: 'deny', principals: ['key:bob'], servers: ['filesystem'], tools: ['write_file'], prompts: [], resources: [] }),
  rule({ effect: 'deny', principals: ['key:bob'], servers: ['slack'], tools: ['*'], prompts: ['*'], resources: ['*'] }),
];

type Hit = { name: string; description?: string; inputSchema?: unknown };
let gw: RunningGateway;
let dir: string;
let extra: string;
const lines: string[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-discovery-'));
  extra = join(dir, 'extra.json');
  const targets: Record<string, AggregateTarget> = {};
  for (const server of Object.keys(catalog)) {
    targets[server] = { command: process.execPath, args: [FIXTURE], env: { CATALOG_SERVER: server, ...(server === 'postgres' ? { CATALOG_EXTRA: extra } : {}) } };
  }
  const base = buildAggregateConfig({ targets, logLines: lines });
  const aggregate = { ...base.aggregate!, discovery: new Map([['aggregate:*', { alwaysVisible: ['filesystem__read_text_file'], maxResults: 8 }]]) };
  gw = await startGateway(
    {
      ...base,
      aggregate,
      auth: keyAuth({ alice: ALICE, bob: BOB }),
      policy: { rules: RULES },
      // Step-up on one tool: a call through call_tool must meet it as a direct call does.
      requiredScopes: new Map([['github', { tools: { update_pull_request_branch: ['repo:admin'] }, prompts: {}, resources: {} }]]),
      logging: { level: 'info', audit: true },
    },
    { logger: createTestLogger('info', lines) },
  );
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await gw?.close();
  await rm(dir, { recursive: true, force: true });
});

async function sdk(key: string): Promise<Client> {
  const client = new Client({ name: 'discovery-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', gw.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  clients.push(client);
  return client;
}

const hitsOf = (result: unknown) => ((result as { structuredContent: { tools: Hit[] } }).structuredContent.tools);
const serverTool = (exposed: string) => exposed.replace('__', '/');

describe('progressive discovery', () => {
  it('lists the meta-tools and the always-visible tools instead of the catalog', async () => {
    const alice = await sdk(ALICE);
    const { tools } = await alice.listTools();
    expect(tools.map((t) => t.name)).toEqual(['search_tools', 'describe_tool', 'call_tool', 'filesystem__read_text_file']);
  });

  it('finds and calls the right tool for every query on a 2025 session', async () => {
    const alice = await sdk(ALICE);
    for (const { query, tool } of queries) {
      const hits = hitsOf(await alice.callTool({ name: 'search_tools', arguments: { query } }));
      const found = hits.find((h) => h.name === tool);
      expect(found, `${query} -> ${hits.map((h) => h.name).join(', ')}`).toBeDefined();
      expect(found?.inputSchema, tool).toBeDefined();
      const called = await alice.callTool({ name: 'call_tool', arguments: { name: tool, arguments: { q: query } } });
      expect(textOf(called)).toBe(`${serverTool(tool)} ${JSON.stringify({ q: query })}`);
    }
    const described = await alice.callTool({ name: 'describe_tool', arguments: { name: 'maps__maps_directions' } });
    expect((described.structuredContent as { name: string }).name).toBe('maps__maps_directions');
    // The call through the meta-tool is audited under the real tool.
    await alice.callTool({ name: 'call_tool', arguments: { name: 'github__create_issue', arguments: {} } });
    const audit = await eventually('the audit line', async () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'audit' && l.tool === 'github__create_issue'));
    expect(audit).toMatchObject({ method: 'tools/call', server: 'github', outcome: 'ok' });
    expect(lines.some((l) => l.includes('"audit"') && l.includes('"tool":"call_tool"'))).toBe(false);
  });

  it('finds and calls the right tool for every query with stateless 2026 requests', async () => {
    const url = new URL('/mcp', gw.url);
    const as = { headers: { authorization: `Bearer ${ALICE}` } };
    let id = 1;
    const listed = resultOf(await modern(url, 'tools/list', {}, { ...as, id: id++ }));
    expect((listed.tools as Hit[]).map((t) => t.name)).toContain('search_tools');
    for (const { query, tool } of queries) {
      const hits = hitsOf(resultOf(await modern(url, 'tools/call', { name: 'search_tools', arguments: { query } }, { ...as, id: id++ })));
      expect(hits.map((h) => h.name), query).toContain(tool);
      const called = resultOf(await modern(url, 'tools/call', { name: 'call_tool', arguments: { name: tool, arguments: {} } }, { ...as, id: id++ }));
      expect(textOf(called)).toBe(`${serverTool(tool)} {}`);
    }
  });

  it('never shows a denied tool in a search result, nor describes or calls it', async () => {
    const bob = await sdk(BOB);
    const all = new Set<string>();
    for (const { query } of [...queries, { query: 'merge pull request' }, { query: 'write file' }, { query: 'slack message channel' }]) {
      for (const hit of hitsOf(await bob.callTool({ name: 'search_tools', arguments: { query, limit: 50 } }))) all.add(hit.name);
    }
    expect(all.size).toBeGreaterThan(40);
    for (const name of [...all]) expect(DENIED_FOR_BOB.includes(name) || name.startsWith('slack__'), name).toBe(false);
    for (const denied of [...DENIED_FOR_BOB, 'slack__slack_post_message']) {
      const described = await bob.callTool({ name: 'describe_tool', arguments: { name: denied } });
      expect(described.isError, denied).toBe(true);
      const err = await errorOf(bob.callTool({ name: 'call_tool', arguments: { name: denied, arguments: {} } }));
      expect(err.code, denied).toBe(-32602);
      expect(err.message).toContain(`Unknown tool: ${denied}`);
    }
    // 2026, same caller.
    const answer = await modern(new URL('/mcp', gw.url), 'tools/call', { name: 'search_tools', arguments: { query: 'merge a pull request', limit: 50 } }, { headers: { authorization: `Bearer ${BOB}` } });
    expect(hitsOf(resultOf(answer)).map((h) => h.name)).not.toContain('github__merge_pull_request');
  });

  it('a call through call_tool meets step-up as the direct call does, on both eras', async () => {
    const url = new URL('/mcp', gw.url);
    const as = { headers: { authorization: `Bearer ${ALICE}` } };
    const direct = await modern(url, 'tools/call', { name: 'github__update_pull_request_branch', arguments: {} }, { ...as, id: 1 });
    const meta = await modern(url, 'tools/call', { name: 'call_tool', arguments: { name: 'github__update_pull_request_branch', arguments: {} } }, { ...as, id: 2 });
    for (const answer of [direct, meta]) {
      expect(answer.status, answer.text).toBe(403);
      expect(answer.json).toMatchObject({ error: { data: { code: 'GW_STEP_UP_REQUIRED', requiredScopes: ['repo:admin'] } } });
    }
    const session = await sdk(ALICE);
    const refused = await session.callTool({ name: 'call_tool', arguments: { name: 'github__update_pull_request_branch', arguments: {} } }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(String(refused)).toMatch(/403|insufficient_scope|step/i);
  });

  it('refreshes the index when a member says its list changed', async () => {
    const alice = await sdk(ALICE);
    const search = async () => hitsOf(await alice.callTool({ name: 'search_tools', arguments: { query: 'teleport widget moon' } })).map((h) => h.name);
    expect(await search()).not.toContain('postgres__teleport_widget');
    await writeFile(extra, JSON.stringify({ name: 'teleport_widget', description: 'Teleports a widget to the moon' }));
    const found = await eventually('the new tool in the index', async () => ((await search()).includes('postgres__teleport_widget') ? true : undefined));
    expect(found).toBe(true);
    expect(textOf(await alice.callTool({ name: 'call_tool', arguments: { name: 'postgres__teleport_widget', arguments: {} } }))).toBe('postgres/teleport_widget {}');
  });
});

describe('progressive discovery per endpoint', () => {
  it('is on where configured (a group) and off elsewhere (/mcp); a virtual server keeps its picks', async () => {
    const target = (server: string): AggregateTarget => ({ command: process.execPath, args: [FIXTURE], env: { CATALOG_SERVER: server } });
    const base = buildAggregateConfig({ targets: { memory: target('memory'), maps: target('maps') }, groups: { g: ['memory', 'maps'] } });
    const picks = new Map([['maps', { prefix: '', eager: false, tools: { allow: [], deny: [] }, prompts: { allow: [], deny: [] }, resources: { allow: [], deny: [] }, picks: { tools: ['maps_geocode'], prompts: [], resources: [] } }]]);
    const discovery = new Map([
      ['group:g', { alwaysVisible: [], maxResults: 8 }],
      ['virtual:v', { alwaysVisible: [], maxResults: 8 }],
    ]);
    const own = await startGateway({ ...base, aggregate: { ...base.aggregate!, discovery, virtuals: new Map([['v', picks]]) } }, { logger: createTestLogger('warn', undefined) });
    const opened: Client[] = [];
    const open = async (path: string) => {
      const client = new Client({ name: 'discovery-endpoints', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(path, own.url)));
      opened.push(client);
      return client;
    };
    try {
      expect((await (await open('/mcp')).listTools()).tools).toHaveLength(16);
      const group = await open('/groups/g/mcp');
      expect((await group.listTools()).tools.map((t) => t.name)).toEqual(['search_tools', 'describe_tool', 'call_tool']);
      expect(hitsOf(await group.callTool({ name: 'search_tools', arguments: { query: 'address to coordinates' } }))[0]?.name).toBe('maps__maps_geocode');
      // The virtual server searches only what it picked, under its names.
      const virtual = await open('/virtual/v/mcp');
      const hits = hitsOf(await virtual.callTool({ name: 'search_tools', arguments: { query: 'directions elevation geocode knowledge graph', limit: 50 } })).map((h) => h.name);
      expect(hits).toEqual(['maps_geocode']);
      expect(textOf(await virtual.callTool({ name: 'call_tool', arguments: { name: 'maps_geocode', arguments: {} } }))).toBe('maps/maps_geocode {}');
    } finally {
      await Promise.all(opened.map((c) => c.close()));
      await own.close();
    }
  });
});
