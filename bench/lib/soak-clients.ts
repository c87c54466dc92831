/**
 * Clients of the soak test (bench/soak.ts): one session per open(), over Streamable HTTP,
 * WebSocket or the legacy HTTP+SSE transport, each able to send any request and wait for its
 * answer. Only loopback URLs are ever given to them.
 */
import { Pool, WebSocket } from 'undici';
import { answerFromBody, PROTOCOL_VERSION } from './clients.ts';

export type Wire = 'http' | 'ws' | 'sse';
export const WIRES: readonly Wire[] = ['http', 'ws', 'sse'];

export interface Answer {
  id?: unknown;
  method?: string;
  result?: { content?: Array<{ text?: unknown }> };
  error?: { code?: number; message?: string; data?: { code?: string } };
}

export interface SoakSession {
  /** Sends one request (its JSON text, id `id`) and resolves with the answer. */
  ask(id: number, body: string): Promise<Answer>;
  /** Ends the session the way its transport does: DELETE, close frame, dropping the stream. */
  close(): Promise<void>;
}

const initialize = (id: number) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'soak', version: '1' } } });
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
const ASK_TIMEOUT_MS = 30_000;

/** Pending requests of a socket or stream, matched by numeric id; every one bounded in time. */
function createWaiters() {
  const pending = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  let failure: Error | undefined;
  return {
    wait(id: number, send: () => void): Promise<Answer> {
      return new Promise((resolve, reject) => {
        if (failure) return reject(failure);
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`no answer to ${id} within ${ASK_TIMEOUT_MS} ms`));
        }, ASK_TIMEOUT_MS);
        pending.set(id, { resolve, reject, timer });
        send();
      });
    },
    onText(text: string) {
      const message = JSON.parse(text) as Answer;
      if (typeof message.id !== 'number' || message.method !== undefined) return;
      const waiter = pending.get(message.id);
      if (waiter === undefined) return;
      pending.delete(message.id);
      clearTimeout(waiter.timer);
      waiter.resolve(message);
    },
    fail(error: Error) {
      failure ??= error;
      for (const w of pending.values()) {
        clearTimeout(w.timer);
        w.reject(error);
      }
      pending.clear();
    },
  };
}

let initIds = 2_000_000_000;

/** Opens sessions at `base` + `/servers/<target>/<mcp|ws|sse>`. */
export function createOpener(base: URL, connections: number) {
  const pool = new Pool(base.origin, { connections, keepAliveTimeout: 10_000, headersTimeout: ASK_TIMEOUT_MS, bodyTimeout: ASK_TIMEOUT_MS });
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const post = async (path: string, body: string, extra: Record<string, string> = {}) => {
    const res = await pool.request({ path, method: 'POST', headers: { ...headers, ...extra }, body });
    return { status: res.statusCode, type: String(res.headers['content-type'] ?? ''), session: res.headers['mcp-session-id'], text: await res.body.text() };
  };

  async function http(target: string): Promise<SoakSession> {
    const path = `/servers/${target}/mcp`;
    const initId = initIds++;
    const init = await post(path, initialize(initId));
    if (init.status !== 200 || typeof init.session !== 'string') throw new Error(`initialize: HTTP ${init.status} ${init.text.slice(0, 200)}`);
    const session = { 'mcp-session-id': init.session, 'mcp-protocol-version': PROTOCOL_VERSION };
    await post(path, INITIALIZED, session);
    return {
      async ask(id, body) {
        const res = await post(path, body, session);
        if (res.status !== 200) throw new Error(`HTTP ${res.status} ${res.text.slice(0, 200)}`);
        return answerFromBody(res.type, res.text, id) as Answer;
      },
      async close() {
        const res = await pool.request({ path, method: 'DELETE', headers: { ...headers, ...session } });
        await res.body.dump();
      },
    };
  }

  async function ws(target: string): Promise<SoakSession> {
    const socket = new WebSocket(new URL(`/servers/${target}/ws`, base.href.replace(/^http/, 'ws')), 'mcp');
    const waiters = createWaiters();
    const closed = new Promise<void>((resolve) => socket.addEventListener('close', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve();
      socket.onerror = () => reject(new Error('WebSocket: could not connect'));
    });
    socket.onmessage = (event: { data: unknown }) => {
      if (typeof event.data === 'string') waiters.onText(event.data);
    };
    socket.onclose = () => waiters.fail(new Error('WebSocket closed'));
    const initId = initIds++;
    await waiters.wait(initId, () => socket.send(initialize(initId)));
    socket.send(INITIALIZED);
    return {
      ask: (id, body) => waiters.wait(id, () => socket.send(body)),
      async close() {
        if (socket.readyState !== WebSocket.CLOSED) socket.close();
        await closed;
      },
    };
  }

  async function sse(target: string): Promise<SoakSession> {
    const controller = new AbortController();
    const res = await fetch(new URL(`/servers/${target}/sse`, base), { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    if (res.status !== 200 || res.body === null) throw new Error(`GET sse: HTTP ${res.status}`);
    const waiters = createWaiters();
    let endpoint: ((path: string) => void) | undefined;
    const endpointPath = new Promise<string>((resolve) => (endpoint = resolve));
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    void (async () => {
      let buffer = '';
      try {
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) break;
          buffer += chunk.value;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
            if (block.startsWith('event: endpoint') || block.startsWith('event:endpoint')) endpoint?.(data);
            else if (data !== '') waiters.onText(data);
          }
        }
      } catch {
        // aborted by close()
      }
      waiters.fail(new Error('SSE stream ended'));
    })();
    const path = await endpointPath;
    const postMessage = async (body: string) => {
      const answer = await post(path, body);
      if (answer.status !== 202) throw new Error(`legacy POST: HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
    };
    const ask = (id: number, body: string) =>
      waiters.wait(id, () => void postMessage(body).catch((err: Error) => waiters.fail(err)));
    const initId = initIds++;
    await ask(initId, initialize(initId));
    await postMessage(INITIALIZED);
    return {
      ask,
      async close() {
        controller.abort();
        await reader.cancel().catch(() => undefined);
      },
    };
  }

  return {
    open(wire: Wire, target: string): Promise<SoakSession> {
      return wire === 'http' ? http(target) : wire === 'ws' ? ws(target) : sse(target);
    },
    close: () => pool.close(),
  };
}
