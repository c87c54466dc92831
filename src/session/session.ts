/**
 * What every downstream route needs of a session, in two layers.
 *
 * `SessionCore` is era-neutral: requests are served onto a per-request sink whose stream semantics
 * (replay, cancel when the client goes away, batch) are options of that stream; notifications and
 * answers to server->client requests flow in; the session ends. A core works without any
 * `initialize`: it opens its members with a handshake it composes (core.ts, single.ts).
 *
 * `Session` is the 2025 layer on top (era-2025.ts): the client's initialize, the standalone GET
 * stream and its resumption. Batches are a stream option the 2025 routes pick.
 *
 * One implementation: the session core (core.ts) with a flavour per kind of endpoint, one target
 * (single.ts) or several (aggregate-session.ts).
 */
import type { JsonObject, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { DownstreamTransport } from '../log/observer.ts';
import type { Principal } from '../upstream/caller.ts';
import type { SessionUsage } from './limits.ts';
import type { ResponseSink, StreamOptions } from './streams.ts';

export type { ResponseSink, StreamOptions } from './streams.ts';
export { BATCH_2025, CHANNEL_REQUEST, POST_2025 } from './streams.ts';

export interface SessionCore {
  readonly id: string;
  /**
   * The downstream endpoint that created the session (its path key). A session is unknown on every
   * other endpoint, exactly like one that never existed.
   */
  readonly endpoint: string;
  /** How the downstream reached the gateway. */
  readonly transport: DownstreamTransport;
  /** The principal's id (gateway.auth); undefined without. */
  readonly principal: string | undefined;
  /** Date.now() when it was created. */
  readonly openedAt: number;
  /** The revision the downstream speaks; undefined until it is known (2025: initialize). */
  readonly protocolVersion: string | undefined;
  readonly ended: boolean;
  /**
   * True while a request is in flight (or its answer still owed) or an initialize runs; an open
   * standalone stream alone is not work (limits.ts).
   */
  readonly busy: boolean;
  /** What the store's limits read (limits.ts). */
  readonly usage: SessionUsage;
  lastActivity: number;
  /**
   * Throws GW_OVERLOADED when `count` more requests would pass the in-flight caps (inflight.ts).
   * Routes call it before `serve`, while they can still answer the HTTP request on its own.
   */
  admit(count: number): void;
  /**
   * Opens the session without a client initialize (a session the gateway holds for 2026 clients):
   * its members start with the handshake the core composes from `params` (capabilities,
   * clientInfo; the gateway picks the revision). Resolves with what the upstream side said
   * (serverInfo, capabilities, instructions, protocolVersion); rejects, the session ended, when it
   * cannot open.
   */
  open(params: JsonObject): Promise<JsonObject>;
  /**
   * Serves requests; their answers (and related messages) go to `sink`, one stream with `options`.
   * `carrier`: the HTTP request's headers, where a client's W3C trace context may be (read only when
   * tracing is on; a request's own `_meta.traceparent` comes first). `caller`: who sent these
   * requests, as its own credential says (gateway.auth); step-up judges its scopes, which may
   * differ from those of the token the session was opened with.
   */
  serve(requests: JsonRpcRequest[], sink: ResponseSink, options: StreamOptions, carrier?: Readonly<Record<string, unknown>>, caller?: Principal): void;
  /** Forwards a notification (a cancel is translated to the upstream's id). */
  handleNotification(notification: JsonRpcNotification): Promise<void>;
  /** Forwards the client's answer to a server->client request, with the upstream's id restored. */
  handleResponse(response: JsonRpcResponse): Promise<void>;
  /** Resolves once nothing is in flight upstream. */
  idle(): Promise<void>;
  /** Ends the session: closes its upstream, fails what is pending, ends its streams. Idempotent. */
  end(reason: string): Promise<void>;
}

/** The 2025 session: a core plus the handshake and the standalone stream. */
export interface Session extends SessionCore {
  /** Opens the upstream and forwards the client's initialize; resolves with the answer to send. */
  initialize(request: JsonRpcRequest): Promise<JsonRpcResponse>;
  /** GET stream; `lastEventId` resumes a lost stream. False: a standalone stream is already open. */
  openStream(sink: ResponseSink, lastEventId: string | undefined): boolean;
}
