/**
 * The downstream transports the contract suite runs over, each with the real SDK client transport
 * a client of that kind uses, and a raw way to send bytes the SDK would never send (bad input).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { MCP_HEADERS } from '../support/recorder.ts';
import { openLegacyStream } from '../support/legacy-sse.ts';

export type ClientOptions = ConstructorParameters<typeof Client>[1];

export interface DownstreamRow {
  name: string;
  /** An initialized SDK client on `target` of the gateway at `base`. */
  connect(base: string, target: string, options?: ClientOptions): Promise<Client>;
  /**
   * Sends `body` as one message the way this transport carries it, on a fresh session where one is
   * needed, and returns the error envelope the gateway answered with.
   */
  sendRaw(base: string, target: string, body: string): Promise<unknown>;
}

async function connectWith(transport: Transport, options: ClientOptions): Promise<Client> {
  const client = new Client({ name: 'contract', version: '1.0.0' }, options);
  await client.connect(transport);
  return client;
}

const wsUrl = (base: string, target: string) => new URL(`/servers/${target}/ws`, base.replace(/^http/, 'ws'));

/** The next text frame of a raw WebSocket, as JSON. */
function nextFrame(socket: WebSocket): Promise<unknown> {
  return new Promise((resolve, reject) => {
    socket.addEventListener('message', (event) => resolve(JSON.parse(String(event.data))), { once: true });
    socket.addEventListener('close', (event) => reject(new Error(`closed ${event.code}`)), { once: true });
  });
}

export const DOWNSTREAMS: DownstreamRow[] = [
  {
    name: 'streamable-http',
    connect: (base, target, options = {}) =>
      connectWith(new StreamableHTTPClientTransport(new URL(`/servers/${target}/mcp`, base)), options),
    async sendRaw(base, target, body) {
      const res = await fetch(new URL(`/servers/${target}/mcp`, base), { method: 'POST', headers: MCP_HEADERS, body });
      return { status: res.status, envelope: await res.json() };
    },
  },
  {
    name: 'websocket',
    connect: (base, target, options = {}) => connectWith(new WebSocketClientTransport(wsUrl(base, target)), options),
    async sendRaw(base, target, body) {
      const socket = new WebSocket(wsUrl(base, target), 'mcp');
      await new Promise((resolve, reject) => {
        socket.onopen = resolve;
        socket.onerror = reject;
      });
      const answer = nextFrame(socket);
      socket.send(body);
      const envelope = await answer;
      // The socket survives the bad frame: a ping still gets its (pre-initialize) answer.
      const next = nextFrame(socket);
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'ping' }));
      const after = await next;
      socket.close();
      return { status: socket.protocol === 'mcp' ? 101 : 0, envelope, after };
    },
  },
  {
    name: 'legacy-sse',
    connect: (base, target, options = {}) => connectWith(new SSEClientTransport(new URL(`/servers/${target}/sse`, base)), options),
    async sendRaw(base, target, body) {
      const stream = await openLegacyStream(new URL(`/servers/${target}/sse`, base));
      try {
        const res = await fetch(stream.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        return { status: res.status, envelope: await res.json() };
      } finally {
        stream.close();
      }
    },
  },
];
