/**
 * A 2025-era client (the SDK v1 client) through the gateway to a 2026-07-28-only upstream (the SDK
 * v2 server with `legacy: 'reject'`, test/fixtures/modern-upstream.ts), on a single-target path and
 * on an aggregate `/mcp` beside a 2025 stdio member: the handshake composed from server/discover,
 * stateless POSTs with the `_meta` envelope and headers, input_required turned into real sampling
 * and elicitation requests and retried with a new id, progress, cancel, list_changed, bad answers;
 * and the SDK v2 client through both bridges in a row. Era detection: modern-upstream-era.test.ts.
 */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { CreateMessageRequestSchema, ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/main.ts';
import { startModernFixture, type ModernFixture } from '../fixtures/modern-upstream.ts';
import { connectClient, startAggregateGateway } from '../support/aggregate.ts';
import { connect, errorOf, paramsOf } from '../support/bridge-client.ts';
import { everythingServer, remoteTarget, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { textOf } from '../support/recorder.ts';

const ENVELOPE_VERSION = 'io.modelcontextprotocol/protocolVersion';
const ENVELOPE_CAPS = 'io.modelcontextprotocol/clientCapabilities';

let modern: ModernFixture;
let gw: TestGateway;


beforeAll(async () => {
  modern = await startModernFixture();
  gw = await startTestGateway({ targets: { modern: { type: 'http', url: modern.url } } });
});
afterAll(async () => {
  await gw?.close();
  await modern?.close();
});

describe('2025 client -> 2026 upstream, single target', () => {
  it('answers initialize from server/discover once the server refused the 2025 one, which is tried once', async () => {
    const first = await connect(gw.mcpUrl('modern'));
    await first.close();
    const client = await connect(gw.mcpUrl('modern'));
    expect(client.getServerVersion()).toEqual({ name: 'modern-fixture', version: '2.4.0' });
    expect(client.getInstructions()).toBe('A 2026-07-28-only fixture.');
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(['confirm', 'echo', 'greet', 'hello', 'progress', 'region', 'sample', 'slow']);
    // A 2025 client's own handshake is tried once per target (upstream/era-first.ts); the server
    // refused it, and the gateway remembered: the second session sent none.
    expect(modern.calls('initialize')).toHaveLength(1);
    expect(modern.calls('notifications/initialized')).toEqual([]);
    await client.close();
  });

  it('sends each request as a stateless 2026 POST with the envelope and the headers', async () => {
    const client = await connect(gw.mcpUrl('modern'));
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(textOf(result)).toBe('hi');
    expect(result).not.toHaveProperty('resultType');
    const seen = modern.calls('tools/call', 'echo').at(-1)!;
    expect(seen.headers).toMatchObject({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo', 'mcp-session-id': undefined });
    const meta = paramsOf(seen)._meta as Record<string, unknown>;
    expect(meta[ENVELOPE_VERSION]).toBe('2026-07-28');
    expect(meta[ENVELOPE_CAPS]).toEqual({ sampling: {}, elicitation: {} });
    await client.close();
  });

  it('sends Mcp-Name in the =?base64?...?= form when the name is not plain ASCII', async () => {
    const client = await connect(gw.mcpUrl('modern'));
    const outcome = await client.callTool({ name: 'grüße', arguments: {} }).catch((err: unknown) => err);
    const seen = modern.calls('tools/call', 'grüße').at(-1)!;
    expect(seen.headers['mcp-name']).toBe(`=?base64?${Buffer.from('grüße').toString('base64')}?=`);
    // The upstream accepted the header (no -32020) and answered about the tool itself.
    expect(JSON.stringify(outcome)).not.toContain('GW_UPSTREAM_HTTP_ERROR');
    await client.close();
  });

  it('sends the Mcp-Param-* headers a tool declares (x-mcp-header), learnt from tools/list', async () => {
    const client = await connect(gw.mcpUrl('modern'));
    await client.listTools();
    const before = modern.calls('tools/call', 'region').length;
    expect(textOf(await client.callTool({ name: 'region', arguments: { region: 'eu-west', text: 'a' } }))).toBe('eu-west:a');
    const sent = modern.calls('tools/call', 'region').slice(before);
    expect(sent.map((s) => s.headers['mcp-param-region'])).toEqual(['eu-west']);
    await client.close();
  });

  it('a call refused for a missing Mcp-Param-* header (it did not run) is sent again once the tools are listed', async () => {
    const client = await connect(gw.mcpUrl('modern'));
    const from = modern.seen.length;
    expect(textOf(await client.callTool({ name: 'region', arguments: { region: 'ünï', text: 'b' } }))).toBe('ünï:b');
    const sent = modern.seen.slice(from).filter((s) => s.body.method === 'tools/call' || s.body.method === 'tools/list');
    expect(sent.map((s) => [s.body.method, s.headers['mcp-param-region']])).toEqual([
      ['tools/call', undefined],
      ['tools/list', undefined],
      ['tools/call', `=?base64?${Buffer.from('ünï').toString('base64')}?=`],
    ]);
    expect(sent[2]!.body.id).not.toEqual(sent[0]!.body.id);
    await client.close();
  });

  it('turns input_required for sampling into a real sampling request, then retries with a new id', async () => {
    const client = await connect(gw.mcpUrl('modern'));
    const result = await client.callTool({ name: 'sample', arguments: { prompt: 'meaning' } });
    expect(textOf(result)).toBe('model said: forty-two (meaning)');
    const [first, retry] = modern.calls('tools/call', 'sample').slice(-2);
    expect(retry!.body.id).not.toEqual(first!.body.id);
    expect(paramsOf(first!).inputResponses).toBeUndefined();
    expect(paramsOf(retry!).requestState).toBe('fixture-state:meaning');
    expect(paramsOf(retry!).inputResponses).toEqual({
      llm: { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'forty-two (meaning)' } },
    });
    expect(paramsOf(retry!).arguments).toEqual({ prompt: 'meaning' });
    expect((paramsOf(retry!)._meta as Record<string, unknown>)[ENVELOPE_VERSION]).toBe('2026-07-28');
    await client.close();
  });

  it('keeps the input rounds of concurrent calls apart, also across sessions', async () => {
    const [a, b] = await Promise.all([connect(gw.mcpUrl('modern')), connect(gw.mcpUrl('modern'))]);
    const prompts = ['p1', 'p2', 'p3', 'p4'];
    const answers = await Promise.all(prompts.flatMap((p) => [a, b].map((c) => c.callTool({ name: 'sample', arguments: { prompt: p } }).then(textOf))));
    expect(answers).toEqual(prompts.flatMap((p) => [`model said: forty-two (${p})`, `model said: forty-two (${p})`]));
    await Promise.all([a.close(), b.close()]);
  });

  it('turns input_required for elicitation into a real elicitation request', async () => {
    const client = await connect(gw.mcpUrl('modern'));
    const result = await client.callTool({ name: 'confirm', arguments: { action: 'deploy' } });
    expect(textOf(result)).toBe('accept: {"sure":true}');
    const retry = modern.calls('tools/call', 'confirm').at(-1)!;
    expect(paramsOf(retry).inputResponses).toEqual({ ok: { action: 'accept', content: { sure: true } } });
    expect(paramsOf(retry).requestState).toBe('fixture-state:deploy');
    await client.close();
  });

  it('fails the call with GW_INPUT_REQUEST_FAILED when the client answers the input request with an error', async () => {
    const client = await connect(gw.mcpUrl('modern'), false);
    const before = modern.calls('tools/call', 'sample').length;
    const error = await errorOf(client.callTool({ name: 'sample', arguments: { prompt: 'x' } }));
    expect(error.code).toBe(-32603);
    expect(error.data).toMatchObject({ code: 'GW_INPUT_REQUEST_FAILED', target: 'modern', method: 'sampling/createMessage' });
    // Not retried upstream: it has no way to hear of a failed input.
    expect(modern.calls('tools/call', 'sample').length).toBe(before + 1);
    await client.close();
  });

  it('forwards progress', async () => {
    const client = await connect(gw.mcpUrl('modern'));
    const seen: number[] = [];
    const result = await client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: (p) => seen.push(p.progress) });
    expect(textOf(result)).toBe('done after 3');
    expect(seen).toEqual([1, 2, 3]);
    await client.close();
  });

  it('cancels by closing the upstream exchange, and the session goes on', async () => {
    const client = await connect(gw.mcpUrl('modern'));
    const abort = new AbortController();
    const [callsBefore, cancelledBefore] = [modern.calls('tools/call', 'slow').length, modern.cancelled.length];
    const call = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: abort.signal });
    await expect.poll(() => modern.calls('tools/call', 'slow').length).toBe(callsBefore + 1);
    abort.abort();
    await call.catch(() => undefined);
    await expect.poll(() => modern.cancelled.length).toBe(cancelledBefore + 1);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after' } }))).toBe('after');
    await client.close();
  });

  it('relays list_changed from a subscriptions/listen stream to the client', async () => {
    const client = await connect(gw.mcpUrl('modern'));
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      changed++;
    });
    // The listen request goes up once the client said initialized, with the kinds discover offers.
    await expect.poll(() => modern.calls('subscriptions/listen').length).toBeGreaterThan(0);
    const listen = modern.calls('subscriptions/listen').at(-1)!;
    expect(paramsOf(listen).notifications).toEqual({ toolsListChanged: true });
    expect(listen.headers['mcp-method']).toBe('subscriptions/listen');
    // Published until it arrives: the stream may still be acknowledging when the first goes out.
    await expect
      .poll(() => {
        modern.toolsChanged();
        return changed;
      })
      .toBeGreaterThan(0);
    await client.close();
  });

  it('answers ping and logging/setLevel itself, and sends the level as the _meta logLevel', async () => {
    const client = await connect(gw.mcpUrl('modern'));
    await client.ping();
    await client.setLoggingLevel('debug');
    await client.callTool({ name: 'echo', arguments: { text: 'level' } });
    expect(modern.calls('ping')).toEqual([]);
    expect(modern.calls('logging/setLevel')).toEqual([]);
    const meta = paramsOf(modern.calls('tools/call', 'echo').at(-1)!)._meta as Record<string, unknown>;
    expect(meta['io.modelcontextprotocol/logLevel']).toBe('debug');
    await client.close();
  });
});

describe('bad answers from a 2026 upstream', () => {
  it.each([
    ['unknown-kind', { resultType: 'later', content: [] }, 'resultType "later"'],
    ['empty-input', { resultType: 'input_required' }, 'neither inputRequests nor requestState'],
    ['bad-input', { resultType: 'input_required', inputRequests: { a: 'nope' } }, 'input request "a" has no method'],
    ['endless', { resultType: 'input_required', requestState: 'again' }, 'more than 16 input rounds'],
  ])('%s becomes GW_UPSTREAM_INVALID_ANSWER for that call only', async (tool, result, reason) => {
    modern.rawAnswer(tool, (id) => ({ jsonrpc: '2.0', id, result }));
    const client = await connect(gw.mcpUrl('modern'));
    const error = await errorOf(client.callTool({ name: tool, arguments: {} }));
    expect(error.code).toBe(-32603);
    expect(error.data).toMatchObject({ code: 'GW_UPSTREAM_INVALID_ANSWER', target: 'modern' });
    expect(String((error.data as { reason?: unknown }).reason)).toContain(reason);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'still' } }))).toBe('still');
    await client.close();
  });

  it("a 2026 refusal (HTTP 404 with -32601 and the request's id) is the answer, not an HTTP failure", async () => {
    const client = await connect(gw.mcpUrl('modern'));
    const error = await errorOf(client.complete({ ref: { type: 'ref/prompt', name: 'none' }, argument: { name: 'a', value: 'b' } }));
    expect(error.code).toBe(-32601);
    expect(error.data).toBeUndefined();
    await client.close();
  });

  it('an upstream JSON-RPC error passes through with the client id', async () => {
    modern.rawAnswer('refused', (id) => ({ jsonrpc: '2.0', id, error: { code: -32602, message: 'no such thing' } }));
    const client = await connect(gw.mcpUrl('modern'));
    const error = await errorOf(client.callTool({ name: 'refused', arguments: {} }));
    expect(error.code).toBe(-32602);
    expect(error.message).toContain('no such thing');
    await client.close();
  });
});

describe('2025 client -> 2026 upstream, aggregate /mcp beside a 2025 stdio member', () => {
  let agg: RunningGateway;
  beforeAll(async () => {
    agg = await startAggregateGateway({
      targets: { modern: { target: remoteTarget('modern', { type: 'http', url: modern.url }) }, everything: everythingServer() },
    });
  });
  afterAll(async () => {
    await agg?.close();
  });

  it('lists and calls tools of both eras, with sampling and elicitation through the 2026 member', async () => {
    const client = await connectClient(agg, '/mcp', { capabilities: { sampling: {}, elicitation: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: 'agg' } }));
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['modern__echo', 'modern__sample', 'everything__echo']));
    expect(textOf(await client.callTool({ name: 'modern__echo', arguments: { text: 'new' } }))).toBe('new');
    expect(textOf(await client.callTool({ name: 'everything__echo', arguments: { message: 'old' } }))).toContain('old');
    expect(textOf(await client.callTool({ name: 'modern__sample', arguments: { prompt: 'p' } }))).toBe('model said: agg');
    expect(textOf(await client.callTool({ name: 'modern__confirm', arguments: { action: 'x' } }))).toBe('decline: null');
    const seen: number[] = [];
    await client.callTool({ name: 'modern__progress', arguments: { steps: 2 } }, undefined, { onprogress: (p) => seen.push(p.progress) });
    expect(seen).toEqual([1, 2]);
    await client.close();
  });
});

describe('a 2026 client to the 2026 upstream (both bridges in a row)', () => {
  it('lists, calls, and answers the upstream input_required through its own input_required', async () => {
    const client = new ModernClient({ name: 'v2-client', version: '1.0.0' }, { capabilities: { sampling: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    client.setRequestHandler('sampling/createMessage', async () => ({ role: 'assistant', content: { type: 'text', text: 'v2 says hi' }, model: 'm' }));
    await client.connect(new ModernTransport(gw.mcpUrl('modern')));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('sample');
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'both ways' } }))).toBe('both ways');
      expect(textOf(await client.callTool({ name: 'sample', arguments: { prompt: 'q' } }))).toBe('model said: v2 says hi');
      expect(paramsOf(modern.calls('tools/call', 'sample').at(-1)!).requestState).toBe('fixture-state:q');
    } finally {
      await client.close();
    }
  });
});
