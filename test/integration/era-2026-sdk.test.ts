/**
 * The SDK v2 client (`@modelcontextprotocol/client` 2.4.0), pinned to 2026-07-28, through the
 * gateway to @modelcontextprotocol/server-everything over stdio (a 2025-era server): tools,
 * sampling, elicitation and roots (each crossing the bridge as input_required), progress, cancel,
 * logging with `_meta` logLevel, and subscriptions/listen hearing a list_changed; on a single
 * target's URL and on an aggregate.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everythingServer, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { textOf } from '../support/recorder.ts';

let gw: TestGateway;
const clients: Client[] = [];

beforeAll(async () => {
  gw = await startTestGateway({ targets: { everything: everythingServer(), second: everythingServer() } });
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await gw?.close();
});

interface Seen {
  sampled: unknown[];
  elicited: unknown[];
  rootsAsked: number;
  logs: unknown[];
  toolsChanged: number;
}

const ALL = { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } };

async function connect(url: URL, capabilities: Record<string, object> = ALL): Promise<{ client: Client; seen: Seen }> {
  const seen: Seen = { sampled: [], elicited: [], rootsAsked: 0, logs: [], toolsChanged: 0 };
  const client = new Client({ name: 'sdk-v2-test', version: '1.0.0' }, { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  if (capabilities.sampling) client.setRequestHandler('sampling/createMessage', async (request) => {
    seen.sampled.push(request.params);
    return { role: 'assistant', content: { type: 'text', text: 'a sampled answer from the v2 client' }, model: 'test-model', stopReason: 'endTurn' };
  });
  if (capabilities.elicitation) client.setRequestHandler('elicitation/create', async (request) => {
    seen.elicited.push(request.params);
    return { action: 'accept', content: { color: 'teal', number: 7, pets: 'dogs' } };
  });
  if (capabilities.roots) client.setRequestHandler('roots/list', async () => {
    seen.rootsAsked++;
    return { roots: [{ uri: 'file:///v2/workspace', name: 'v2 workspace' }] };
  });
  client.setNotificationHandler('notifications/message', (n) => void seen.logs.push(n.params));
  client.setNotificationHandler('notifications/tools/list_changed', () => void seen.toolsChanged++);
  await client.connect(new StreamableHTTPClientTransport(url));
  clients.push(client);
  return { client, seen };
}

const paths = [
  { where: 'a single target (/servers/everything/mcp)', url: () => new URL('/servers/everything/mcp', gw.url), tool: (n: string) => n },
  { where: 'an aggregate (/mcp)', url: () => new URL('/mcp', gw.url), tool: (n: string) => `everything__${n}` },
];

describe.each(paths)('SDK v2 client (2026-07-28) through $where to a 2025 stdio server', ({ url, tool }) => {
  it('negotiates 2026-07-28 and lists and calls tools', async () => {
    const { client } = await connect(url());
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain(tool('echo'));
    const result = await client.callTool({ name: tool('echo'), arguments: { message: 'hello 2026' } });
    expect(textOf(result)).toContain('hello 2026');
  });

  it('sampling, elicitation and roots reach the client as input_required and complete the call', async () => {
    const { client, seen } = await connect(url());
    const sampled = await client.callTool({ name: tool('trigger-sampling-request'), arguments: { prompt: 'Say hi', maxTokens: 20 } });
    expect(textOf(sampled)).toContain('a sampled answer from the v2 client');
    expect(seen.sampled).toHaveLength(1);

    const elicited = await client.callTool({ name: tool('trigger-elicitation-request'), arguments: {} });
    expect(textOf(elicited)).toContain('teal');
    expect(seen.elicited).toHaveLength(1);

    const roots = await client.callTool({ name: tool('get-roots-list'), arguments: {} });
    expect(textOf(roots)).toContain('file:///v2/workspace');
    expect(seen.rootsAsked).toBeGreaterThanOrEqual(1);
  });

  it('progress arrives during a long call; an aborted call is cancelled and the next call works', async () => {
    const { client } = await connect(url());
    // server-everything asks for the roots 350 ms after it starts, on its own: a question that would
    // belong to the long call (the one call that may ask, running). Let it pass first.
    await client.callTool({ name: tool('echo'), arguments: { message: 'warm' } });
    await new Promise((r) => setTimeout(r, 500));
    const progress: number[] = [];
    const done = await client.callTool(
      { name: tool('trigger-long-running-operation'), arguments: { duration: 1, steps: 3 } },
      { onprogress: (p) => void progress.push(p.progress) },
    );
    expect(textOf(done)).toContain('completed');
    expect(progress.length).toBeGreaterThanOrEqual(2);

    const abort = new AbortController();
    const slow = client.callTool({ name: tool('trigger-long-running-operation'), arguments: { duration: 30, steps: 30 } }, { signal: abort.signal });
    setTimeout(() => abort.abort(new Error('changed my mind')), 300);
    await expect(slow).rejects.toThrow();
    const after = await client.callTool({ name: tool('echo'), arguments: { message: 'still here' } });
    expect(textOf(after)).toContain('still here');
  });

  it('log lines ride a request only when it set _meta logLevel', async () => {
    // On a fresh upstream session, get-roots-list syncs the roots (a roots/list round) and logs
    // "Roots updated" during the call; each client below gets its own (other capabilities).
    const { client, seen } = await connect(url(), { roots: {}, sampling: {} });
    await client.callTool({ name: tool('get-roots-list'), arguments: {} });
    expect(seen.rootsAsked).toBeGreaterThanOrEqual(1);
    expect(seen.logs).toEqual([]);
    const { client: verbose, seen: heard } = await connect(url(), { roots: {}, elicitation: {} });
    await verbose.callTool({ name: tool('get-roots-list'), arguments: {}, _meta: { 'io.modelcontextprotocol/logLevel': 'debug' } });
    expect(heard.logs.length, 'no log line reached the request that asked for them').toBeGreaterThanOrEqual(1);
  });

  it('subscriptions/listen hears a list_changed from the upstream', async () => {
    const { client, seen } = await connect(url());
    const subscription = await client.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true });
    // A new held session (other capabilities) makes server-everything register its conditional
    // tools after initialize: it says so with tools/list_changed, which the listen stream carries.
    const other = new Client({ name: 'sdk-v2-other', version: '1.0.0' }, { capabilities: { sampling: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await other.connect(new StreamableHTTPClientTransport(url()));
    clients.push(other);
    await other.listTools();
    await expect.poll(() => seen.toolsChanged, { timeout: 5_000 }).toBeGreaterThanOrEqual(1);
    await subscription.close();
  });
});
