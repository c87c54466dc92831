/**
 * The Session contract: what every downstream route (Streamable HTTP, WebSocket, legacy SSE) needs
 * of a session, whatever serves it. One implementation, the session core (core.ts), with a flavour
 * per kind of endpoint: one target (single.ts) or several (aggregate-session.ts).
 *
 * Era-neutral at its heart: a session is created empty and `handleRequests` works without an
 * `initialize` (the core opens a member with a handshake it composes); `initialize`, `openStream`
 * and the batch flag are the 2025 layer on top.
 */
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { SessionUsage } from './limits.ts';
import type { ResponseSink } from './streams.ts';

export type { ResponseSink } from './streams.ts';

export interface Session {
  readonly id: string;
  /**
   * The downstream endpoint that created the session (its path key). A session is unknown on every
   * other endpoint, exactly like one that never existed.
   */
  readonly endpoint: string;
  /** Negotiated in initialize; undefined before. */
  readonly protocolVersion: string | undefined;
  readonly ended: boolean;
  /** True while a request is in flight or a response stream is attached. */
  readonly busy: boolean;
  /** What the store's limits read (limits.ts). */
  readonly usage: SessionUsage;
  lastActivity: number;
  /** Opens the upstream and forwards the client's initialize; resolves with the answer to send. */
  initialize(request: JsonRpcRequest): Promise<JsonRpcResponse>;
  /** Forwards requests; their answers (and related messages) go to `sink`. */
  handleRequests(requests: JsonRpcRequest[], sink: ResponseSink, batch: boolean): void;
  /** Forwards a notification (a cancel is translated to the upstream's id). */
  handleNotification(notification: JsonRpcNotification): Promise<void>;
  /** Forwards the client's answer to a server->client request, with the upstream's id restored. */
  handleResponse(response: JsonRpcResponse): Promise<void>;
  /** GET stream; `lastEventId` resumes a lost stream. False: a standalone stream is already open. */
  openStream(sink: ResponseSink, lastEventId: string | undefined): boolean;
  /** Resolves once nothing is in flight upstream. */
  idle(): Promise<void>;
  /** Ends the session: closes its upstream, fails what is pending, ends its streams. Idempotent. */
  end(reason: string): Promise<void>;
}
