/**
 * An upstream that answers a POST with `application/json` holding several JSON-RPC messages, one
 * per line (a progress notification, then the answer), as the conformance repo's reference server
 * does: the gateway reads them in order for a 2026 client and for a 2025 client, instead of
 * failing the call as "not JSON". A body that is neither stays a clear upstream error.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { errorOf, modern, resultOf } from '../support/modern.ts';

const TOOLS = [
  { name: 'lines', inputSchema: { type: 'object' } },
  { name: 'garbage', inputSchema: { type: 'object' } },
];

function answer(res: ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(text);
}

/** A minimal 2026-only upstream: discover, tools/list, and the two tools. */
function handle(req: IncomingMessage, res: ServerResponse): void {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    const msg = JSON.parse(body) as { id: number; method: string; params?: { name?: string; _meta?: Record<string, unknown> } };
    const done = (result: Record<string, unknown>) => answer(res, JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { ...result, resultType: 'complete' } }));
    if (msg.method === 'server/discover') return done({ supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'lines', version: '1.0.0' } } });
    if (msg.method === 'tools/list') return done({ tools: TOOLS });
    if (msg.method === 'tools/call' && msg.params?.name === 'lines') {
      const token = msg.params._meta?.progressToken ?? 'none';
      const progress = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 50, total: 100 } });
      const result = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'streamed as lines' }], resultType: 'complete' } });
      return answer(res, `${progress}\n${result}`);
    }
    if (msg.method === 'tools/call') return answer(res, '{"jsonrpc":"2.0",\n"id": oops}\n{}');
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } }));
  });
}

let upstream: Server;
let gw: TestGateway;

beforeAll(async () => {
  upstream = createServer(handle);
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;
  gw = await startTestGateway({ targets: { lines: { type: 'http', url, protocol: '2026' } } });
});

afterAll(async () => {
  await gw?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('an upstream JSON body with one message per line', () => {
  it('reaches a 2026 client as the answer', async () => {
    const res = await modern(gw.mcpUrl(), 'tools/call', { name: 'lines', arguments: {} });
    expect(res.status).toBe(200);
    expect(resultOf(res).content).toEqual([{ type: 'text', text: 'streamed as lines' }]);
  });

  it('reaches a 2025 client with its progress first', async () => {
    const client = new Client({ name: 'lines-2025', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(gw.mcpUrl()));
    try {
      const progress: number[] = [];
      const result = await client.callTool({ name: 'lines', arguments: {} }, undefined, { onprogress: (p) => progress.push(p.progress) });
      expect(result.content).toEqual([{ type: 'text', text: 'streamed as lines' }]);
      expect(progress).toEqual([50]);
    } finally {
      await client.close();
    }
  });

  it('a body that is not JSON lines either stays an upstream error', async () => {
    const res = await modern(gw.mcpUrl(), 'tools/call', { name: 'garbage', arguments: {} });
    expect(errorOf(res).data?.code).toBe('GW_UPSTREAM_HTTP_ERROR');
  });
});
