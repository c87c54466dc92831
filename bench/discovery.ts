/**
 * Progressive discovery, measured (docs/benchmarks.md, "Progressive discovery"):
 *
 * 1. What `tools/list` costs a model's context on `/mcp` over 11 real npm servers' catalogs
 *    (bench/fixtures/catalog-tools.json), discovery off and on: bytes of the JSON of the tools, and
 *    tokens of the same text with the o200k_base BPE (gpt-tokenizer, bench/package.json).
 * 2. Recall@1, @3 and @8 (the default number of results) of `search_tools` over the 48 queries of
 *    bench/fixtures/catalog-queries.json, through the gateway with an SDK client.
 * 3. Search latency with 1,067 tools (11 children each serving all 97 tools under new names):
 *    `search_tools` through the gateway (client round trip), and the index alone (build, query).
 *
 *   /work/bin/slot --all npx node bench/discovery.ts
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import catalog from './fixtures/catalog-tools.json' with { type: 'json' };
import queries from './fixtures/catalog-queries.json' with { type: 'json' };
import type { GatewayConfig } from '../src/config/types.ts';
import type { JsonObject } from '../src/jsonrpc/types.ts';
import { startGateway } from '../src/main.ts';
import { createToolIndex } from '../src/router/tool-search.ts';
import { buildAggregateConfig, type AggregateTarget } from '../test/support/aggregate.ts';
import { createTestLogger } from '../test/support/gateway.ts';
import { fileURLToPath } from 'node:url';

// bench/'s own dependency (bench/package.json, installed by `npm run bench`), loaded by name so the
// project's typecheck does not need bench/node_modules.
const TOKENIZER: string = 'gpt-tokenizer/encoding/o200k_base';
const { encode } = (await import(TOKENIZER)) as { encode: (text: string) => number[] };

const FIXTURE = fileURLToPath(new URL('../test/fixtures/catalog-server.mjs', import.meta.url));
const ANY = z.object({}).passthrough();
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
const ms = (n: number) => `${n.toFixed(2)} ms`;

function config(targets: Record<string, AggregateTarget>, discovery: boolean): GatewayConfig {
  const base = buildAggregateConfig({ targets });
  const aggregate = { ...base.aggregate!, ...(discovery ? { discovery: new Map([['aggregate:*', { alwaysVisible: [], maxResults: 8 }]]) } : {}) };
  return { ...base, aggregate, logging: { level: 'warn' } };
}

async function withGateway<T>(cfg: GatewayConfig, run: (client: Client) => Promise<T>): Promise<T> {
  const gateway = await startGateway(cfg, { logger: createTestLogger('warn', undefined) });
  const client = new Client({ name: 'discovery-bench', version: '1' });
  try {
    // bench/ resolves its own SDK (a peer's dependency): the transport type differs in name only.
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', gateway.url)) as Parameters<Client['connect']>[0]);
    return await run(client);
  } finally {
    await client.close();
    await gateway.close();
  }
}

const listed = async (client: Client) => (await client.request({ method: 'tools/list', params: {} }, ANY)).tools as JsonObject[];
const cost = (tools: JsonObject[]) => {
  const text = JSON.stringify(tools);
  return { tools: tools.length, bytes: Buffer.byteLength(text), tokens: encode(text).length };
};

const realTargets: Record<string, AggregateTarget> = {};
for (const server of Object.keys(catalog)) realTargets[server] = { command: process.execPath, args: [FIXTURE], env: { CATALOG_SERVER: server } };

const before = await withGateway(config(realTargets, false), async (client) => cost(await listed(client)));
const after = await withGateway(config(realTargets, true), async (client) => {
  const tools = await listed(client);
  let at1 = 0;
  let at3 = 0;
  let at8 = 0;
  const misses: string[] = [];
  for (const { query, tool } of queries) {
    const result = await client.request({ method: 'tools/call', params: { name: 'search_tools', arguments: { query } } }, ANY);
    const names = ((result.structuredContent as { tools: Array<{ name: string }> }).tools ?? []).map((t) => t.name);
    if (names[0] === tool) at1++;
    if (names.slice(0, 3).includes(tool)) at3++;
    if (names.includes(tool)) at8++;
    else misses.push(query);
    if (names.slice(0, 3).includes(tool) === false) misses.push(`${query} (not in 3: ${names.slice(0, 3).join(', ')})`);
  }
  return { ...cost(tools), at1, at3, at8, misses };
});

// 1,067 tools: 11 children each serving every captured tool under new names.
const bigTargets: Record<string, AggregateTarget> = {};
for (let i = 0; i < 11; i++) bigTargets[`s${i}`] = { command: process.execPath, args: [FIXTURE], env: { CATALOG_SERVER: '*' } };
const latency = await withGateway(config(bigTargets, true), async (client) => {
  const search = (query: string) => client.request({ method: 'tools/call', params: { name: 'search_tools', arguments: { query } } }, ANY);
  const started = performance.now();
  await search('warm up the index');
  const first = performance.now() - started;
  const times: number[] = [];
  for (let round = 0; round < 10; round++) {
    for (const { query } of queries) {
      const t0 = performance.now();
      await search(query);
      times.push(performance.now() - t0);
    }
  }
  times.sort((a, b) => a - b);
  return { first, p50: quantile(times, 0.5), p99: quantile(times, 0.99), n: times.length };
});

const bigCatalog: JsonObject[] = [];
for (let i = 0; i < 11; i++) for (const [server, entry] of Object.entries(catalog)) for (const tool of entry.tools as JsonObject[]) bigCatalog.push({ ...tool, name: `s${i}__${server}_${String(tool.name)}` });
const b0 = performance.now();
const index = createToolIndex(bigCatalog);
const build = performance.now() - b0;
const pure: number[] = [];
for (let round = 0; round < 50; round++) {
  for (const { query } of queries) {
    const t0 = performance.now();
    index.search(query, 8);
    pure.push(performance.now() - t0);
  }
}
pure.sort((a, b) => a - b);

const n = queries.length;
process.stdout.write(
  [
    `catalog: ${Object.keys(catalog).length} servers, ${before.tools} tools`,
    `tools/list, discovery off: ${before.tools} tools, ${before.bytes} bytes, ${before.tokens} tokens (o200k_base)`,
    `tools/list, discovery on:  ${after.tools} tools, ${after.bytes} bytes, ${after.tokens} tokens (o200k_base)`,
    `recall over ${n} queries: @1 ${after.at1}/${n} (${((100 * after.at1) / n).toFixed(0)}%), @3 ${after.at3}/${n} (${((100 * after.at3) / n).toFixed(0)}%), @8 ${after.at8}/${n} (${((100 * after.at8) / n).toFixed(0)}%)`,
    `misses: ${after.misses.join('; ') || 'none'}`,
    `search_tools through the gateway, ${index.size} tools: first (reads the catalog, builds the index) ${ms(latency.first)}; then p50 ${ms(latency.p50)}, p99 ${ms(latency.p99)} over ${latency.n} calls`,
    `index alone, ${index.size} tools: build ${ms(build)}; query p50 ${ms(quantile(pure, 0.5))}, p99 ${ms(quantile(pure, 0.99))} over ${pure.length} queries`,
    '',
  ].join('\n'),
);
