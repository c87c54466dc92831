/**
 * A caller the gateway cannot exchange a token for (issue 30, item 12): an API-key caller (or an
 * anonymous one) on a remote target with `tokenExchange` gets GW_CREDENTIAL_NOT_EXCHANGEABLE,
 * which says that its credential cannot be exchanged, not GW_TARGET_UNAVAILABLE ("the server is
 * down"); nothing reaches the token endpoint (a counting HTTP server) nor the upstream. Every path:
 * the server path, /mcp and a group in 2025 sessions, WebSocket, and 2026 requests; a JWT-less caller does not
 * count as a failure of the target (a second round is judged alike).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../src/config/load.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { createTestLogger } from '../support/gateway.ts';
import { errorOf, modern } from '../support/modern.ts';
import { openWs, wsUrl } from '../support/ws-client.ts';

const KEY = 'ci-key-0123456789abcdef';
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'api-key', version: '1' } } };

let dir: string;
let tokenEndpoint: Server;
let tokenRequests = 0;
let upstream: HttpFixture;
let gw: RunningGateway;
const lines: string[] = [];

/** A 2025 session on `path` as `authorization`: the answers of initialize and of one tools/call. */
async function session2025(path: string, authorization: Record<string, string>, tool: string): Promise<Array<Record<string, any>>> {
  const url = new URL(path, gw.url);
  const opened = await fetch(url, { method: 'POST', headers: { ...HEADERS, ...authorization }, body: JSON.stringify(INIT) });
  const init = (await opened.json()) as Record<string, any>;
  const id = opened.headers.get('mcp-session-id');
  if (id === null) return [init];
  const post = (body: unknown) => fetch(url, { method: 'POST', headers: { ...HEADERS, ...authorization, 'mcp-session-id': id }, body: JSON.stringify(body) });
  try {
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text();
    const call = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } });
    return [init, (await call.json()) as Record<string, any>];
  } finally {
    await fetch(url, { method: 'DELETE', headers: { ...authorization, 'mcp-session-id': id } });
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-exchange-key-'));
  tokenEndpoint = createServer((req, res) => {
    tokenRequests++;
    req.resume();
    res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_request"}');
  });
  await new Promise<void>((resolve) => tokenEndpoint.listen(0, '127.0.0.1', resolve));
  upstream = await startHttpFixture({ getStream: false });
  const config = join(dir, 'switchboard.json');
  const exchange = { tokenEndpoint: `http://127.0.0.1:${(tokenEndpoint.address() as AddressInfo).port}/token`, clientId: 'gateway', clientSecret: 'gateway-secret-0123456789' };
  await writeFile(
    config,
    JSON.stringify({
      mcpServers: { remote: { type: 'http', url: upstream.url, tokenExchange: exchange } },
      gateway: { port: 0, auth: { apiKeys: [{ name: 'ci', key: KEY }] }, groups: { all: { servers: ['remote'] } } },
    }),
  );
  gw = await startGateway(await loadConfigFile(config, { env: {} }), { logger: createTestLogger('info', lines), env: {} });
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await new Promise((resolve) => tokenEndpoint?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

const expectNotExchangeable = (error: Record<string, any> | undefined, label: string) => {
  expect(error?.data?.code, label).toBe('GW_CREDENTIAL_NOT_EXCHANGEABLE');
  expect(error?.data?.target, label).toBe('remote');
  expect(error?.message, label).toMatch(/API key cannot be exchanged/);
};

describe('an API-key caller on a token-exchange target', () => {
  it('gets GW_CREDENTIAL_NOT_EXCHANGEABLE on every path, and nothing reaches the token endpoint or the upstream', async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    for (let round = 0; round < 2; round++) {
      // The server path: initialize is the first request that needs the upstream.
      const [init] = await session2025('/servers/remote/mcp', auth, 'echo');
      expectNotExchangeable(init?.error, `server path, round ${round}`);
      // /mcp (one server: served as that server) and the aggregate of a group: whichever request first needs the target.
      for (const [path, tool] of [
        ['/mcp', 'echo'],
        ['/groups/all/mcp', 'remote__echo'],
      ] as const) {
        const [opened, call] = await session2025(path, auth, tool);
        expectNotExchangeable(opened?.error ?? call?.error, `${path}, round ${round}`);
      }
      const answer = await modern(new URL('/servers/remote/mcp', gw.url), 'tools/call', { name: 'echo', arguments: {} }, { headers: auth });
      expectNotExchangeable(errorOf(answer), `2026, round ${round}`);
      expect(answer.status).toBe(403);
      // WebSocket, the key as its bearer subprotocol: initialize carries the error.
      const peer = await openWs(wsUrl(gw.url, '/servers/remote/ws'), ['mcp', `bearer.${KEY}`]);
      peer.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INIT.params });
      const [ws] = (await peer.until('init')).slice(-1) as Array<Record<string, any>>;
      expectNotExchangeable(ws?.error, `WebSocket, round ${round}`);
      peer.socket.close();
      await peer.closed;
    }
    expect(tokenRequests).toBe(0);
    expect(upstream.seen.filter((r) => r.method === 'POST')).toHaveLength(0);
    expect(lines.join('\n')).not.toContain(KEY);
    expect(lines.some((l) => l.includes('GW_TARGET_UNAVAILABLE'))).toBe(false);
  });
});
