/**
 * Attacks on progressive discovery (issue 33) from a caller who wants a tool the policy denies:
 * `call_tool` nested in itself, the tool's bare name (the aggregate's bare-name lookup), other
 * spellings (case, Unicode look-alikes, another separator), arguments that are not an object, and
 * the same over WebSocket, legacy SSE and stateless 2026 requests. A denied tool must never run nor
 * be described; the gateway keeps serving. Real gateway, catalog fixture children, real clients.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyRule } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig, type AggregateTarget } from '../support/aggregate.ts';
import { createTestLogger } from '../support/gateway.ts';
import { modern, resultOf } from '../support/modern.ts';
import { modernPath, ssePath, wsPath, type CallOutcome, type PathClient } from '../support/pinning.ts';
import { fileURLToPath } from 'node:url';

const FIXTURE = fileURLToPath(new URL('../fixtures/catalog-server.mjs', import.meta.url));
const rule = (r: Partial<PolicyRule>): PolicyRule => ({ effect: 'allow', principals: ['*'], scopes: [], claims: {}, servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'], ...r });
const RULES = [
  rule({}),
  rule({ effect: 'deny', servers: ['github'], tools: ['merge_pull_request'], prompts: [], resources: [] }),
  rule({ effect: 'deny', servers: ['slack'], tools: ['*'], prompts: ['*'], resources: ['*'] }),
];
const DENIED = 'github__merge_pull_request';
// What a caller might try to reach the denied tool with.
const SPELLINGS = [
  DENIED,
  'merge_pull_request',
  'GitHub__merge_pull_request',
  'github__MERGE_PULL_REQUEST',
  'github__merge_pull_request ',
  'github\u200b__merge_pull_request',
  'ｇｉｔｈｕｂ__merge_pull_request',
  'github/merge_pull_request',
  'slack__slack_post_message',
  'slack_post_message',
];

let gw: RunningGateway;
let dir: string;
const lines: string[] = [];
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'attack-discovery-'));
  // A hostile member's tool with a 4 MiB description of many distinct words, and a huge schema.
  const words = Array.from({ length: 400_000 }, (_, i) => `w${i.toString(36)}`).join(' ');
  const properties = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`arg${i}`, { type: 'string', description: 'flood' }]));
  await writeFile(join(dir, 'extra.json'), JSON.stringify({ name: 'flood', description: `flood ${words}`, inputSchema: { type: 'object', properties } }));
  const targets: Record<string, AggregateTarget> = {};
  for (const server of ['github', 'slack', 'memory']) targets[server] = { command: process.execPath, args: [FIXTURE], env: { CATALOG_SERVER: server, ...(server === 'memory' ? { CATALOG_EXTRA: join(dir, 'extra.json') } : {}) } };
  const base = buildAggregateConfig({ targets, logLines: lines });
  const aggregate = { ...base.aggregate!, discovery: new Map([['aggregate:*', { alwaysVisible: [], maxResults: 8 }]]) };
  gw = await startGateway({ ...base, aggregate, policy: { rules: RULES }, logging: { level: 'info', audit: true } }, { logger: createTestLogger('info', lines) });
});
afterAll(async () => {
  await Promise.all(closers.map((c) => c()));
  await gw?.close();
  await rm(dir, { recursive: true, force: true });
});

const ran = (outcome: CallOutcome) => 'text' in outcome && /merge_pull_request|slack_post_message/.test(outcome.text) && !/unknown|not found/i.test(outcome.text);
const upstreamRan = () => lines.some((l) => l.includes('"audit"') && /"outcome":"ok"/.test(l) && /merge_pull_request|slack_post_message/.test(l));

async function attackOn(path: PathClient): Promise<void> {
  // A name a client cannot put in a header (2026's Mcp-Name) fails before it leaves: not a run.
  const client = { label: path.label, call: (name: string, args: Record<string, unknown>) => path.call(name, args).catch((err: unknown): CallOutcome => ({ error: { code: -1, message: String(err) } })) };
  for (const name of SPELLINGS) {
    const direct = await client.call('call_tool', { name, arguments: {} });
    expect(ran(direct), `${client.label} call_tool ${name}: ${JSON.stringify(direct)}`).toBe(false);
    const nested = await client.call('call_tool', { name: 'call_tool', arguments: { name, arguments: {} } });
    expect(ran(nested), `${client.label} nested ${name}: ${JSON.stringify(nested)}`).toBe(false);
    const twice = await client.call('call_tool', { name: 'call_tool', arguments: { name: 'call_tool', arguments: { name, arguments: {} } } });
    expect(ran(twice), `${client.label} nested twice ${name}`).toBe(false);
    const described = await client.call('describe_tool', { name });
    expect('text' in described && described.text.includes('merge') && !/unknown|not found/i.test(described.text), `${client.label} describe ${name}: ${JSON.stringify(described)}`).toBe(false);
    const bare = await client.call(name, {});
    expect(ran(bare), `${client.label} direct ${name}`).toBe(false);
  }
  // Arguments that are not an object, and no name: a clear error, never a crash or a hang.
  for (const bad of [{ name: DENIED, arguments: 'x' }, { name: DENIED, arguments: [1] }, { arguments: {} }, { name: 42 }, { name: { toString: 'x' } }]) {
    const outcome = await client.call('call_tool', bad as Record<string, unknown>);
    expect(ran(outcome), `${client.label} ${JSON.stringify(bad)}`).toBe(false);
  }
  // An allowed tool still works afterwards on the same path.
  const fine = await client.call('call_tool', { name: 'memory__read_graph', arguments: {} });
  expect(fine, client.label).toEqual({ text: 'memory/read_graph {}' });
}

describe('attack: reaching a denied tool through discovery', () => {
  it('no spelling, nesting or bare name reaches it on a 2025 session (SDK)', async () => {
    const client = new Client({ name: 'attacker', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', gw.url)));
    closers.push(() => client.close());
    const path: PathClient = {
      label: 'SDK /mcp',
      echo: '',
      list: async () => [],
      async call(name, args) {
        try {
          const result = await client.callTool({ name, arguments: args });
          return { text: ((result.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? '').join('') };
        } catch (err) {
          return { error: { code: -1, message: String(err) } };
        }
      },
      close: async () => undefined,
    };
    await attackOn(path);
    expect(upstreamRan()).toBe(false);
  });

  it('nor over WebSocket, legacy SSE and stateless 2026 requests', async () => {
    for (const path of [await wsPath(gw, '/ws', ''), await ssePath(gw, '/sse', '')]) {
      closers.push(() => path.close());
      await attackOn(path);
    }
    await attackOn(modernPath(gw, '/mcp', ''));
    expect(upstreamRan()).toBe(false);
  });

  it('a search never names the denied tools, whatever the query', async () => {
    const url = new URL('/mcp', gw.url);
    for (const query of ['merge pull request', 'merge_pull_request', 'github__merge_pull_request', 'slack post message', '*', '']) {
      const answer = await modern(url, 'tools/call', { name: 'search_tools', arguments: { query, limit: 1000 } });
      expect(answer.text, query).not.toMatch(/merge_pull_request|slack_/);
    }
  });

  it("a hostile member's huge description and a huge query: answers cut, and everyone else served", async () => {
    const url = new URL('/mcp', gw.url);
    const hits = resultOf(await modern(url, 'tools/call', { name: 'search_tools', arguments: { query: 'flood w1 w2 w3', limit: 3 } }));
    const tools = (hits.structuredContent as { tools: Array<{ name: string; description?: string }> }).tools;
    expect(tools[0]?.name).toBe('memory__flood');
    expect(tools[0]!.description!.length).toBeLessThanOrEqual(601);
    const huge = Array.from({ length: 100_000 }, (_, i) => `q${i}`).join(' ');
    const answer = await modern(url, 'tools/call', { name: 'search_tools', arguments: { query: huge, limit: 1000 } });
    expect(answer.status).toBeLessThan(500);
    const fine = await modern(url, 'tools/call', { name: 'call_tool', arguments: { name: 'memory__read_graph', arguments: {} } });
    expect(JSON.stringify(resultOf(fine))).toContain('memory/read_graph {}');
  });
});
