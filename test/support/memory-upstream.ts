/**
 * Upstreams on the in-memory transport, for unit tests of the session core and its flavours: an
 * `UpstreamFactory` whose every connection is the gateway's real correlator and connection
 * (`connectionOver`) talking to a small MCP server written here, on the other end of a memory
 * transport pair. The server is a real JSON-RPC peer, not a mock of the gateway: it answers what
 * it is asked and records every message it receives, so tests assert exact ids on the wire.
 *
 * Its tools: `echo` {text} (with a progress notification first when the call has a progress
 * token), `slow` (never answers: tests look for its cancel), `ask` (asks the client `roots/list`
 * with a string id of its own, then answers with what the client said), `secret`; any other name
 * gets the server's own unknown-tool error.
 */
import { GatewayError } from '../../src/errors/gateway-error.ts';
import type { JsonObject, JsonRpcMessage, JsonRpcRequest } from '../../src/jsonrpc/types.ts';
import { createMemoryTransportPair, type MemoryTransport } from '../../src/transport/memory.ts';
import { connectionOver } from '../../src/upstream/connection.ts';
import type { UpstreamFactory } from '../../src/upstream/open.ts';

type Message = JsonRpcMessage & { id?: unknown; method?: string; params?: JsonObject; result?: JsonObject };

export interface MiniServer {
  readonly target: string;
  /** Every message received, in order. */
  readonly received: Message[];
  /** Resolves with the first received message (past or future) that matches. */
  waitFor(predicate: (message: Message) => boolean): Promise<Message>;
  /** The wire dies as a crash would. */
  crash(): void;
}

export interface MemoryUpstreams {
  readonly open: UpstreamFactory;
  /** The servers started per target name, oldest first. */
  servers(target: string): MiniServer[];
}

const TOOLS = ['echo', 'slow', 'ask', 'secret'].map((name) => ({ name, inputSchema: { type: 'object' } }));

function startServer(target: string, wire: MemoryTransport): MiniServer {
  const received: Message[] = [];
  const waiters: Array<{ predicate: (m: Message) => boolean; resolve: (m: Message) => void }> = [];
  const asked = new Map<string, (result: unknown) => void>();
  let asks = 0;
  const send = (message: object) => void wire.send(message as JsonRpcMessage).catch(() => undefined);
  const answer = (id: unknown, result: object) => send({ jsonrpc: '2.0', id, result });
  const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

  const call = (request: Message) => {
    const params = request.params ?? {};
    const args = (params.arguments ?? {}) as Record<string, unknown>;
    const token = (params._meta as JsonObject | undefined)?.progressToken;
    switch (params.name) {
      case 'echo':
        if (token !== undefined) send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 } });
        return answer(request.id, text(`${target}: ${String(args.text)}`));
      case 'slow':
        return; // answered never; the test looks for the cancel
      case 'ask': {
        const id = `srv-${++asks}`;
        asked.set(id, (result) => answer(request.id, text(JSON.stringify(result))));
        return send({ jsonrpc: '2.0', id, method: 'roots/list', params: {} });
      }
      default:
        return send({ jsonrpc: '2.0', id: request.id, error: { code: -32602, message: `Unknown tool: ${String(params.name)}` } });
    }
  };

  const handle = (message: Message) => {
    if (message.method === undefined) return asked.get(String(message.id))?.(message.result);
    if (message.id === undefined) return;
    const request = message as Message & JsonRpcRequest;
    switch (request.method) {
      case 'initialize':
        return answer(request.id, {
          protocolVersion: request.params?.protocolVersion ?? '2025-06-18',
          capabilities: { tools: { listChanged: true }, prompts: {}, resources: {} },
          serverInfo: { name: `mini-${target}`, version: '9.9.9' },
          instructions: `instructions of ${target}`,
        });
      case 'tools/list':
        return answer(request.id, { tools: TOOLS });
      case 'prompts/list':
        return answer(request.id, { prompts: [{ name: 'hello' }] });
      case 'resources/list':
        return answer(request.id, { resources: [{ uri: `mem://${target}/a`, name: 'a' }] });
      case 'tools/call':
        return call(request);
      default:
        return answer(request.id, {});
    }
  };

  wire.onmessage = (message) => {
    const m = message as Message;
    received.push(m);
    for (const w of [...waiters]) {
      if (!w.predicate(m)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(m);
    }
    handle(m);
  };
  return {
    target,
    received,
    waitFor(predicate) {
      const found = received.find(predicate);
      return found ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    crash: () => wire.fail(new GatewayError('GW_UPSTREAM_EXITED', `mini server "${target}" crashed`, { target })),
  };
}

export function memoryUpstreams(): MemoryUpstreams {
  const started = new Map<string, MiniServer[]>();
  return {
    open({ target, logger }) {
      const [gatewaySide, serverSide] = createMemoryTransportPair();
      const server = startServer(target.name, serverSide);
      started.set(target.name, [...(started.get(target.name) ?? []), server]);
      return connectionOver(gatewaySide, { target, logger });
    },
    servers: (target) => started.get(target) ?? [],
  };
}
