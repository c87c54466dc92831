/**
 * Helpers of the pinning tests: a gateway from a real config file (pins file beside it) over the
 * rug-pull fixture, and one client per downstream path with the same two verbs (list the tools,
 * call one), so that a test asserts the same thing on every path.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { loadConfigFile } from '../../src/config/load.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { createTestLogger } from './gateway.ts';
import { openLegacyStream, type LegacyStream } from './legacy-sse.ts';
import { errorOf as modernError, modern, resultOf } from './modern.ts';
import { openWs, initializeWs, wsUrl, type WsPeer } from './ws-client.ts';
import { fileURLToPath } from 'node:url';

export const RUGPULL = fileURLToPath(new URL('../fixtures/rugpull-server.mjs', import.meta.url));

export interface Tool {
  name: string;
  description?: string;
  annotations?: Record<string, unknown>;
}
export type CallOutcome = { text: string } | { error: { code: number; message: string; data?: Record<string, unknown> } };

/** One downstream path: its tools as listed, and a call. */
export interface PathClient {
  readonly label: string;
  /** The tool names this path shows for the fixture's `echo` (prefixed on aggregates). */
  readonly echo: string;
  list(): Promise<Tool[]>;
  call(name: string, args: Record<string, unknown>): Promise<CallOutcome>;
  close(): Promise<void>;
}

export interface PinningGateway {
  gateway: RunningGateway;
  lines: string[];
}

export async function startFromFile(configPath: string): Promise<PinningGateway> {
  const config = await loadConfigFile(configPath, { env: {} });
  const lines: string[] = [];
  const gateway = await startGateway(config, { logger: createTestLogger('info', lines), env: {} });
  return { gateway, lines };
}

const textOf = (result: unknown) => ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? '').join('');

export async function sdkPath(gateway: RunningGateway, path: string, echo: string): Promise<PathClient> {
  const client = new Client({ name: 'pinning-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, gateway.url)));
  return {
    label: `SDK ${path}`,
    echo,
    list: async () => (await client.listTools()).tools as Tool[],
    async call(name, args) {
      try {
        return { text: textOf(await client.callTool({ name, arguments: args })) };
      } catch (err) {
        if (err instanceof McpError) return { error: { code: err.code, message: err.message, data: err.data as Record<string, unknown> } };
        throw err;
      }
    },
    close: () => client.close(),
  };
}

let nextId = 1;
const outcomeOf = (message: Record<string, unknown>): CallOutcome =>
  'error' in message ? { error: message.error as { code: number; message: string; data?: Record<string, unknown> } } : { text: textOf(message.result) };

export async function wsPath(gateway: RunningGateway, path: string, echo: string): Promise<PathClient> {
  const peer: WsPeer = await openWs(wsUrl(gateway.url, path));
  await initializeWs(peer);
  const ask = async (method: string, params: Record<string, unknown>) => {
    const id = nextId++;
    peer.send({ jsonrpc: '2.0', id, method, params });
    return (await peer.until(id)).at(-1) as Record<string, unknown>;
  };
  return {
    label: `WebSocket ${path}`,
    echo,
    list: async () => ((await ask('tools/list', {})).result as { tools: Tool[] }).tools,
    call: async (name, args) => outcomeOf(await ask('tools/call', { name, arguments: args })),
    async close() {
      peer.socket.close();
      await peer.closed;
    },
  };
}

export async function ssePath(gateway: RunningGateway, path: string, echo: string): Promise<PathClient> {
  const stream: LegacyStream = await openLegacyStream(new URL(path, gateway.url));
  const ask = async (method: string, params: Record<string, unknown>) => {
    const id = nextId++;
    await stream.post({ jsonrpc: '2.0', id, method, params });
    for (;;) {
      const message = await stream.nextMessage();
      if (message.id === id) return message;
    }
  };
  await ask('initialize', { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } });
  await stream.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return {
    label: `legacy SSE ${path}`,
    echo,
    list: async () => ((await ask('tools/list', {})).result as { tools: Tool[] }).tools,
    call: async (name, args) => outcomeOf(await ask('tools/call', { name, arguments: args })),
    close: async () => stream.close(),
  };
}

/** Stateless 2026-07-28 requests (each one served on a session the gateway holds). */
export function modernPath(gateway: RunningGateway, path: string, echo: string): PathClient {
  const url = new URL(path, gateway.url);
  return {
    label: `2026 ${path}`,
    echo,
    list: async () => (resultOf(await modern(url, 'tools/list', {}, { id: nextId++ })).tools as Tool[]),
    async call(name, args) {
      const answer = await modern(url, 'tools/call', { name, arguments: args }, { id: nextId++ });
      return answer.json.error === undefined ? { text: textOf(resultOf(answer)) } : { error: modernError(answer) };
    },
    close: async () => undefined,
  };
}

/** GET or POST the admin API of pinning. */
export async function admin(gateway: RunningGateway, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(new URL(path, gateway.url), body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

/** Polls `check` (the gateway learns of a change through the upstream's list_changed) until it holds; a generous deadline. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The pending change of `echo` on `target` whose dangers include `danger` (or any, when undefined), once the gateway has it. */
export function pendingEcho(gateway: RunningGateway, target: string, test: (change: any) => boolean = () => true): Promise<any> {
  return eventually(`a pending change of ${target}/echo`, async () => {
    const { json } = await admin(gateway, '/admin/pins');
    return (json.pending as any[]).find((c) => c.target === target && c.key === 'echo' && test(c));
  });
}
