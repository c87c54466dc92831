/**
 * Test helpers around the recorder fixture, and a raw Streamable HTTP client (plain fetch) for
 * tests that must see status codes, headers and exact bytes the SDK client hides.
 */
import type { TestTarget } from './gateway.ts';
import { fileURLToPath } from 'node:url';

export interface Recorded {
  id?: unknown;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: unknown;
}

export function recorderServer(): TestTarget {
  return { command: process.execPath, args: [fileURLToPath(new URL('../fixtures/recorder-server.mjs', import.meta.url))] };
}

export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
}

/** Text content of a tools/call result. */
export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> } | undefined)?.content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

export interface RawAnswer {
  status: number;
  contentType: string;
  headers: Headers;
  text: string;
  /** Every JSON-RPC message in the body (SSE events, or the JSON body). */
  events: Recorded[];
  /** The last message (the final answer), or {} when there was none. */
  json: Recorded & Record<string, unknown>;
}

export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

export function parseBody(text: string, contentType: string): Recorded[] {
  if (contentType.includes('text/event-stream')) {
    const out: Recorded[] = [];
    for (const block of text.split('\n\n')) {
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('\n');
      if (data) out.push(JSON.parse(data) as Recorded);
    }
    return out;
  }
  if (!text) return [];
  const value = JSON.parse(text) as Recorded | Recorded[];
  return Array.isArray(value) ? value : [value];
}

export async function post(url: URL, body: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const res = await fetch(url, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body });
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  const events = res.status === 202 ? [] : parseBody(text, contentType);
  return { status: res.status, contentType, headers: res.headers, text, events, json: (events.at(-1) ?? {}) as RawAnswer['json'] };
}

export interface RawSession {
  id: string;
  protocolVersion: string;
  request(message: Record<string, unknown>, headers?: Record<string, string>): Promise<RawAnswer>;
  postRaw(body: string, headers?: Record<string, string>): Promise<RawAnswer>;
  history(): Promise<Recorded[]>;
  delete(): Promise<number>;
}

export const rpc = {
  async initialize(url: URL, protocolVersion = '2025-11-25', headers: Record<string, string> = {}): Promise<RawSession> {
    const init = await post(
      url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
      headers,
    );
    const id = init.headers.get('mcp-session-id');
    if (init.status !== 200 || !id) throw new Error(`initialize failed: ${init.status} ${init.text}`);
    const common = { 'mcp-session-id': id, 'mcp-protocol-version': protocolVersion, ...headers };
    await post(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), common);
    const session: RawSession = {
      id,
      protocolVersion,
      request: (message, extra = {}) => post(url, JSON.stringify(message), { ...common, ...extra }),
      postRaw: (body, extra = {}) => post(url, body, { ...common, ...extra }),
      async history() {
        const answer = await session.request({ jsonrpc: '2.0', id: `history-${Date.now()}`, method: 'tools/call', params: { name: 'history' } });
        return JSON.parse(textOf(answer.json.result)) as Recorded[];
      },
      async delete() {
        const res = await fetch(url, { method: 'DELETE', headers: common });
        await res.arrayBuffer();
        return res.status;
      },
    };
    return session;
  },

  raw(url: URL, sessionId: string, message: Record<string, unknown>): Promise<RawAnswer> {
    return post(url, JSON.stringify(message), { 'mcp-session-id': sessionId });
  },
};
