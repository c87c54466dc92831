/**
 * One Transport shape for every wire, both sides (stdio child, Streamable HTTP, SSE, WebSocket,
 * in-memory pair). Transports move already-framed JSON-RPC messages; they never look inside them
 * beyond the envelope and never rewrite ids (that is the correlator's job, one layer up). What a
 * message needs beyond its text (a way to withdraw it, per-request headers, trace context) travels
 * in its SendOptions, never as a message the transport has to recognise.
 */
import type { GatewayError } from '../errors/gateway-error.ts';
import type { TraceContext } from '../jsonrpc/trace-context.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';

/**
 * What `send` returns when the message left (or was queued) at once: one settled promise shared by
 * every call, so a caller can tell it apart and skip a `.catch` (a promise and a microtask) per
 * message (issue 34).
 */
export const SENT: Promise<void> = Promise.resolve();

/** What goes with one message besides its text. Every field is optional; none costs anything unset. */
export interface SendOptions {
  /**
   * Aborted when the sender no longer wants the request's answer (a cancel, a timeout). A wire
   * where each request is its own exchange ends that exchange (HTTP: aborts the POST; 2026: that
   * is the cancel itself); a wire shared by every message (stdio, the SSE stream) ignores it.
   * Telling a 2025 peer (`notifications/cancelled`) stays the sender's business: the correlator.
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * HTTP headers of this message only (e.g. `Mcp-Param-*`), lower-case names; never logged. Sent
   * where each message has its own HTTP request; a header the target's configuration or the
   * protocol already sets is never replaced. Wires without per-message headers ignore them.
   */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /**
   * W3C trace context of the gateway's upstream span (requests only, when tracing is on), carried
   * the wire's own way: as `traceparent` / `tracestate` headers where each message has its own
   * HTTP request, else in `params._meta`.
   */
  readonly trace?: TraceContext | undefined;
}

export interface Transport {
  /** Opens the wire (spawns the child, connects the socket). Rejects with a GatewayError. */
  start(): Promise<void>;
  /**
   * Writes one message; resolves once the wire accepted it (stdio: queued within the child's
   * bound; rejects with GW_UPSTREAM_BUSY past it; HTTP: once the exchange is over).
   */
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void>;
  /**
   * Takes back a request that has not reached the peer yet (stdio: still queued for a child that
   * is not reading). True if it was withdrawn: the peer never sees it, so it needs no cancel.
   */
  withdraw?(upstreamId: number): boolean;
  /** Graceful close (stdio: close stdin, then SIGTERM, then SIGKILL to the process group). */
  close(): Promise<void>;
  /** Each complete, envelope-valid message from the peer. */
  onmessage?: (message: JsonRpcMessage) => void;
  /**
   * Called once when the wire is gone for any reason; `reason` is set when it was not a close we
   * asked for (crash, exit, protocol violation) and says why, for the error every pending request gets.
   */
  onclose?: (reason?: GatewayError) => void;
  /**
   * A peer message the transport could not deliver but could attribute to a request id (e.g. an
   * over-long line whose id could be read from its start). Lets the correlator fail just that request.
   */
  onundeliverable?: (upstreamId: number, error: GatewayError) => void;
}
