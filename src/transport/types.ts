/**
 * One Transport shape for every wire, both sides (stdio child, Streamable HTTP, SSE, WebSocket,
 * in-memory pair). Transports move already-framed JSON-RPC messages; they never look inside them
 * beyond the envelope and never rewrite ids (that is the correlator's job, one layer up).
 */
import type { GatewayError } from '../errors/gateway-error.ts';
import type { TraceContext } from '../jsonrpc/trace-context.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';

export interface Transport {
  /** Opens the wire (spawns the child, connects the socket). Rejects with a GatewayError. */
  start(): Promise<void>;
  /**
   * Writes one message; resolves once the wire accepted it (stdio: queued within the child's
   * bound; rejects with GW_UPSTREAM_BUSY past it). `trace` (requests only, when tracing is on): the
   * W3C trace context of the gateway's upstream span, carried the wire's own way: as `traceparent`
   * / `tracestate` headers where each message has its own HTTP request, else in `params._meta`.
   */
  send(message: JsonRpcMessage, trace?: TraceContext): Promise<void>;
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
