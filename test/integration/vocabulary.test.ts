/**
 * What the gateway says a request names, read from outside over one real run: the audit lines and
 * the spans of a 2025 session and of a 2026 request name the same tool, prompt or resource
 * (jsonrpc/methods.ts), a subscribe (which only watches) is spanned with its URI but never
 * audited, and a 2025 client's subscribe toward a 2026 upstream that offers none is refused with
 * the catalog's GW_METHOD_NOT_FOUND. Spans reach a real OTLP/HTTP receiver at the gateway's close.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { startModernFixture, type ModernFixture } from '../fixtures/modern-upstream.ts';
import { colliderServer } from '../support/aggregate.ts';
import { connect, errorOf } from '../support/bridge-client.ts';
import { buildConfig, createTestLogger } from '../support/gateway.ts';
import { modern, resultOf } from '../support/modern.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';

const SERVER = 2;
const NOTE = 'collider://notes/1';

const lines: string[] = [];
let receiver: OtlpReceiver;
let plain: ModernFixture;
let gw: RunningGateway | undefined;
let refused: McpError;

async function use2025(url: URL): Promise<void> {
  const client = new Client({ name: 'vocabulary-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url));
  try {
    await client.callTool({ name: 'echo', arguments: { message: 'x' } });
    await client.getPrompt({ name: 'greet' });
    await client.readResource({ uri: NOTE });
    expect(await client.subscribeResource({ uri: NOTE })).toEqual({});
    expect(await client.unsubscribeResource({ uri: NOTE })).toEqual({});
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  [receiver, plain] = await Promise.all([startOtlpReceiver(), startModernFixture()]);
  const config = buildConfig({
    targets: { col: colliderServer(), plain: { type: 'http', url: plain.url } },
    telemetry: { traces: { enabled: true, endpoint: receiver.url, serviceName: 'vocabulary', sampleRatio: undefined } },
  });
  gw = await startGateway({ ...config, logging: { level: 'info', audit: true } }, { logger: createTestLogger('info', lines), env: {} });
  const url = (target: string) => new URL(`/servers/${target}/mcp`, gw!.url);
  await use2025(url('col'));
  const answer = await modern(url('col'), 'tools/call', { name: 'echo', arguments: { message: 'y' } }, { id: 'modern-1' });
  expect(resultOf(answer).resultType).toBe('complete');
  const client = await connect(url('plain'));
  try {
    refused = await errorOf(client.subscribeResource({ uri: 'fixture://note' }));
  } finally {
    await client.close();
  }
  // The spans are flushed by the gateway's shutdown.
  await gw.close();
  gw = undefined;
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await receiver?.close();
  await plain?.close();
});

const audits = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((l) => l.audit === true);
const servers = (name: string): ReceivedSpan[] => receiver.spans.filter((s) => s.kind === SERVER && s.name === name);

describe('what a request names', () => {
  it('one audit line per tool call (both eras), prompt get and resource read, under its own field; none for a subscribe', () => {
    const seen = audits().map((l) => [l.method, l.tool ?? l.prompt ?? l.uri, l.server, l.outcome]);
    expect(seen).toEqual(
      expect.arrayContaining([
        ['tools/call', 'echo', 'col', 'ok'],
        ['prompts/get', 'greet', 'col', 'ok'],
        ['resources/read', NOTE, 'col', 'ok'],
      ]),
    );
    expect(seen.filter(([method]) => method === 'tools/call')).toHaveLength(2);
    expect(audits().filter((l) => l.method !== 'tools/call' && l.method !== 'prompts/get' && l.method !== 'resources/read')).toEqual([]);
  });

  it('spans name a tool or prompt in the span name and attributes, a URI only in its attribute', () => {
    const calls = servers('tools/call echo');
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (const span of calls) expect(span.attributes).toMatchObject({ 'gen_ai.tool.name': 'echo', 'gen_ai.operation.name': 'execute_tool' });
    expect(servers('prompts/get greet')[0]?.attributes).toMatchObject({ 'gen_ai.prompt.name': 'greet' });
    expect(servers('resources/read')[0]?.attributes).toMatchObject({ 'mcp.resource.uri': NOTE });
    expect(servers('resources/subscribe')[0]?.attributes).toMatchObject({ 'mcp.resource.uri': NOTE });
    expect(servers('tools/list').every((s) => s.attributes['gen_ai.tool.name'] === undefined && s.attributes['mcp.resource.uri'] === undefined)).toBe(true);
    expect(receiver.spans.some((s) => s.name.includes(NOTE))).toBe(false);
  });

  it('a bridged subscribe the 2026 upstream does not offer is Method not found from the catalog', () => {
    expect(refused.code).toBe(-32601);
    expect(refused.data).toEqual({ code: 'GW_METHOD_NOT_FOUND' });
  });
});
