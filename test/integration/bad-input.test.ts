/**
 * Bad input over real HTTP: each case gets the status and JSON-RPC error of PROTOCOL.md, and a
 * healthy session on the same gateway keeps working throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { MCP_HEADERS, post, recorderServer, rpc, type RawSession } from '../support/recorder.ts';

let gw: TestGateway;
let healthy: RawSession;

beforeAll(async () => {
  gw = await startTestGateway({ targets: { rec: recorderServer() }, limits: { maxBodyBytes: 64 * 1024, maxSessions: 6 } });
  healthy = await rpc.initialize(gw.mcpUrl());
});
afterAll(async () => {
  await gw?.close();
});

async function expectHealthy() {
  const answer = await healthy.request({ jsonrpc: '2.0', id: 'ok', method: 'tools/call', params: { name: 'echo', arguments: { text: 'fine' } } });
  expect(answer.json).toMatchObject({ id: 'ok', result: { content: [{ text: 'fine' }] } });
}

function errorOf(code: number, gw: string) {
  return { jsonrpc: '2.0', id: null, error: { code, data: { code: gw } } };
}

describe('malformed bodies', () => {
  const cases: Array<[string, string, number, number, string]> = [
    ['malformed JSON', '{"jsonrpc":"2.0",', 400, -32700, 'GW_PARSE_ERROR'],
    ['empty body', '', 400, -32700, 'GW_PARSE_ERROR'],
    ['a number', '42', 400, -32600, 'GW_INVALID_REQUEST'],
    ['a string', '"hello"', 400, -32600, 'GW_INVALID_REQUEST'],
    ['null', 'null', 400, -32600, 'GW_INVALID_REQUEST'],
    ['an empty batch', '[]', 400, -32600, 'GW_INVALID_REQUEST'],
    ['no jsonrpc field', '{"id":1,"method":"ping"}', 400, -32600, 'GW_INVALID_REQUEST'],
    ['wrong jsonrpc version', '{"jsonrpc":"1.0","id":1,"method":"ping"}', 400, -32600, 'GW_INVALID_REQUEST'],
    ['no method and no id', '{"jsonrpc":"2.0"}', 400, -32600, 'GW_INVALID_REQUEST'],
    ['a null id', '{"jsonrpc":"2.0","id":null,"method":"ping"}', 400, -32600, 'GW_INVALID_REQUEST'],
    ['params not an object', '{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}', 400, -32600, 'GW_INVALID_REQUEST'],
  ];
  for (const [name, body, status, code, gwCode] of cases) {
    it(`${name} -> ${status} ${code}`, async () => {
      const answer = await post(gw.mcpUrl(), body, { 'mcp-session-id': healthy.id });
      expect(answer.status).toBe(status);
      expect(JSON.parse(answer.text)).toMatchObject(errorOf(code, gwCode));
      await expectHealthy();
    });
  }

  it('an oversize body -> 413 -32600', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(100 * 1024) } } });
    const answer = await post(gw.mcpUrl(), big, { 'mcp-session-id': healthy.id });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.text)).toMatchObject(errorOf(-32600, 'GW_BODY_TOO_LARGE'));
    await expectHealthy();
  });
});

describe('headers', () => {
  it('wrong Accept -> 406', async () => {
    const res = await fetch(gw.mcpUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-session-id': healthy.id },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(res.status).toBe(406);
    expect(await res.json()).toMatchObject(errorOf(-32600, 'GW_NOT_ACCEPTABLE'));
  });

  it('wrong Content-Type -> 415', async () => {
    const res = await fetch(gw.mcpUrl(), {
      method: 'POST',
      headers: { 'content-type': 'text/plain', accept: MCP_HEADERS.accept, 'mcp-session-id': healthy.id },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject(errorOf(-32600, 'GW_UNSUPPORTED_MEDIA_TYPE'));
  });

  it('GET without text/event-stream in Accept -> 406', async () => {
    const res = await fetch(gw.mcpUrl(), { headers: { accept: 'application/json', 'mcp-session-id': healthy.id } });
    expect(res.status).toBe(406);
  });

  it('missing session header -> 400, unknown session -> 404', async () => {
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const missing = await post(gw.mcpUrl(), ping);
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.text)).toMatchObject(errorOf(-32600, 'GW_SESSION_REQUIRED'));
    const unknown = await post(gw.mcpUrl(), ping, { 'mcp-session-id': 'no-such-session' });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.text)).toMatchObject(errorOf(-32600, 'GW_SESSION_NOT_FOUND'));
    const getUnknown = await fetch(gw.mcpUrl(), { headers: { accept: 'text/event-stream', 'mcp-session-id': 'nope' } });
    expect(getUnknown.status).toBe(404);
    const deleteUnknown = await fetch(gw.mcpUrl(), { method: 'DELETE', headers: { 'mcp-session-id': 'nope' } });
    expect(deleteUnknown.status).toBe(404);
    await expectHealthy();
  });

  it('unsupported MCP-Protocol-Version -> 400 naming the supported ones', async () => {
    const answer = await healthy.request({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-protocol-version': '1999-01-01' });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({
      error: { code: -32600, data: { code: 'GW_UNSUPPORTED_PROTOCOL_VERSION', supported: expect.arrayContaining(['2025-11-25']) } },
    });
  });

  it('a foreign Origin -> 403, a loopback Origin is fine', async () => {
    const bad = await healthy.request({ jsonrpc: '2.0', id: 1, method: 'ping' }, { origin: 'https://evil.example' });
    expect(bad.status).toBe(403);
    expect(JSON.parse(bad.text)).toMatchObject(errorOf(-32600, 'GW_FORBIDDEN_ORIGIN'));
    const good = await healthy.request({ jsonrpc: '2.0', id: 1, method: 'ping' }, { origin: 'http://localhost:3000' });
    expect(good.status).toBe(200);
  });

  it('a foreign Host on a loopback listener -> 403 (DNS rebinding)', async () => {
    // fetch will not let us set Host, so speak HTTP/1.1 by hand.
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(gw.mcpUrl(), { method: 'POST', headers: { ...MCP_HEADERS, host: 'evil.example:80' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('{"jsonrpc":"2.0","id":1,"method":"ping"}');
    });
    expect(status).toBe(403);
  });

  it('unknown route -> 404 envelope, other method on the endpoint -> 405', async () => {
    const res = await fetch(new URL('/nope', gw.url));
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject(errorOf(-32600, 'GW_ROUTE_NOT_FOUND'));
    const put = await fetch(gw.mcpUrl(), { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toContain('POST');
  });
});

describe('batches and sessions', () => {
  it('a batch on a 2025-11-25 session -> 400', async () => {
    const answer = await healthy.postRaw('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject(errorOf(-32600, 'GW_BATCH_NOT_ALLOWED'));
  });

  it('a batch on a 2025-03-26 session is answered as one JSON array', async () => {
    const old = await rpc.initialize(gw.mcpUrl(), '2025-03-26');
    const answer = await old.postRaw(
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
        { jsonrpc: '2.0', id: 'two', method: 'tools/call', params: { name: 'echo', arguments: { text: 'b' } } },
      ]),
    );
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.text) as Array<{ id: unknown }>;
    expect(body.map((m) => m.id).sort()).toEqual([1, 'two']);
    await old.delete();
  });

  it('initialize inside a batch, or twice on a session -> 400', async () => {
    const init = { jsonrpc: '2.0', id: 9, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const inBatch = await post(gw.mcpUrl(), JSON.stringify([init]));
    expect(inBatch.status).toBe(400);
    const again = await healthy.request(init);
    expect(again.status).toBe(400);
    expect(JSON.parse(again.text)).toMatchObject(errorOf(-32600, 'GW_ALREADY_INITIALIZED'));
    await expectHealthy();
  });

  it('a duplicate in-flight id in one session is refused for that request only', async () => {
    const slow = healthy.request({ jsonrpc: '2.0', id: 'dup', method: 'tools/call', params: { name: 'slow', arguments: { ms: 300 } } });
    await new Promise((r) => setTimeout(r, 50));
    const dup = await healthy.request({ jsonrpc: '2.0', id: 'dup', method: 'ping' });
    expect(dup.json).toMatchObject({ id: 'dup', error: { code: -32600 } });
    expect((await slow).json).toMatchObject({ id: 'dup', result: { content: [{ text: 'done' }] } });
  });

  it('past maxSessions with every session in use -> 503 GW_SESSION_LIMIT, and a slot frees on DELETE', async () => {
    // An idle session would be ended to make room (session/limits.ts): each one holds a GET stream.
    const streams: AbortController[] = [];
    const holdStream = async (id: string) => {
      const controller = new AbortController();
      const res = await fetch(gw.mcpUrl(), {
        headers: { accept: 'text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' },
        signal: controller.signal,
      });
      expect(res.status).toBe(200);
      streams.push(controller);
    };
    await holdStream(healthy.id);
    const extra: string[] = [];
    let refused: Awaited<ReturnType<typeof post>> | undefined;
    for (let i = 0; i < 10 && refused === undefined; i++) {
      const answer = await post(
        gw.mcpUrl(),
        JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'n', version: '1' } } }),
      );
      if (answer.status === 503) refused = answer;
      else {
        const id = answer.headers.get('mcp-session-id')!;
        extra.push(id);
        await holdStream(id);
      }
    }
    expect(refused).toBeDefined();
    expect(JSON.parse(refused!.text)).toMatchObject({ error: { code: -32603, data: { code: 'GW_SESSION_LIMIT', limit: 6, kind: 'sessions' } } });
    for (const controller of streams) controller.abort();
    for (const id of extra) await fetch(gw.mcpUrl(), { method: 'DELETE', headers: { 'mcp-session-id': id } });
    const again = await rpc.initialize(gw.mcpUrl());
    await again.delete();
    await expectHealthy();
  });

  it('notifications and responses get 202 with no body', async () => {
    const answer = await healthy.request({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    expect(answer.status).toBe(202);
    expect(answer.text).toBe('');
    const orphan = await healthy.request({ jsonrpc: '2.0', id: 12345, result: {} });
    expect(orphan.status).toBe(202);
  });
});
