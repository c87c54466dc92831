/**
 * MCP clients of the load generator, one per downstream wire, written on undici (HTTP and
 * WebSocket) and node:child_process (the direct pipe). Each opens sessions that can run
 * `tools/call echo` and check every answer: the id, and the echoed text (or its length and prefix
 * for padded results). A wrong answer rejects; the load generator counts it as an error.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { Pool, WebSocket } from 'undici';

export const PROTOCOL_VERSION = '2025-11-25';

/** One open MCP session (initialize done, notifications/initialized sent). */
export interface McpSession {
  /** One tools/call echo; resolves once the answer has arrived and was checked. */
  call(id: number, text: string, bytes: number): Promise<void>;
  close(): Promise<void>;
}

/** Opens sessions on one system over one wire. */
export interface Connector {
  readonly wire: 'http' | 'ws' | 'stdio';
  open(): Promise<McpSession>;
  /** Closes what the connector holds (connection pools). Sessions are closed by their owners. */
  close(): Promise<void>;
  /** Pids of processes the connector started itself (the direct pipe's echo servers). */
  readonly pids: readonly number[];
}

interface Answer {
  jsonrpc?: string;
  id?: unknown;
  method?: string;
  result?: { content?: Array<{ text?: unknown }>; protocolVersion?: unknown };
  error?: { code?: number; message?: string };
}

/** What a client declares in its initialize: the version it asks for and its capabilities. */
export interface ClientKind {
  readonly protocolVersion: string;
  readonly capabilities: Record<string, unknown>;
}
const BARE: ClientKind = { protocolVersion: PROTOCOL_VERSION, capabilities: {} };

const initializeBody = (id: number, client: ClientKind = BARE) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: client.protocolVersion, capabilities: client.capabilities, clientInfo: { name: 'switchboard-bench', version: '1' } },
  });
const INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });

/** The JSON-RPC text of one echo call. */
export const echoBody = (id: number, text: string, bytes: number): string =>
  bytes > 0
    ? `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":${JSON.stringify(text)},"bytes":${bytes}}}}`
    : `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":${JSON.stringify(text)}}}}`;

/** Throws unless `answer` is the echo of `text` (padded to `bytes`) for request `id`. */
export function checkEcho(answer: Answer, id: number, text: string, bytes: number): void {
  if (answer.id !== id) throw new Error(`answer id ${JSON.stringify(answer.id)}, expected ${id}`);
  const got = answer.result?.content?.[0]?.text;
  if (typeof got !== 'string') throw new Error(`id ${id}: no text in ${JSON.stringify(answer).slice(0, 300)}`);
  const ok = bytes > text.length ? got.length === bytes && got.startsWith(text) : got === text;
  if (!ok) throw new Error(`id ${id}: echoed ${JSON.stringify(got.slice(0, 80))} (${got.length} chars), expected ${JSON.stringify(text)} padded to ${bytes}`);
}

/**
 * The answer with id `id` in a Streamable HTTP body: the JSON body, or the SSE event carrying it
 * (events before it are notifications or requests about it; they are skipped, not checked).
 */
export function answerFromBody(contentType: string, text: string, id: number): Answer {
  if (!contentType.startsWith('text/event-stream')) return JSON.parse(text) as Answer;
  for (const event of text.split('\n\n')) {
    let data = '';
    for (const line of event.split('\n')) {
      if (line.startsWith('data:')) data += line.slice(line.charCodeAt(5) === 32 ? 6 : 5);
    }
    if (data === '') continue; // priming event or comment
    const message = JSON.parse(data) as Answer;
    if (message.id === id && message.method === undefined) return message;
  }
  throw new Error(`SSE body without an answer to id ${id}: ${text.slice(0, 300)}`);
}

let initIds = 1_000_000_000;

/** Streamable HTTP (2025 era) on an undici Pool with `connections` keep-alive connections. */
export function httpConnector(url: string, connections: number, headers: Record<string, string> = {}, client: ClientKind = BARE): Connector {
  const target = new URL(url);
  // 30 s: a call that takes longer is a hung system, reported as a failure instead of waiting 5 min.
  const pool = new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const path = target.pathname + target.search;
  const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers };

  const post = async (body: string, headers: Record<string, string>) => {
    const res = await pool.request({ path, method: 'POST', headers: { ...base, ...headers }, body });
    const text = await res.body.text();
    return { status: res.statusCode, type: String(res.headers['content-type'] ?? ''), sessionId: res.headers['mcp-session-id'], text };
  };

  return {
    wire: 'http',
    pids: [],
    async open() {
      const initId = initIds++;
      const init = await post(initializeBody(initId, client), {});
      if (init.status !== 200) throw new Error(`initialize: HTTP ${init.status} ${init.text.slice(0, 300)}`);
      const answer = answerFromBody(init.type, init.text, initId);
      const version = answer.result?.protocolVersion;
      if (typeof version !== 'string') throw new Error(`initialize refused: ${init.text.slice(0, 300)}`);
      const headers: Record<string, string> = { 'mcp-protocol-version': version };
      if (typeof init.sessionId === 'string') headers['mcp-session-id'] = init.sessionId;
      const note = await post(INITIALIZED, headers);
      if (note.status !== 202 && note.status !== 200 && note.status !== 204) {
        throw new Error(`notifications/initialized: HTTP ${note.status} ${note.text.slice(0, 300)}`);
      }
      return {
        async call(id, text, bytes) {
          const res = await post(echoBody(id, text, bytes), headers);
          if (res.status !== 200) throw new Error(`id ${id}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
          checkEcho(answerFromBody(res.type, res.text, id), id, text, bytes);
        },
        async close() {
          if (headers['mcp-session-id'] === undefined) return;
          const res = await pool.request({ path, method: 'DELETE', headers: { ...base, ...headers } });
          await res.body.dump();
        },
      };
    },
    close: () => pool.close(),
  };
}

/** The 2026-07-28 echo call: the per-request envelope in `_meta` and the standard headers. */
const statelessBody = (id: number, text: string): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":${JSON.stringify(text)}},` +
  `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
  `"io.modelcontextprotocol/clientInfo":{"name":"switchboard-bench","version":"1"}}}}`;
const STATELESS_HEADERS = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' };

/**
 * Streamable HTTP in the stateless 2026-07-28 revision: no initialize, no session; every call
 * carries its envelope. Against a 2025 upstream it crosses the gateway's bridge (held sessions).
 */
export function statelessConnector(url: string, connections: number, headers: Record<string, string> = {}): Connector {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const path = target.pathname + target.search;
  const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...STATELESS_HEADERS, ...headers };
  return {
    wire: 'http',
    pids: [],
    async open() {
      return {
        async call(id, text, bytes) {
          if (bytes > 0) throw new Error('the stateless scenarios use small results only');
          const res = await pool.request({ path, method: 'POST', headers: base, body: statelessBody(id, text) });
          const body = await res.body.text();
          if (res.statusCode !== 200) throw new Error(`id ${id}: HTTP ${res.statusCode} ${body.slice(0, 300)}`);
          const answer = answerFromBody(String(res.headers['content-type'] ?? ''), body, id);
          checkEcho(answer, id, text, bytes);
          if ((answer.result as { resultType?: unknown } | undefined)?.resultType !== 'complete') throw new Error(`id ${id}: no resultType`);
        },
        close: async () => undefined,
      };
    },
    close: () => pool.close(),
  };
}

/** A JSON-RPC peer over text frames or lines: answers matched by id. */
function createPeer(write: (text: string) => void) {
  const pending = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();
  let failure: Error | undefined;
  return {
    ask(id: number, text: string): Promise<Answer> {
      return new Promise((resolve, reject) => {
        if (failure) return reject(failure);
        pending.set(id, { resolve, reject });
        write(text);
      });
    },
    onText(text: string) {
      const message = JSON.parse(text) as Answer;
      if (typeof message.id !== 'number' || message.method !== undefined) return; // notifications, requests
      const waiter = pending.get(message.id);
      if (waiter === undefined) return;
      pending.delete(message.id);
      waiter.resolve(message);
    },
    fail(error: Error) {
      failure ??= error;
      for (const p of pending.values()) p.reject(error);
      pending.clear();
    },
  };
}

async function handshake(ask: (id: number, text: string) => Promise<Answer>, notify: () => void): Promise<void> {
  const initId = initIds++;
  const answer = await ask(initId, initializeBody(initId));
  if (typeof answer.result?.protocolVersion !== 'string') throw new Error(`initialize refused: ${JSON.stringify(answer).slice(0, 300)}`);
  notify();
}

/** WebSocket downstream: one socket per session, subprotocol `mcp`, one message per text frame. */
export function wsConnector(url: string): Connector {
  return {
    wire: 'ws',
    pids: [],
    async open() {
      const socket = new WebSocket(url, 'mcp');
      const peer = createPeer((text) => socket.send(text));
      await new Promise<void>((resolve, reject) => {
        socket.onopen = () => resolve();
        socket.onerror = () => reject(new Error(`WebSocket ${url}: could not connect`));
      });
      if (socket.protocol !== 'mcp') {
        socket.close();
        throw new Error(`WebSocket ${url}: subprotocol "${socket.protocol}", expected "mcp"`);
      }
      socket.onmessage = (event: { data: unknown }) => {
        if (typeof event.data === 'string') peer.onText(event.data);
      };
      socket.onclose = () => peer.fail(new Error('WebSocket closed'));
      await handshake(peer.ask, () => socket.send(INITIALIZED));
      return {
        async call(id, text, bytes) {
          checkEcho(await peer.ask(id, echoBody(id, text, bytes)), id, text, bytes);
        },
        async close() {
          if (socket.readyState === WebSocket.CLOSED) return;
          await new Promise<void>((resolve) => {
            socket.addEventListener('close', () => resolve());
            socket.close();
          });
        },
      };
    },
    close: async () => undefined,
  };
}

/** The direct path: one echo server child per session, NDJSON over its pipes (the floor). */
export function stdioConnector(command: string, args: readonly string[]): Connector {
  const pids: number[] = [];
  const children = new Set<ChildProcessByStdio<Writable, Readable, null>>();
  return {
    wire: 'stdio',
    pids,
    async open() {
      const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
      children.add(child);
      if (child.pid !== undefined) pids.push(child.pid);
      const peer = createPeer((text) => child.stdin.write(text + '\n'));
      let buffer = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        // Search only the new chunk for line ends: a 1 MiB line arrives in many chunks.
        let nl = chunk.indexOf('\n');
        if (nl === -1) {
          buffer += chunk;
          return;
        }
        let start = 0;
        let text = buffer + chunk;
        nl += buffer.length;
        buffer = '';
        while (nl !== -1) {
          peer.onText(text.slice(start, nl));
          start = nl + 1;
          nl = text.indexOf('\n', start);
        }
        buffer = text.slice(start);
        text = '';
      });
      child.once('exit', (code, signal) => {
        children.delete(child);
        peer.fail(new Error(`echo server exited (${code ?? signal})`));
      });
      await handshake(peer.ask, () => child.stdin.write(INITIALIZED + '\n'));
      return {
        async call(id, text, bytes) {
          checkEcho(await peer.ask(id, echoBody(id, text, bytes)), id, text, bytes);
        },
        async close() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
          child.stdin.end();
          await gone;
        },
      };
    },
    async close() {
      for (const child of children) child.kill('SIGKILL');
    },
  };
}
