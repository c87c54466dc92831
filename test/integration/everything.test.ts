/**
 * The official SDK client, through the gateway, to @modelcontextprotocol/server-everything over
 * stdio: every feature family of the 2025 era end to end.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everythingServer, startTestGateway, type TestGateway } from '../support/gateway.ts';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ targets: { everything: everythingServer() } });
});
afterAll(async () => {
  await gw?.close();
});

async function connect(capabilities: ConstructorParameters<typeof Client>[1] = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'switchboard-test', version: '1.0.0' }, capabilities);
  const transport = new StreamableHTTPClientTransport(gw.mcpUrl());
  await client.connect(transport);
  return { client, transport };
}

function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

describe('server-everything over stdio through the gateway', () => {
  it('initializes a session and negotiates the latest protocol version', async () => {
    const { client, transport } = await connect();
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(client.getServerVersion()?.name).toContain('everything');
    expect(transport.protocolVersion ?? '2025-11-25').toBe('2025-11-25');
    await client.close();
  });

  it('lists tools and calls one', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('echo');
    const result = await client.callTool({ name: 'echo', arguments: { message: 'through the gateway' } });
    expect(textOf(result)).toBe('Echo: through the gateway');
    await client.close();
  });

  it('streams progress of a long call and then its result', async () => {
    const { client } = await connect();
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 4 } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(progress).toEqual([1, 2, 3, 4]);
    expect(textOf(result)).toContain('Long running operation completed');
    await client.close();
  });

  it('carries a sampling request to the client and its answer back', async () => {
    const { client } = await connect({ capabilities: { sampling: {} } });
    let asked = '';
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const content = request.params.messages[0]?.content;
      asked = content && 'text' in content ? String(content.text) : '';
      return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'sampled by the test' } };
    });
    const result = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello sampler', maxTokens: 5 } });
    expect(asked).toContain('hello sampler');
    expect(textOf(result)).toContain('sampled by the test');
    await client.close();
  });

  it('carries an elicitation request to the client and its answer back', async () => {
    const { client } = await connect({ capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada Lovelace' } }));
    const result = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
    expect(textOf(result)).toContain('Ada Lovelace');
    await client.close();
  });

  it('lists and reads resources, subscribes and receives updates', async () => {
    const { client } = await connect();
    const { resources } = await client.listResources();
    expect(resources.length).toBeGreaterThan(0);
    const first = resources[0]!;
    const read = await client.readResource({ uri: first.uri });
    expect(read.contents[0]?.uri).toBe(first.uri);

    const updated: string[] = [];
    let notify!: () => void;
    const gotUpdate = new Promise<void>((resolve) => (notify = resolve));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
      notify();
    });
    await client.subscribeResource({ uri: first.uri });
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    await gotUpdate;
    expect(updated).toContain(first.uri);
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    await client.unsubscribeResource({ uri: first.uri });
    await client.close();
  });

  it('lists prompts and gets one with arguments', async () => {
    const { client } = await connect();
    const { prompts } = await client.listPrompts();
    expect(prompts.length).toBeGreaterThan(0);
    const withArgs = prompts.find((p) => (p.arguments ?? []).some((a) => a.required));
    const simple = prompts.find((p) => (p.arguments ?? []).every((a) => !a.required))!;
    const got = await client.getPrompt({ name: simple.name, arguments: {} });
    expect(got.messages.length).toBeGreaterThan(0);
    if (withArgs) {
      const args = Object.fromEntries((withArgs.arguments ?? []).map((a) => [a.name, 'x']));
      await expect(client.getPrompt({ name: withArgs.name, arguments: args })).resolves.toHaveProperty('messages');
    }
    await client.close();
  });

  it('delivers logging notifications after logging/setLevel', async () => {
    const { client } = await connect();
    const lines: LoggingMessageNotification['params'][] = [];
    let notify!: () => void;
    const gotLog = new Promise<void>((resolve) => (notify = resolve));
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      lines.push(n.params);
      notify();
    });
    await client.setLoggingLevel('debug');
    await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
    await gotLog;
    expect(lines[0]?.level).toBeTypeOf('string');
    await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
    await client.close();
  });

  it('cancels a call mid-way and keeps the session usable', async () => {
    const { client } = await connect();
    const controller = new AbortController();
    const call = client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 5 } },
      undefined,
      { signal: controller.signal, onprogress: () => controller.abort('changed my mind') },
    );
    await expect(call).rejects.toThrow(/changed my mind|abort/i);
    const after = await client.callTool({ name: 'echo', arguments: { message: 'still here' } });
    expect(textOf(after)).toBe('Echo: still here');
    await client.close();
  });

  it('ends the session on DELETE so the next request gets 404', async () => {
    const { client, transport } = await connect();
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    const res = await fetch(gw.mcpUrl(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'GW_SESSION_NOT_FOUND' } } });
    await client.close();
  });
});
