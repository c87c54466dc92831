/**
 * 2026 client -> gateway -> 2026 upstream: the upstream's names for its input requests reach the
 * client unchanged (SEP-2322 `inputRequests` keys), and the client's `inputResponses` under those
 * names reach the upstream unchanged, on the server path and on `/mcp`, with `protocol: auto` and
 * `protocol: 2026`. The requestState stays the gateway's sealed one, good for one round.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModernFixture, type ModernFixture } from '../fixtures/modern-upstream.ts';
import { paramsOf } from '../support/bridge-client.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { recorderServer, textOf } from '../support/recorder.ts';
import { errorOf, modern as call, resultOf } from '../support/modern.ts';

let upstream: ModernFixture;
let auto: TestGateway;
let pinned: TestGateway;
/** Two targets behind one `/mcp` (the same upstream twice): names carry their target. */
let both: TestGateway;
/** A 2025 stdio upstream that records what it receives. */
let legacy: TestGateway;

beforeAll(async () => {
  upstream = await startModernFixture();
  auto = await startTestGateway({ targets: { modern: { type: 'http', url: upstream.url } } });
  pinned = await startTestGateway({ targets: { modern: { type: 'http', url: upstream.url, protocol: '2026' } } });
  both = await startTestGateway({ targets: { modern: { type: 'http', url: upstream.url }, twin: { type: 'http', url: upstream.url } } });
  legacy = await startTestGateway({ targets: { rec: recorderServer() } });
});
afterAll(async () => {
  await Promise.allSettled([auto?.close(), pinned?.close(), both?.close(), legacy?.close()]);
  await upstream?.close();
});

const meta = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } };

describe('a 2026 upstream input request keeps its name through the gateway', () => {
  const paths: [string, () => URL, string][] = [
    ['protocol auto, /servers/modern/mcp', () => auto.mcpUrl('modern'), 'greet'],
    ['protocol auto, /mcp of one target', () => auto.mcpUrl(), 'greet'],
    ['protocol 2026, /servers/modern/mcp', () => pinned.mcpUrl('modern'), 'greet'],
    ['protocol auto, /mcp of two targets', () => new URL('/mcp', both.url), 'twin__greet'],
  ];
  it.each(paths)('%s', async (_label, url, tool) => {
    const greet = { name: tool, arguments: {} };
    const first = resultOf(await call(url(), 'tools/call', greet, { meta }));
    expect(first.resultType).toBe('input_required');
    const requests = first.inputRequests as Record<string, { method: string; params: Record<string, unknown> }>;
    expect(Object.keys(requests)).toEqual(['user_name']);
    expect(requests.user_name?.method).toBe('elicitation/create');
    // The gateway's carrier of the name does not reach the client.
    expect(JSON.stringify(requests.user_name?.params)).not.toContain('inputKey');
    expect(requests.user_name?.params).toMatchObject({ message: 'Your name?' });

    const retry = { ...greet, inputResponses: { user_name: { action: 'accept', content: { name: 'Ada' } } }, requestState: first.requestState };
    expect(textOf(resultOf(await call(url(), 'tools/call', retry, { meta })))).toBe('hello Ada');
    const seen = paramsOf(upstream.calls('tools/call', 'greet').at(-1)!);
    expect(seen.inputResponses).toEqual({ user_name: { action: 'accept', content: { name: 'Ada' } } });

    // The state was for that one round: a second use is refused.
    const again = errorOf(await call(url(), 'tools/call', retry, { meta }));
    expect(again.data).toMatchObject({ code: 'GW_INVALID_REQUEST_STATE' });
  });
});

describe('a 2025 client of the same upstream', () => {
  it.each([
    ['/servers/modern/mcp', () => auto.mcpUrl('modern'), 'greet'],
    ['/mcp of two targets', () => new URL('/mcp', both.url), 'modern__greet'],
  ] as [string, () => URL, string][])('%s: is asked a plain elicitation, without the name the gateway carries for 2026 clients', async (_label, url, tool) => {
    const client = new Client({ name: 'v1-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const asked: Record<string, unknown>[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as Record<string, unknown>);
      return { action: 'accept', content: { name: 'Bob' } };
    });
    await client.connect(new StreamableHTTPClientTransport(url()));
    try {
      expect(textOf(await client.callTool({ name: tool, arguments: {} }))).toBe('hello Bob');
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ message: 'Your name?' });
      expect(JSON.stringify(asked[0])).not.toContain('inputKey');
    } finally {
      await client.close();
    }
  });
});

describe('a fresh 2026 call carrying its own inputResponses (no requestState)', () => {
  const answers = { user_name: { action: 'accept', content: { name: 'Alice' } }, unknown_extra_key: { action: 'accept', content: { foo: 'bar' } } };
  it.each([
    ['/servers/modern/mcp', () => auto.mcpUrl('modern'), 'hello'],
    ['/mcp of two targets', () => new URL('/mcp', both.url), 'twin__hello'],
  ] as [string, () => URL, string][])('%s: reach the 2026 upstream unchanged, which completes the call', async (_label, url, tool) => {
    const before = upstream.calls('tools/call', 'hello').length;
    const answer = resultOf(await call(url(), 'tools/call', { name: tool, arguments: {}, inputResponses: answers }, { meta }));
    expect(answer.resultType).toBe('complete');
    expect(textOf(answer)).toBe('hello Alice');
    const seen = upstream.calls('tools/call', 'hello').slice(before);
    expect(seen).toHaveLength(1);
    expect(paramsOf(seen[0]!).inputResponses).toEqual(answers);
  });

  it.each([
    ['an answer that is not an object', { user_name: 12345 }],
    ['null', null],
  ])('%s: refused as invalid params before anything goes upstream', async (_label, inputResponses) => {
    const before = upstream.calls('tools/call', 'hello').length;
    const err = errorOf(await call(auto.mcpUrl('modern'), 'tools/call', { name: 'hello', arguments: {}, inputResponses }, { meta }));
    expect(err.code).toBe(-32602);
    expect(upstream.calls('tools/call', 'hello')).toHaveLength(before);
  });

  it('never reach a 2025 upstream', async () => {
    const echoed = resultOf(await call(legacy.mcpUrl('rec'), 'tools/call', { name: 'echo', arguments: { text: 'hi' }, inputResponses: answers }, { meta }));
    expect(textOf(echoed)).toBe('hi');
    // The history leaves out the call that asks for it: the echo call is in it.
    const answer = resultOf(await call(legacy.mcpUrl('rec'), 'tools/call', { name: 'history', arguments: {} }, { meta }));
    const received = JSON.parse(textOf(answer)) as { method?: string; params?: { name?: string } }[];
    const calls = received.filter((m) => m.method === 'tools/call' && m.params?.name === 'echo');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.params).not.toHaveProperty('inputResponses');
  });
});
