/**
 * The shapes of a session's outbound streams (streams.ts keeps the set of them): the HTTP side of
 * one response, how one stream behaves in its era, and the stream record itself.
 */
import type { JsonObject } from '../jsonrpc/types.ts';
import type { Principal } from '../upstream/caller.ts';
import type { StepUpNeed } from './chain/gates.ts';
import { MODERN_PROTOCOL_VERSION } from '../jsonrpc/versions.ts';

/** The HTTP side of one response, implemented by the http layer over a raw ServerResponse. */
export interface ResponseSink {
  /** Answers with one JSON body; only before `sse()`. */
  json(body: string): void;
  /** Starts an SSE response (status and headers). */
  sse(): void;
  /** Writes one SSE event; `data` '' is a priming event (id only); `id` '' on a stream without replay. */
  event(id: string, data: string): void;
  /** Ends the response. */
  end(): void;
  /** True once the response ended or the client went away. */
  readonly closed: boolean;
  /** Set by the stream set; called once when the client goes away first. */
  onclose: (() => void) | undefined;
  /**
   * True on message channels (WebSocket, legacy SSE), where a cancelled request needs no answer
   * (basic/utilities/cancellation: the receiver SHOULD NOT respond); an HTTP POST must get one.
   */
  readonly channel?: boolean;
  /**
   * Present where the response can still refuse with an HTTP status: answers with 403
   * insufficient_scope for want of `scopes` (SEP-2350 step-up), `message` the JSON-RPC error (as
   * the object it is: the sink serializes it, or, on the 2026 edge, reshapes it without a parse).
   */
  challenge?(message: JsonObject, scopes: readonly string[]): void;
  /**
   * A sink that shapes what it writes itself (the 2026 edge, session/stateless/relay.ts) takes each
   * message of its stream as the object it is, instead of `json`/`event` text: nothing is
   * serialized for it, nothing parsed back. `final`: it answers the stream's request.
   */
  readonly take?: ((message: JsonObject, final: boolean) => void) | undefined;
  /**
   * A sink whose request a later one may resume (a parked 2026 call, SEP-2322, relay.ts) has this
   * property: the chain's step-up stage sets it to judge another caller's token on the same item,
   * so a retry is judged by its own token as every request is (docs/security.md, step-up).
   */
  stepUp?: ((caller: Principal | undefined) => StepUpNeed | undefined) | undefined;
}

/** How one stream behaves; the routes pass shared constants (no allocation per request). */
export interface StreamOptions {
  /** Several requests of one JSON-RPC batch (2025-03-26): one JSON array if every answer comes first. */
  readonly batch: boolean;
  /** SSE events carry ids and stay in the replay log, so a lost stream can be resumed (2025). */
  readonly replay: boolean;
  /** The client going away before the last answer cancels the stream's requests upstream (2026). */
  readonly cancelOnClose: boolean;
  /**
   * The revision the request itself names when the era is a fact of each request (2026: no
   * session, `_meta` on every request); undefined: the session's negotiated one. Metrics, spans
   * and logs label the request with it.
   */
  readonly protocolVersion?: string | undefined;
}

/** A 2025 POST: resumable, and a dropped connection is not a cancel. */
export const POST_2025: StreamOptions = Object.freeze({ batch: false, replay: true, cancelOnClose: false });
/** A 2025-03-26 JSON-RPC batch. */
export const BATCH_2025: StreamOptions = Object.freeze({ batch: true, replay: true, cancelOnClose: false });
/**
 * One request on a message channel (WebSocket, legacy SSE): nothing to resume (the channel is the
 * session), and the channel closing ends the session, which cancels what runs.
 */
export const CHANNEL_REQUEST: StreamOptions = Object.freeze({ batch: false, replay: false, cancelOnClose: false });
/**
 * One 2026-07-28 request (session/stateless/): nothing to resume, closing the response cancels it,
 * and its era is its own whatever session serves it upstream.
 */
export const MODERN_REQUEST: StreamOptions = Object.freeze({ batch: false, replay: false, cancelOnClose: true, protocolVersion: MODERN_PROTOCOL_VERSION });

/** A stream's body: undecided, one JSON answer, or an SSE stream. */
export const PENDING = 0;
export const JSON_MODE = 1;
export const SSE_MODE = 2;

export interface OutStream {
  readonly id: number;
  readonly standalone: boolean;
  sink: ResponseSink | undefined;
  mode: typeof PENDING | typeof JSON_MODE | typeof SSE_MODE;
  /** Final answers still owed on this stream (request streams). */
  remaining: number;
  readonly options: StreamOptions;
  readonly openedAt: number;
  /** Batch answers gathered while still hoping to reply with one JSON array. */
  collected: string[] | undefined;
  complete: boolean;
}
