/**
 * /metrics over real sockets: a real gateway, the MCP SDK client and a real stdio child (the
 * misbehaving fixture). Counts and labels after calls that succeed, fail upstream and crash the
 * child; sessions and children going up and down; the restart; cardinality folding; auth failures
 * and rate-limit rejections; and who may read the page (401/403 with gateway.auth, Host checks).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_DEFAULTS, type GatewayConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { keyAuth } from '../support/auth-server.ts';
import { buildConfig, createTestLogger, type TestTarget } from '../support/gateway.ts';
import { scrape, valueOf } from '../support/metrics.ts';
import { descendantsOf, waitUntilGone } from '../support/processes.ts';
import { fixture, rpc } from '../support/recorder.ts';
import { initializeWs, openWs, wsUrl } from '../support/ws-client.ts';

const open: RunningGateway[] = [];
const RESTARTING: Partial<TestTarget> = { restart: { onExit: 'restart', maxRestarts: 2, initialBackoffMs: 20, maxBackoffMs: 50 } };
const bad = (extra: Partial<TestTarget> = {}): TestTarget => ({ command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'normal'], ...extra });

async function gateway(overrides: Partial<GatewayConfig> = {}, target: TestTarget = bad(RESTARTING)): Promise<RunningGateway> {
  const config = { ...buildConfig({ targets: { bad: target } }), ...overrides };
  const gw = await startGateway(config, { logger: createTestLogger('silent', undefined) });
  open.push(gw);
  return gw;
}

async function connect(gw: RunningGateway, path = '/mcp', headers: Record<string, string> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'metrics-test', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(path, gw.url), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}

const REQ = { endpoint: 'target:bad', era: '2025', transport: 'streamable-http' };

afterEach(async () => {
  for (const gw of open.splice(0)) await gw.close();
  expect(await waitUntilGone(descendantsOf(process.pid), 5_000)).toEqual([]);
});

describe('/metrics', () => {
  it('counts requests, tool calls, errors by code, upstream events, sessions and children', async () => {
    const gw = await gateway();
    const { client, transport } = await connect(gw);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
    await client.callTool({ name: 'echo', arguments: { text: 'one' } });
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/Unknown tool/);
    await expect(client.callTool({ name: 'crash', arguments: { code: 5 } })).rejects.toThrow();
    await client.callTool({ name: 'echo', arguments: { text: 'after the restart' } });

    let m = await scrape(gw.url);
    expect(valueOf(m, 'switchboard_requests_total', { ...REQ, method: 'tools/call', outcome: 'ok' })).toBe(2);
    expect(valueOf(m, 'switchboard_requests_total', { ...REQ, method: 'tools/call', outcome: 'error' })).toBe(2);
    expect(valueOf(m, 'switchboard_requests_total', { ...REQ, method: 'tools/list', outcome: 'ok' })).toBe(1);
    expect(valueOf(m, 'switchboard_tool_calls_total', { target: 'bad', tool: 'echo', outcome: 'ok' })).toBe(2);
    expect(valueOf(m, 'switchboard_tool_calls_total', { target: 'bad', tool: 'nope', outcome: 'error' })).toBe(1);
    expect(valueOf(m, 'switchboard_tool_calls_total', { target: 'bad', tool: 'crash', outcome: 'error' })).toBe(1);
    expect(valueOf(m, 'switchboard_request_errors_total', { code: 'GW_UPSTREAM_EXITED', target: 'bad' })).toBe(1);
    expect(valueOf(m, 'switchboard_upstream_events_total', { target: 'bad', event: 'start' })).toBe(1);
    expect(valueOf(m, 'switchboard_upstream_events_total', { target: 'bad', event: 'exit' })).toBe(1);
    expect(valueOf(m, 'switchboard_upstream_events_total', { target: 'bad', event: 'restart' })).toBe(1);
    expect(valueOf(m, 'switchboard_sessions_open', { endpoint: 'target:bad', transport: 'streamable-http' })).toBe(1);
    expect(valueOf(m, 'switchboard_children_live', { target: 'bad' })).toBe(1);
    expect(valueOf(m, 'switchboard_gateway_duration_seconds_count', { transport: 'streamable-http' })).toBe(5);
    expect(valueOf(m, 'switchboard_upstream_duration_seconds_count', { target: 'bad' })).toBeGreaterThanOrEqual(3);
    expect(valueOf(m, 'switchboard_downstream_bytes_total', { direction: 'in' })).toBeGreaterThan(500);
    expect(valueOf(m, 'switchboard_downstream_bytes_total', { direction: 'out' })).toBeGreaterThan(500);
    // prom-client's process metrics come along, from this gateway's own registry.
    expect(valueOf(m, 'process_resident_memory_bytes')).toBeGreaterThan(0);

    await transport.terminateSession();
    await client.close();
    await expect.poll(async () => valueOf(await scrape(gw.url), 'switchboard_children_live', { target: 'bad' }) ?? 0).toBe(0);
    m = await scrape(gw.url);
    expect(valueOf(m, 'switchboard_sessions_open', { endpoint: 'target:bad', transport: 'streamable-http' })).toBe(0);
    expect(valueOf(m, 'switchboard_sessions_closed_total', { endpoint: 'target:bad', transport: 'streamable-http', cause: 'ended' })).toBe(1);
  });

  it('folds label values past gateway.admin.maxLabelValues into "other", and says how many', async () => {
    const gw = await gateway({ admin: { ...ADMIN_DEFAULTS, maxLabelValues: 2 } });
    const { client } = await connect(gw);
    for (const name of ['a', 'b', 'c', 'd', 'c']) await expect(client.callTool({ name, arguments: {} })).rejects.toThrow(/Unknown tool/);
    const m = await scrape(gw.url);
    expect(valueOf(m, 'switchboard_tool_calls_total', { target: 'bad', tool: 'a', outcome: 'error' })).toBe(1);
    expect(valueOf(m, 'switchboard_tool_calls_total', { target: 'bad', tool: 'b', outcome: 'error' })).toBe(1);
    expect(valueOf(m, 'switchboard_tool_calls_total', { target: 'bad', tool: 'other', outcome: 'error' })).toBe(3);
    expect(m.some((s) => s.labels.tool === 'c' || s.labels.tool === 'd')).toBe(false);
    expect(valueOf(m, 'switchboard_label_values_folded_total', { label: 'tool' })).toBe(3);
    await client.close();
  });

  it('labels sessions by transport, and says why they ended (a WebSocket, a reaped idle session)', async () => {
    const gw = await gateway({ session: { ...buildConfig({ targets: {} }).session, shortIdleTtlMs: 400 } });
    const ws = await openWs(wsUrl(gw.url, '/servers/bad/ws'));
    await initializeWs(ws);
    ws.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'over ws' } } });
    await ws.until(7);
    let m = await scrape(gw.url);
    expect(valueOf(m, 'switchboard_sessions_open', { endpoint: 'target:bad', transport: 'websocket' })).toBe(1);
    expect(valueOf(m, 'switchboard_requests_total', { ...REQ, transport: 'websocket', method: 'tools/call', outcome: 'ok' })).toBe(1);
    ws.socket.close();
    await ws.closed;
    // An HTTP session that never opens a GET stream and goes quiet is reaped after shortIdleTtlMs.
    await rpc.initialize(new URL('/mcp', gw.url));
    await expect
      .poll(async () => valueOf(await scrape(gw.url), 'switchboard_sessions_closed_total', { endpoint: 'target:bad', transport: 'streamable-http', cause: 'reaped' }), { timeout: 5_000 })
      .toBe(1);
    m = await scrape(gw.url);
    expect(valueOf(m, 'switchboard_sessions_closed_total', { endpoint: 'target:bad', transport: 'websocket', cause: 'ended' })).toBe(1);
    expect(valueOf(m, 'switchboard_sessions_open', { endpoint: 'target:bad', transport: 'streamable-http' })).toBe(0);
  });

  it('counts a call the client cancelled as cancelled, once', async () => {
    const gw = await gateway();
    const { client } = await connect(gw);
    const controller = new AbortController();
    const call = client.callTool({ name: 'slow', arguments: { ms: 5_000 } }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    await expect(call).rejects.toThrow();
    await client.callTool({ name: 'echo', arguments: { text: 'still here' } });
    const m = await scrape(gw.url);
    expect(valueOf(m, 'switchboard_tool_calls_total', { target: 'bad', tool: 'slow', outcome: 'cancelled' })).toBe(1);
    expect(valueOf(m, 'switchboard_tool_calls_total', { target: 'bad', tool: 'slow', outcome: 'error' })).toBe(0);
    expect(valueOf(m, 'switchboard_tool_calls_total', { target: 'bad', tool: 'slow', outcome: 'ok' })).toBe(0);
    await client.close();
  });

  it('two gateways in one process share nothing', async () => {
    const one = await gateway();
    const two = await gateway();
    const { client } = await connect(one);
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    expect(valueOf(await scrape(one.url), 'switchboard_tool_calls_total', { target: 'bad', tool: 'echo', outcome: 'ok' })).toBe(1);
    expect(valueOf(await scrape(two.url), 'switchboard_tool_calls_total', { target: 'bad', tool: 'echo', outcome: 'ok' })).toBeUndefined();
    await client.close();
  });

  it('is refused to foreign Hosts and Origins on a loopback listener (DNS rebinding)', async () => {
    const gw = await gateway();
    const { request } = await import('node:http');
    const status = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = request(new URL('/metrics', gw.url), { headers }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await status({ host: 'evil.example' })).toBe(403);
    expect(await status({ origin: 'https://evil.example' })).toBe(403);
    expect(await status({})).toBe(200);
  });

  it('can be switched off', async () => {
    const gw = await gateway({ admin: { ...ADMIN_DEFAULTS, metrics: false } });
    const res = await fetch(new URL('/metrics', gw.url));
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { data: { code: 'GW_ROUTE_NOT_FOUND' } } });
  });
});

describe('/metrics with gateway.auth', () => {
  const KEYS = { ops: 'ops-key-0123456789abcdef', user: 'user-key-0123456789abcdef' };
  const authWithAdmin = () => {
    const auth = keyAuth(KEYS);
    return { ...auth, apiKeys: auth.apiKeys.map((k) => (k.name === 'ops' ? { ...k, scopes: ['switchboard:admin'] } : k)) };
  };
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

  it('needs a credential with the admin scope: 401 without one, 403 without the scope; failures are counted', async () => {
    const gw = await gateway({ auth: authWithAdmin() });
    const anonymous = await fetch(new URL('/metrics', gw.url));
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer scope="switchboard:admin"');
    expect(await anonymous.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'GW_UNAUTHORIZED' } } });
    const user = await fetch(new URL('/metrics', gw.url), { headers: bearer(KEYS.user) });
    expect(user.status).toBe(403);
    expect(await user.json()).toMatchObject({ error: { data: { code: 'GW_INSUFFICIENT_SCOPE' } } });
    // An MCP request without a credential is an auth failure too.
    expect((await fetch(new URL('/mcp', gw.url), { method: 'POST', body: '{}' })).status).toBe(401);
    // A user key works for tools, and its calls are counted with the others.
    const { client } = await connect(gw, '/mcp', bearer(KEYS.user));
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    const m = await scrape(gw.url, bearer(KEYS.ops));
    expect(valueOf(m, 'switchboard_auth_failures_total', { code: 'GW_UNAUTHORIZED' })).toBe(2);
    expect(valueOf(m, 'switchboard_auth_failures_total', { code: 'GW_INSUFFICIENT_SCOPE' })).toBe(1);
    expect(valueOf(m, 'switchboard_tool_calls_total', { target: 'bad', tool: 'echo', outcome: 'ok' })).toBe(1);
    await client.close();
  });

  it('counts rate-limit rejections', async () => {
    const gw = await gateway({ auth: authWithAdmin(), rateLimits: { perPrincipal: { perSecond: 0.01, burst: 3 }, perTool: undefined, maxKeys: 100 } });
    const { client } = await connect(gw, '/mcp', bearer(KEYS.user)); // initialize: 1
    await client.callTool({ name: 'echo', arguments: { text: 'x' } }); // 2
    await client.callTool({ name: 'echo', arguments: { text: 'y' } }); // 3
    await expect(client.callTool({ name: 'echo', arguments: { text: 'z' } })).rejects.toThrow(/429|Too Many/);
    const m = await scrape(gw.url, bearer(KEYS.ops));
    expect(valueOf(m, 'switchboard_rate_limit_rejections_total')).toBe(1);
    await client.close();
  });
});
