/**
 * The upgrade surface (issue 34 item 1, third round): what an HTTP upgrade to WebSocket meets on
 * every path, written before @fastify/websocket's place in the app is changed, so that moving it
 * cannot change the answer; the routes that do not speak WebSocket then changed on purpose (see
 * below). Raw sockets (node:net), so the status line and the close are seen as
 * they are sent: a non-WebSocket path, an MCP POST path, a foreign Origin or Host, no credential
 * when gateway.auth is on, an unknown server; and the working upgrade as the control.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../../src/config/load.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { createTestLogger } from '../support/gateway.ts';

const KEY = 'alice-upgrade-key-0123456789abcdef';
const recorder = fileURLToPath(new URL('../fixtures/recorder-server.mjs', import.meta.url));
let gw: RunningGateway;
let port: number;

beforeAll(async () => {
  const config = parseConfig({
    mcpServers: { rec: { command: process.execPath, args: [recorder] } },
    gateway: { port: 0, auth: { apiKeys: [{ name: 'alice', key: KEY }] } },
  });
  gw = await startGateway(config, { logger: createTestLogger('warn', undefined) });
  port = Number(new URL(gw.url).port);
});
afterAll(async () => {
  await gw?.close();
});

interface Met {
  /** The status line's code, or 0 when the socket closed without one. */
  status: number;
  /** The socket was closed by the gateway within the wait. */
  closed: boolean;
  head: string;
  /** What followed the head (frames, or the HTTP body). */
  rest: string;
}

/** Sends an upgrade request and reads what comes back until the gateway closes or 4 s pass (its close timeout is 2 s). */
function upgrade(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Met> {
  const all: Record<string, string> = {
    host: `127.0.0.1:${port}`,
    connection: 'Upgrade',
    upgrade: 'websocket',
    'sec-websocket-version': '13',
    'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    'sec-websocket-protocol': 'mcp',
    authorization: `Bearer ${KEY}`,
    ...headers,
  };
  const lines = Object.entries(all).filter(([, v]) => v !== '').map(([k, v]) => `${k}: ${v}`);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      const at = text.indexOf('\r\n\r\n');
      resolve({ status: status === undefined ? 0 : Number(status), closed, head: at < 0 ? text : text.slice(0, at), rest: at < 0 ? '' : text.slice(at + 4) });
    };
    const timer = setTimeout(() => done(false), 4_000);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('close', () => done(true));
    socket.on('error', reject);
    socket.write(`${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
  });
}

describe('an upgrade meets', () => {
  it('101 on a WebSocket path with credentials (the control), and the socket stays open', async () => {
    for (const path of ['/ws', '/servers/rec/ws']) {
      const met = await upgrade(path);
      expect(met.status, met.head).toBe(101);
      expect(met.head.toLowerCase()).toContain('sec-websocket-protocol: mcp');
      expect(met.closed).toBe(false);
    }
  }, 20_000);

  it('no credential when gateway.auth is on: 401, closed', async () => {
    const met = await upgrade('/servers/rec/ws', { authorization: '' });
    expect(met.status, met.head).toBe(401);
    expect(met.closed).toBe(true);
  });

  it('a wrong credential: 401, closed', async () => {
    const met = await upgrade('/ws', { authorization: 'Bearer not-the-key-0000000000000000' });
    expect(met.status, met.head).toBe(401);
    expect(met.closed).toBe(true);
  });

  it('a foreign Origin: 403, closed', async () => {
    const met = await upgrade('/servers/rec/ws', { origin: 'http://evil.example' });
    expect(met.status, met.head).toBe(403);
    expect(met.closed).toBe(true);
  });

  it('a foreign Host (DNS rebinding): 403, closed', async () => {
    const met = await upgrade('/servers/rec/ws', { host: 'evil.example' });
    expect(met.status, met.head).toBe(403);
    expect(met.closed).toBe(true);
  });

  it.each(['/servers/nope/ws', '/servers/REC/ws', '/servers/rec%2F..%2Fx/ws', '/groups/nope/ws', '/virtual/nope/ws'])('an unknown endpoint %s: 404, closed', async (path) => {
    const met = await upgrade(path);
    expect(met.status, met.head).toBe(404);
    expect(met.closed).toBe(true);
  });

  /** The JSON-RPC error envelope's data.code in an HTTP answer's body. */
  const codeOf = (met: Met): unknown => (JSON.parse(met.rest) as { error?: { data?: { code?: unknown } } }).error?.data?.code;

  it.each(['/nowhere', '/servers/rec/nowhere', '/WS', '/servers/rec/ws/x', '/servers/rec/w%73', '/servers/rec/ws%2F'])('a path with no route, %s: 404 GW_ROUTE_NOT_FOUND, closed', async (path) => {
    const met = await upgrade(path);
    expect(met.status, met.head).toBe(404);
    expect(codeOf(met)).toBe('GW_ROUTE_NOT_FOUND');
    expect(met.closed).toBe(true);
    expect(met.head.toLowerCase()).not.toMatch(/sec-websocket|mcp-session-id|text\/event-stream/);
  });

  // Until the upgrade gate (src/http/upgrade-gate.ts), @fastify/websocket sent every upgrade through
  // the router: /healthz and /readyz answered 200 on the upgrade's socket, and the MCP GET routes
  // answered 101 with the mcp subprotocol and then a close frame, telling the client it had a
  // WebSocket where there is none. Now every route that does not speak WebSocket refuses the
  // upgrade before it runs, in plain HTTP, and the socket is closed.
  it.each(['/servers/rec/mcp', '/mcp', '/servers/rec/sse', '/sse', '/groups/g/mcp', '/virtual/v/sse', '/servers/rec/messages', '/healthz', '/readyz', '/servers/rec/mcp?x=/ws'])(
    'a route that is not WebSocket, %s: 400 GW_WEBSOCKET_NOT_SERVED, closed, no session',
    async (path) => {
      const met = await upgrade(path);
      expect(met.status, met.head).toBe(400);
      expect(codeOf(met)).toBe('GW_WEBSOCKET_NOT_SERVED');
      expect(met.closed).toBe(true);
      expect(met.head.toLowerCase()).not.toMatch(/sec-websocket|mcp-session-id|text\/event-stream/);
    },
  );

  it.each(['/servers/%zz/ws', '/servers/rec%ZZ/ws'])('a WebSocket path that is not valid percent-encoding, %s: 400, closed', async (path) => {
    const met = await upgrade(path);
    expect(met.status, met.head).toBe(400);
    expect(codeOf(met)).toBe('GW_INVALID_REQUEST');
    expect(met.closed).toBe(true);
  });

  it.each([
    ['/servers/rec/ws', 400],
    ['/mcp', 400],
  ])('an upgrade to another protocol (h2c) at %s: %i, closed, never 101', async (path, status) => {
    const met = await upgrade(path, { upgrade: 'h2c' });
    expect(met.status, met.head).toBe(status);
    expect(met.closed).toBe(true);
  });

  it('an upgrade by another method than GET to a WebSocket path: 400, closed', async () => {
    const met = await upgrade('/servers/rec/ws', {}, 'POST');
    expect(met.status, met.head).toBe(400);
    expect(codeOf(met)).toBe('GW_WEBSOCKET_NOT_SERVED');
    expect(met.closed).toBe(true);
  });
});
