import { describe, expect, it } from 'vitest';
import type { RemoteTargetConfig } from '../../../src/config/types.ts';
import { ERA_MEMORY_PRINCIPALS, ERA_MEMORY_TTL_MS, createEraMemory, probeEra } from '../../../src/upstream/era-probe.ts';
import { GatewayError } from '../../../src/errors/gateway-error.ts';
import { createLogger } from '../../../src/log/logger.ts';
import type { StatelessHttpWire } from '../../../src/transport/stateless-http.ts';
import { createInputAsker, MAX_INPUT_REQUESTS, toInputRequests } from '../../../src/upstream/input-requests.ts';
import { listenFilter } from '../../../src/upstream/listen-stream.ts';
import { toLegacyCapabilities } from '../../../src/upstream/modern-bridge.ts';
import { createParamTable, MAX_TOOLS, paramDeclarations, paramHeaders } from '../../../src/upstream/param-headers.ts';
import type { JsonRpcMessage, JsonRpcResponse } from '../../../src/jsonrpc/types.ts';

const target = (extra: Partial<RemoteTargetConfig> = {}): RemoteTargetConfig =>
  ({ type: 'http', name: 't', url: 'http://h/mcp', headers: {}, forwardAuthorization: false, principalHeaders: {}, ...extra }) as RemoteTargetConfig;

describe('era memory', () => {
  it('remembers per target object, for every principal when the upstream identity is the same', () => {
    const memory = createEraMemory();
    const a = target();
    memory.set(a, { id: 'alice' }, '2026');
    expect(memory.get(a, { id: 'bob' })).toBe('2026');
    expect(memory.get(a, undefined)).toBe('2026');
    expect(memory.get(target(), { id: 'alice' })).toBeUndefined();
  });

  it('remembers per principal where the upstream identity differs, within a bound', () => {
    const memory = createEraMemory();
    const perUser = target({ principalHeaders: { 'x-user': '{sub}' } });
    memory.set(perUser, { id: 'alice' }, '2026');
    expect(memory.get(perUser, { id: 'bob' })).toBeUndefined();
    for (let i = 0; i < ERA_MEMORY_PRINCIPALS; i++) memory.set(perUser, { id: `p${i}` }, '2025');
    expect(memory.get(perUser, { id: 'alice' })).toBeUndefined(); // the oldest went first
    expect(memory.get(perUser, { id: `p${ERA_MEMORY_PRINCIPALS - 1}` })).toBe('2025');
    const forwarding = target({ forwardAuthorization: true });
    memory.set(forwarding, { id: 'alice' }, '2025');
    expect(memory.get(forwarding, { id: 'bob' })).toBeUndefined();
  });
});

describe('era memory over time', () => {
  it('forgets an era after its time, so a server that changed era is asked again', () => {
    let clock = 1_000;
    const memory = createEraMemory(ERA_MEMORY_TTL_MS, () => clock);
    const a = target();
    memory.set(a, undefined, '2025');
    clock += ERA_MEMORY_TTL_MS - 1;
    expect(memory.get(a, undefined)).toBe('2025');
    clock += 1;
    expect(memory.get(a, undefined)).toBeUndefined();
  });
});

describe('input requests of an input_required result', () => {
  it('reads each request, and says why an unusable one is refused', () => {
    expect([...(toInputRequests({ a: { method: 'roots/list' } }) as Map<string, unknown>)]).toEqual([['a', { method: 'roots/list' }]]);
    expect(toInputRequests(undefined)).toEqual(new Map());
    expect(toInputRequests([1])).toBe('inputRequests is not an object');
    expect(toInputRequests({ a: 'nope' })).toBe('input request "a" has no method');
    expect(toInputRequests('x')).toBe('inputRequests is not an object');
    expect(toInputRequests({ a: { method: 'm', params: 3 } })).toBe('input request "a" has params that are not an object');
    const many = Object.fromEntries(Array.from({ length: MAX_INPUT_REQUESTS + 1 }, (_, i) => [`k${i}`, { method: 'roots/list' }]));
    expect(toInputRequests(many)).toBe(`more than ${MAX_INPUT_REQUESTS} input requests`);
  });

  it('asks each one as a server->client request and resolves with the answers by key', async () => {
    const sent: JsonRpcMessage[] = [];
    const asker = createInputAsker('t', (m) => sent.push(m));
    const answers = asker.ask('call-1', new Map([['a', { method: 'roots/list' }], ['b', { method: 'elicitation/create', params: { message: 'm' } }]]));
    expect(sent.map((m) => ('method' in m ? m.method : ''))).toEqual(['roots/list', 'elicitation/create']);
    const ids = sent.map((m) => (m as { id: string }).id);
    expect(new Set(ids).size).toBe(2);
    expect(asker.answer({ jsonrpc: '2.0', id: 'nobody', result: {} })).toBe(false);
    expect(asker.answer({ jsonrpc: '2.0', id: ids[1]!, result: { action: 'decline' } })).toBe(true);
    expect(asker.answer({ jsonrpc: '2.0', id: ids[0]!, result: { roots: [] } })).toBe(true);
    await expect(answers).resolves.toEqual({ a: { roots: [] }, b: { action: 'decline' } });
    expect(asker.open).toBe(0);
  });

  it('fails the round on a client error, and withdraws open questions from the client when the call ends', async () => {
    const sent: JsonRpcMessage[] = [];
    const asker = createInputAsker('t', (m) => sent.push(m));
    const failed = asker.ask('c1', new Map([['a', { method: 'sampling/createMessage' }], ['b', { method: 'roots/list' }]]));
    asker.answer({ jsonrpc: '2.0', id: (sent[0] as { id: string }).id, error: { code: -32601, message: 'no' } });
    await expect(failed).rejects.toMatchObject({ code: 'GW_INPUT_REQUEST_FAILED', details: { method: 'sampling/createMessage', reason: '-32601' } });
    expect(asker.open).toBe(0);

    const pending = asker.ask('c2', new Map([['x', { method: 'roots/list' }]]));
    const asked = (sent.at(-1) as { id: string }).id;
    asker.withdraw('c2', 'cancelled');
    await expect(pending).rejects.toMatchObject({ code: 'GW_UPSTREAM_CLOSED' });
    expect(sent.at(-1)).toEqual({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: asked, reason: 'cancelled' } });
  });
});

describe('capabilities across the bridge', () => {
  it('offers a 2025 client list_changed and resources.subscribe (relayed from a listen stream) only as the upstream offers them', () => {
    expect(toLegacyCapabilities({ tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, logging: {} })).toEqual({
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      logging: {},
    });
    expect(toLegacyCapabilities({ resources: { subscribe: 'yes', listChanged: true } })).toEqual({ resources: { listChanged: true } });
    expect(toLegacyCapabilities(undefined)).toEqual({});
  });

  it('listens only for the list_changed kinds the upstream offers', () => {
    expect(listenFilter({ tools: { listChanged: true }, prompts: {}, resources: { listChanged: false } })).toEqual({ toolsListChanged: true });
    expect(listenFilter({ tools: {} })).toBeUndefined();
  });
});

describe('Mcp-Param-* headers (x-mcp-header)', () => {
  const schema = {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      opts: { type: 'object', properties: { dry: { type: 'boolean', 'x-mcp-header': 'Dry-Run' }, n: { type: 'integer', 'x-mcp-header': 'N' } } },
      list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Ignored' } },
      bad: { type: 'string', 'x-mcp-header': 'has space' },
    },
  };

  it('finds declarations along properties chains only, with valid token names', () => {
    expect(paramDeclarations(schema)).toEqual([
      { path: ['region'], header: 'mcp-param-region' },
      { path: ['opts', 'dry'], header: 'mcp-param-dry-run' },
      { path: ['opts', 'n'], header: 'mcp-param-n' },
    ]);
    expect(paramDeclarations({ 'x-mcp-header': 'Root' })).toEqual([]);
  });

  it('turns primitive arguments into header values and leaves out the rest', () => {
    const declarations = paramDeclarations(schema);
    expect(paramHeaders(declarations, { region: 'eu', opts: { dry: false, n: 3 } })).toEqual({
      'mcp-param-region': 'eu',
      'mcp-param-dry-run': 'false',
      'mcp-param-n': '3',
    });
    expect(paramHeaders(declarations, { region: 'Zürich', opts: { n: 2 ** 60 } })).toEqual({ 'mcp-param-region': `=?base64?${Buffer.from('Zürich').toString('base64')}?=` });
    expect(paramHeaders(declarations, { region: null })).toBeUndefined();
  });

  it('learns tools from list pages, forgets a tool whose declarations went, and is bounded', () => {
    const table = createParamTable();
    table.learn({ tools: [{ name: 'a', inputSchema: schema }, { name: 'b', inputSchema: { type: 'object' } }] });
    expect(table.headersFor({ name: 'a', arguments: { region: 'x' } })).toEqual({ 'mcp-param-region': 'x' });
    expect(table.headersFor({ name: 'b', arguments: {} })).toBeUndefined();
    const before = table.get('a');
    table.learn({ tools: [{ name: 'a', inputSchema: { type: 'object' } }] });
    expect(table.changed('a', before)).toBe(true);
    expect(table.get('a')).toBeUndefined();
    table.learn({ tools: Array.from({ length: MAX_TOOLS + 1 }, (_, i) => ({ name: `t${i}`, inputSchema: schema })) });
    expect(table.get('t0')).toBeUndefined();
    expect(table.get(`t${MAX_TOOLS}`)).toBeDefined();
  });
});

describe('era probe: what the server/discover answer says', () => {
  const logger = createLogger({ level: 'silent' });
  const answering = (outcome: () => Promise<JsonRpcResponse>): StatelessHttpWire => ({ post: () => outcome() });
  const httpError = (status: number) => () => Promise.reject(new GatewayError('GW_UPSTREAM_HTTP_ERROR', 'x', { target: 't', status }));

  it('is modern only when 2026-07-28 is listed', async () => {
    const listed = answering(async () => ({ jsonrpc: '2.0', id: 1, result: { supportedVersions: ['2026-07-28'], capabilities: {} } }));
    expect(await probeEra(listed, 't', 1_000, logger)).toMatchObject({ era: '2026' });
    const other = answering(async () => ({ jsonrpc: '2.0', id: 1, result: { supportedVersions: ['2027-01-01'], capabilities: {} } }));
    expect(await probeEra(other, 't', 1_000, logger)).toMatchObject({ era: '2025', conclusive: true });
  });

  it.each([400, 404, 405, 406, 415])('HTTP %i is a conclusive 2025', async (status) => {
    expect(await probeEra(answering(httpError(status)), 't', 1_000, logger)).toMatchObject({ era: '2025', conclusive: true });
  });

  it.each([401, 403, 408, 429, 500, 502, 503])('HTTP %i is inconclusive', async (status) => {
    expect(await probeEra(answering(httpError(status)), 't', 1_000, logger)).toMatchObject({ era: '2025', conclusive: false });
  });

  it('a JSON-RPC error is a conclusive 2025; unreachable, a non-MCP body and a timeout are inconclusive', async () => {
    const refused = answering(async () => ({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } }));
    expect(await probeEra(refused, 't', 1_000, logger)).toMatchObject({ era: '2025', conclusive: true });
    const unreachable = answering(() => Promise.reject(new GatewayError('GW_UPSTREAM_UNREACHABLE', 'x', { target: 't' })));
    expect(await probeEra(unreachable, 't', 1_000, logger)).toMatchObject({ era: '2025', conclusive: false });
    const html = answering(() => Promise.reject(new GatewayError('GW_UPSTREAM_HTTP_ERROR', 'x', { target: 't', status: 200, reason: 'not MCP' })));
    expect(await probeEra(html, 't', 1_000, logger)).toMatchObject({ era: '2025', conclusive: false });
    const silent: StatelessHttpWire = {
      post: (_r, _m, abort) => new Promise((_resolve, reject) => void (abort.onabort = () => reject(new Error('aborted')))),
    };
    expect(await probeEra(silent, 't', 50, logger)).toMatchObject({ era: '2025', conclusive: false, why: 'GW_UPSTREAM_TIMEOUT' });
  });
});
