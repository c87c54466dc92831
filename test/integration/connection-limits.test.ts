/**
 * Sockets a client holds without finishing a request, and connections beyond the caps: each has a
 * bounded cost and a documented answer, and the gateway keeps serving everyone else.
 */
import type { Socket } from 'node:net';
import type { GatewayConfig } from '../../src/config/types.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { openSocket, rawExchange } from '../support/raw-http.ts';
import { MCP_HEADERS, recorderServer, rpc } from '../support/recorder.ts';
import { openWs, wsUrl } from '../support/ws-client.ts';

const open: TestGateway[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(open.splice(0).map((gw) => gw.close()));
});

async function gateway(limits: Partial<GatewayConfig['limits']>): Promise<TestGateway> {
  const gw = await startTestGateway({ targets: { rec: recorderServer() }, limits });
  open.push(gw);
  return gw;
}

/** A request head with the Host a client of `gw` sends (the gateway's own name and port). */
const head = (gw: TestGateway, path: string, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: ${new URL(gw.url).host}\r\nContent-Type: application/json\r\nAccept: ${MCP_HEADERS.accept}\r\n${extra}`;

describe('request timeout', () => {
  it('a body that never reaches its Content-Length gets 408 with a JSON-RPC body and loses its socket', async () => {
    const gw = await gateway({ requestTimeoutMs: 500 });
    const answer = await rawExchange(new URL(gw.url), `${head(gw, '/mcp')}Content-Length: 1000\r\n\r\n{"jsonrpc":"2.0",`, 10_000);
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'GW_REQUEST_REFUSED', status: 408 } } });
  });

  it('chunked encoding that never ends gets 408 too', async () => {
    const gw = await gateway({ requestTimeoutMs: 500 });
    const answer = await rawExchange(new URL(gw.url), `${head(gw, '/mcp')}Transfer-Encoding: chunked\r\n\r\n5\r\n{"jso\r\n`, 10_000);
    expect(answer.status).toBe(408);
  });

  it('500 stalled bodies are all closed after the timeout, and a healthy client is served meanwhile', async () => {
    const gw = await gateway({ requestTimeoutMs: 1_000 });
    const url = new URL(gw.url);
    const stalled: Array<Promise<void>> = [];
    for (let i = 0; i < 500; i++) {
      const socket = await openSocket(url);
      sockets.push(socket);
      socket.on('error', () => undefined);
      socket.resume(); // read, or the server's answer and FIN are never seen
      socket.write(`${head(gw, '/mcp')}Content-Length: 100\r\n\r\n{`);
      stalled.push(new Promise((resolve) => socket.once('close', () => resolve())));
    }
    const healthy = await rpc.initialize(new URL('/mcp', gw.url));
    expect((await healthy.request({ jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(200);
    await Promise.all(stalled);
    expect(sockets.every((s) => s.destroyed || s.readableEnded)).toBe(true);
  }, 30_000);

  it('does not cut answers: an SSE stream and a WebSocket outlive the request timeout', async () => {
    const gw = await gateway({ requestTimeoutMs: 300 });
    const session = await rpc.initialize(new URL('/mcp', gw.url));
    const slow = await session.request({ jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'slow', arguments: { ms: 1_500 } } });
    expect(slow.status).toBe(200);
    expect(slow.json).toMatchObject({ id: 'slow', result: {} });
    const ws = await openWs(wsUrl(gw.url, '/ws'));
    ws.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    await ws.until(0);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    ws.send({ jsonrpc: '2.0', id: 'late', method: 'tools/call', params: { name: 'echo', arguments: { text: 'still open' } } });
    expect((await ws.until('late')).at(-1)).toMatchObject({ id: 'late', result: { content: [{ text: 'still open' }] } });
    ws.socket.close();
  });
});

describe('connection caps', () => {
  it('connections from one address beyond maxConnectionsPerAddress are closed at once; open ones keep working', async () => {
    const gw = await gateway({ maxConnectionsPerAddress: 5 });
    const url = new URL(gw.url);
    for (let i = 0; i < 5; i++) sockets.push(await openSocket(url));
    const extra = await openSocket(url);
    sockets.push(extra);
    await new Promise<void>((resolve) => extra.once('close', () => resolve()));
    // One of the five still answers.
    const first = sockets[0] as Socket;
    const answer = await new Promise<string>((resolve) => {
      first.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8')));
      first.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    // Once one closes, a new one is accepted.
    (sockets[1] as Socket).destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const health = await fetch(new URL('/healthz', gw.url));
    expect(health.status).toBe(200);
  });

  it('maxConnections caps the total the same way', async () => {
    const gw = await gateway({ maxConnections: 3 });
    const url = new URL(gw.url);
    for (let i = 0; i < 3; i++) sockets.push(await openSocket(url));
    const extra = await openSocket(url);
    sockets.push(extra);
    await new Promise<void>((resolve) => extra.once('close', () => resolve()));
    expect(extra.destroyed).toBe(true);
  });
});

describe('requests the HTTP parser refuses', () => {
  it('headers too large -> 431 with a JSON-RPC body', async () => {
    const gw = await gateway({});
    const answer = await rawExchange(new URL(gw.url), `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer.status).toBe(431);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: -32600, data: { code: 'GW_REQUEST_REFUSED', status: 431 } } });
  });

  it('a URL too long -> 431 or 414 with a JSON-RPC body', async () => {
    const gw = await gateway({});
    const answer = await rawExchange(new URL(gw.url), `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect([414, 431]).toContain(answer.status);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { data: { code: 'GW_REQUEST_REFUSED' } } });
  });

  it('malformed HTTP -> 400 with a JSON-RPC body', async () => {
    const gw = await gateway({});
    const answer = await rawExchange(new URL(gw.url), 'NOT HTTP AT ALL\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: -32600, data: { code: 'GW_INVALID_REQUEST' } } });
  });
});
