/**
 * The 2025 session layer over the era-neutral core (session.ts): the client's initialize (answered
 * by the flavour, which opens the members with it), and the standalone GET stream with its
 * resumption from `Last-Event-ID`. Batches and replay are stream options the 2025 routes pick
 * (streams.ts), so nothing else of the era lives here.
 */
import type { JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { Session, SessionCore } from './session.ts';
import type { StreamSet } from './streams.ts';

export interface Era2025Parts {
  readonly streams: StreamSet;
  /** The flavour's answer to the client's initialize. */
  initialize(request: JsonRpcRequest): Promise<JsonRpcResponse>;
  /** The client opened a standalone stream (limits.ts: its session lives by the longer TTL). */
  streamed(): void;
}

export function withEra2025(core: SessionCore, era: Era2025Parts): Session {
  const { streams } = era;
  return {
    id: core.id,
    endpoint: core.endpoint,
    transport: core.transport,
    principal: core.principal,
    openedAt: core.openedAt,
    get protocolVersion() {
      return core.protocolVersion;
    },
    get ended() {
      return core.ended;
    },
    get busy() {
      return core.busy;
    },
    get usage() {
      return core.usage;
    },
    get lastActivity() {
      return core.lastActivity;
    },
    set lastActivity(at: number) {
      core.lastActivity = at;
    },
    admit: core.admit,
    open: core.open,
    serve: core.serve,
    handleNotification: core.handleNotification,
    handleResponse: core.handleResponse,
    idle: core.idle,
    end: core.end,
    initialize: era.initialize,
    openStream(sink, lastEventId) {
      era.streamed();
      if (lastEventId !== undefined && streams.resume(sink, lastEventId)) return true;
      return streams.attachStandalone(sink);
    },
  };
}
