/**
 * A raw 2026-07-28 client (plain fetch) for tests that must see statuses, headers and exact frames:
 * every request carries the per-request envelope and the standard headers, each overridable.
 */
import { MCP_HEADERS, parseBody, type RawAnswer } from './recorder.ts';

export const MODERN = '2026-07-28';

export interface ModernCall {
  /** `_meta` keys of the envelope, merged over the defaults (undefined values remove a key). */
  meta?: Record<string, unknown>;
  /** Headers merged over the standard ones (undefined values remove one). */
  headers?: Record<string, string | undefined>;
  id?: unknown;
  /** Aborts the request (closing the response stream). */
  signal?: AbortSignal;
}

/** The default envelope: this revision, no client capabilities, a clientInfo. */
export function envelope(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const meta: Record<string, unknown> = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1.0.0' },
  };
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete meta[key];
    else meta[key] = value;
  }
  return meta;
}

/** The standard headers SEP-2243 asks for this request. */
export function standardHeaders(method: string, params: Record<string, unknown>): Record<string, string> {
  const headers: Record<string, string> = { ...MCP_HEADERS, 'mcp-protocol-version': MODERN, 'mcp-method': method };
  const name = method === 'resources/read' ? params.uri : method === 'tools/call' || method === 'prompts/get' ? params.name : undefined;
  if (typeof name === 'string') headers['mcp-name'] = name;
  return headers;
}

/** POSTs one 2026 request to `url` and reads the whole answer (JSON, or every SSE event). */
export async function modern(url: URL, method: string, params: Record<string, unknown> = {}, call: ModernCall = {}): Promise<RawAnswer> {
  const withMeta = { ...params, _meta: { ...envelope(call.meta), ...((params._meta as Record<string, unknown> | undefined) ?? {}) } };
  const headers: Record<string, string> = standardHeaders(method, params);
  for (const [key, value] of Object.entries(call.headers ?? {})) {
    if (value === undefined) delete headers[key];
    else headers[key] = value;
  }
  const body = JSON.stringify({ jsonrpc: '2.0', id: call.id ?? 1, method, params: withMeta });
  const res = await fetch(url, { method: 'POST', headers, body, ...(call.signal ? { signal: call.signal } : {}) });
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  const events = res.status === 202 ? [] : parseBody(text, contentType);
  return { status: res.status, contentType, headers: res.headers, text, events, json: (events.at(-1) ?? {}) as RawAnswer['json'] };
}

/** The result object of an answer (throws with the answer when it is an error). */
export function resultOf(answer: RawAnswer): Record<string, unknown> {
  const result = answer.json.result;
  if (typeof result !== 'object' || result === null) throw new Error(`no result: ${answer.status} ${answer.text}`);
  return result as Record<string, unknown>;
}

/** The error object of an answer (throws when it has none). */
export function errorOf(answer: RawAnswer): { code: number; message: string; data?: Record<string, unknown> } {
  const error = answer.json.error;
  if (typeof error !== 'object' || error === null) throw new Error(`no error: ${answer.status} ${answer.text}`);
  return error as { code: number; message: string; data?: Record<string, unknown> };
}

/** One JSON-RPC message of an SSE stream, as the tests read it. */
export type SseFrame = { method?: string; params?: Record<string, any> };

/**
 * Reads an SSE response body into `frames` (each event's `data:` lines joined and parsed), calling
 * `onFrame` after each; `reading` settles when the stream ends or its request is aborted.
 */
export function readSseFrames(res: Response, onFrame: () => void = () => {}): { frames: SseFrame[]; reading: Promise<void> } {
  const frames: SseFrame[] = [];
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
        const data = buffer.slice(0, at).split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('');
        buffer = buffer.slice(at + 2);
        if (data !== '') frames.push(JSON.parse(data) as SseFrame);
        onFrame();
      }
    }
  })().catch(() => undefined);
  return { frames, reading };
}
