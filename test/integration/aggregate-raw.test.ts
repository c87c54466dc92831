/**
 * Aggregate endpoint over raw HTTP: what the SDK client does not let a test choose (protocol
 * versions, batches, malformed requests), and what reaches the upstream (its own initialize).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/main.ts';
import { colliderServer, startAggregateGateway } from '../support/aggregate.ts';
import { recorderServer, rpc, textOf } from '../support/recorder.ts';

let gw: RunningGateway;
let url: URL;

beforeAll(async () => {
  gw = await startAggregateGateway({ targets: { rec: recorderServer(), col: colliderServer() } });
  url = new URL('/mcp', gw.url);
});
afterAll(async () => {
  await gw?.close();
});

describe('aggregate endpoint, raw', () => {
  it('negotiates the client\'s version when supported, passes it and the clientInfo to each upstream, and allows 2025-03-26 batches', async () => {
    const session = await rpc.initialize(url, '2025-03-26');
    const history = await session.request({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'rec__history' } });
    const messages = JSON.parse(textOf(history.json.result)) as Array<{ method?: string; params?: Record<string, unknown> }>;
    const init = messages.find((m) => m.method === 'initialize');
    expect(init?.params).toMatchObject({ protocolVersion: '2025-03-26', clientInfo: { name: 'raw', version: '1' } });
    expect(messages.some((m) => m.method === 'notifications/initialized')).toBe(true);

    const batch = await session.postRaw(
      JSON.stringify([
        { jsonrpc: '2.0', id: 'a', method: 'ping' },
        { jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'col__echo', arguments: { message: 'in a batch' } } },
      ]),
    );
    expect(batch.status).toBe(200);
    const byId = new Map(batch.events.map((e) => [e.id, e]));
    expect(byId.get('a')?.result).toEqual({});
    expect(textOf(byId.get('b')?.result)).toBe('collider echo: in a batch');
    expect(await session.delete()).toBe(200);
  });

  it('answers an unsupported requested version with its latest', async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '1999-01-01', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    const body = (await response.json()) as { result: { protocolVersion: string; serverInfo: { name: string } } };
    expect(body.result.protocolVersion).toBe('2025-11-25');
    expect(body.result.serverInfo.name).toBe('switchboard');
  });

  it('refuses unknown methods (-32601), missing routing fields and bad cursors (-32602), each with its GW code', async () => {
    const session = await rpc.initialize(url);
    const unknown = await session.request({ jsonrpc: '2.0', id: 1, method: 'tasks/list' });
    expect(unknown.json.error).toMatchObject({ code: -32601, message: 'Method not found: tasks/list', data: { code: 'GW_METHOD_NOT_FOUND' } });
    const noName = await session.request({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: {} });
    expect(noName.json.error).toMatchObject({ code: -32602, data: { code: 'GW_INVALID_PARAMS' } });
    const badRef = await session.request({ jsonrpc: '2.0', id: 3, method: 'completion/complete', params: { ref: { type: 'ref/other' } } });
    expect(badRef.json.error).toMatchObject({ code: -32602, data: { code: 'GW_INVALID_PARAMS' } });
    const noCursor = await session.request({ jsonrpc: '2.0', id: 4, method: 'resources/list', params: { cursor: 42 } });
    expect(noCursor.json.error).toMatchObject({ code: -32602, data: { code: 'GW_INVALID_CURSOR' } });
    // Still serving afterwards.
    const echo = await session.request({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'rec__echo', arguments: { text: 'fine' } } });
    expect(textOf(echo.json.result)).toBe('fine');
    await session.delete();
  });
});
