/**
 * What a Streamable HTTP client must remember about its upstream session (MCP basic/transports,
 * "Session Management" and "Protocol Version Header"): the `Mcp-Session-Id` the server assigned
 * on initialize, the protocol version its initialize result chose, the client's initialize (to
 * replay it when the server forgets the session), and whether the session holds state that a
 * replay would silently lose.
 */
import { idKey, isObject, isRequest, isResponse } from '../jsonrpc/envelope.ts';
import type { JsonRpcMessage, JsonRpcRequest } from '../jsonrpc/types.ts';

/**
 * Requests after which the upstream session holds state a fresh session would not have, so a
 * transparent re-initialize would lose it silently: subscriptions (server/resources), the log
 * level (server/utilities/logging), and tasks (2025-11-25: task-augmented requests and tasks/*).
 */
const STATE_BEARING_METHODS = new Set(['resources/subscribe', 'logging/setLevel']);

export function isStateBearing(request: JsonRpcRequest): boolean {
  return STATE_BEARING_METHODS.has(request.method) || request.method.startsWith('tasks/') || isObject(request.params?.task);
}

/** `result.protocolVersion` of an initialize answer. */
export function negotiatedVersion(message: JsonRpcMessage): string | undefined {
  const result = 'result' in message ? message.result : undefined;
  return isObject(result) && typeof result.protocolVersion === 'string' ? result.protocolVersion : undefined;
}

export interface HttpSessionState {
  /** The upstream's session id; undefined before initialize (or after the server forgot it). */
  sessionId: string | undefined;
  /** The version the upstream chose; sent as MCP-Protocol-Version on every later request. */
  protocolVersion: string | undefined;
  /** True once a state-bearing request was sent: a lost session must not be replaced silently. */
  readonly stateful: boolean;
  /** True when the client's initialize is known and no state would be lost by replaying it. */
  readonly replayable: boolean;
  /** Headers for one request: the fixed ones, `extra`, and the session id and version when known. */
  headers(fixed: Readonly<Record<string, string>>, extra: Record<string, string>): Record<string, string>;
  /** Notes an outgoing message (the client's initialize, state-bearing requests). */
  sent(message: JsonRpcMessage): void;
  /** Notes an incoming message (the answer to initialize carries the version). */
  received(message: JsonRpcMessage): void;
  /** The client's initialize again, under `id`, as JSON text. */
  replay(id: string): string;
}

export function createHttpSessionState(): HttpSessionState {
  let initParams: string | undefined;
  let initKey: string | undefined;
  let stateful = false;
  const state: HttpSessionState = {
    sessionId: undefined,
    protocolVersion: undefined,
    get stateful() {
      return stateful;
    },
    get replayable() {
      return initParams !== undefined && !stateful;
    },
    headers(fixed, extra) {
      const headers: Record<string, string> = { ...fixed, ...extra };
      if (state.sessionId !== undefined) headers['mcp-session-id'] = state.sessionId;
      if (state.protocolVersion !== undefined) headers['mcp-protocol-version'] = state.protocolVersion;
      return headers;
    },
    sent(message) {
      if (!isRequest(message)) return;
      if (message.method === 'initialize') {
        initParams = JSON.stringify(message.params ?? {});
        initKey = idKey(message.id);
      } else if (isStateBearing(message)) {
        stateful = true;
      }
    },
    received(message) {
      if (initKey !== undefined && isResponse(message) && message.id !== null && idKey(message.id) === initKey) {
        state.protocolVersion = negotiatedVersion(message) ?? state.protocolVersion;
        initKey = undefined; // answered: later messages need no check (hot path)
      }
    },
    replay(id) {
      return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"initialize","params":${initParams ?? '{}'}}`;
    },
  };
  return state;
}
