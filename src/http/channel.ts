/**
 * A session carried over one ordered message channel: a WebSocket, or the legacy HTTP+SSE pair
 * (GET stream out, POSTs in). Unlike Streamable HTTP there is no response per request: every
 * answer, progress notification and server->client request goes out on the one channel, so the
 * session's streams are adapted onto it here.
 *
 * One channel is one session: ids are the session's own business (each session keeps its own map
 * of in-flight client ids), so colliding ids on two channels never meet.
 */
import { toParseFailure } from './parse-failure.ts';
import { GatewayError, toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import { isObject, isRequest, isRequestId, isResponse, parseJson, toMessage } from '../jsonrpc/envelope.ts';
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, RequestId } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { refusalIn } from '../session/room.ts';
import type { Principal } from '../upstream/caller.ts';
import { CHANNEL_REQUEST, type ResponseSink, type Session } from '../session/session.ts';

/** The wire a channel writes to. */
export interface ChannelWire {
  /** Sends one JSON-RPC message (already serialised). */
  send(data: string): void;
  /** True once the wire can take nothing more. */
  readonly closed: boolean;
  /** The session ended on the gateway's side: close the wire (after what was already sent). */
  close(): void;
  /** The session was refused for lack of room (its initialize answer says so): the close that follows says "try again later". */
  refused?(): void;
}

export interface Channel {
  /**
   * Handles one message from the client, in arrival order. Never throws. `caller`: who sent it, as
   * its own credential says (a legacy POST's; the socket's for a WebSocket): step-up judges it.
   */
  receive(message: JsonRpcMessage, caller?: Principal): Promise<void>;
}

/** A message that could not be taken: the error, and the request id when one was readable. */
export interface Rejected {
  readonly rejected: GatewayError;
  readonly id: RequestId | null;
}

/**
 * Parses one JSON-RPC message (one WebSocket text frame, one legacy POST body), or says why not
 * (GW_PARSE_ERROR, GW_INVALID_REQUEST). Batches are refused: neither transport's clients send
 * them, and one frame carries one message.
 */
export function parseOneMessage(text: string): JsonRpcMessage | Rejected {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (err) {
    return { rejected: toParseFailure(err), id: null };
  }
  if (Array.isArray(value)) {
    return { rejected: new GatewayError('GW_INVALID_REQUEST', 'Invalid Request: batches are not accepted on this transport'), id: null };
  }
  const message = toMessage(value);
  if (typeof message !== 'string') return message;
  const id = isObject(value) && isRequestId(value.id) ? value.id : null;
  return { rejected: new GatewayError('GW_INVALID_REQUEST', `Invalid Request: ${message}`), id };
}

export function isRejected(value: JsonRpcMessage | Rejected): value is Rejected {
  return 'rejected' in value;
}

/**
 * The ResponseSinks a channel session writes to: one shared by every request (answers and
 * related messages become one message each; priming events are skipped, there is nothing to
 * resume), and the standalone one, whose `end` means the session ended.
 */
function createSinks(wire: ChannelWire): { requests: ResponseSink; standalone: ResponseSink } {
  const sink = (end: () => void, channel: boolean): ResponseSink => ({
    onclose: undefined,
    channel,
    get closed() {
      return wire.closed;
    },
    json: (body) => {
      if (!wire.closed) wire.send(body);
    },
    sse: () => undefined,
    event: (_id, data) => {
      if (data !== '' && !wire.closed) wire.send(data);
    },
    end,
  });
  return {
    // A request's answer is complete; the channel goes on.
    requests: sink(() => undefined, true),
    // Only the session's end ends the standalone stream. The close waits a turn so that an answer
    // produced by the ending (a failed initialize) still goes out first.
    standalone: sink(() => void setImmediate(() => wire.close()), false),
  };
}

/**
 * Opens the session's standalone stream on the wire and returns the receiving side.
 *
 * `limit`: the rate limits of the principal behind the channel; throws GW_RATE_LIMITED for a
 * request over them, which then gets that error as its answer. With shared buckets (a cluster) it
 * may return a promise instead: messages behind it wait their turn, so the client's order stays
 * the upstream's order.
 */
export function createChannel(session: Session, wire: ChannelWire, logger: Logger, limit?: (message: JsonRpcMessage) => Promise<void> | undefined): Channel {
  return new SessionChannel(session, wire, logger, limit);
}

/** One channel's state: its session, wire and sinks, the initialize under way, the rate-limit queue. */
class SessionChannel implements Channel {
  readonly session: Session;
  readonly wire: ChannelWire;
  readonly logger: Logger;
  readonly limit: ((message: JsonRpcMessage) => Promise<void> | undefined) | undefined;
  readonly sinks: { requests: ResponseSink; standalone: ResponseSink };
  initializing: Promise<void> | undefined = undefined;
  /** Settles once the last message still waiting on a shared rate limit has been handed on. */
  waiting: Promise<void> | undefined = undefined;

  constructor(session: Session, wire: ChannelWire, logger: Logger, limit: ((message: JsonRpcMessage) => Promise<void> | undefined) | undefined) {
    this.session = session;
    this.wire = wire;
    this.logger = logger;
    this.limit = limit;
    this.sinks = createSinks(wire);
    session.openStream(this.sinks.standalone, undefined);
  }

  receive(message: JsonRpcMessage, caller?: Principal): Promise<void> {
    if (this.waiting !== undefined) return this.queue(this.waiting.then(() => this.take(message)), message, caller);
    const taken = this.take(message);
    if (taken === true) return this.handle(message, caller);
    if (taken === false) return Promise.resolve();
    return this.queue(taken, message, caller);
  }

  fail(id: RequestId, error: GatewayError): void {
    if (!this.wire.closed) this.wire.send(JSON.stringify(toErrorResponse(id, error)));
  }

  async initialize(request: JsonRpcRequest): Promise<void> {
    const answer = await this.session.initialize(request);
    if (!this.wire.closed) this.wire.send(JSON.stringify(answer));
    if (refusalIn(answer) !== undefined) this.wire.refused?.();
  }

  /** Takes the message's token: true granted, false refused (and answered), or a promise of either. */
  take(message: JsonRpcMessage): boolean | Promise<boolean> {
    const limit = this.limit;
    if (limit === undefined || !isRequest(message)) return true;
    const refused = (err: unknown) => {
      this.fail(message.id, toGatewayError(err));
      return false;
    };
    try {
      const taking = limit(message);
      return taking === undefined ? true : taking.then(() => true, refused);
    } catch (err) {
      return refused(err);
    }
  }

  /** `message` once `taken` settles; later messages wait behind it. */
  queue(taken: Promise<boolean>, message: JsonRpcMessage, caller: Principal | undefined): Promise<void> {
    const handed = taken.then((ok) => (ok ? { done: this.handle(message, caller) } : undefined));
    const turn = handed.then(() => undefined);
    this.waiting = turn;
    void turn.then(() => {
      if (this.waiting === turn) this.waiting = undefined;
    });
    return handed.then((h) => h?.done);
  }

  async handle(message: JsonRpcMessage, caller: Principal | undefined): Promise<void> {
    const session = this.session;
    try {
      if (isRequest(message) && message.method === 'initialize') {
        if (this.initializing !== undefined) return this.fail(message.id, new GatewayError('GW_ALREADY_INITIALIZED'));
        this.initializing = this.initialize(message);
        return await this.initializing;
      }
      // Whatever follows initialize waits for it: nothing reaches an upstream before its handshake.
      if (this.initializing !== undefined) await this.initializing;
      session.lastActivity = Date.now();
      if (isRequest(message)) {
        if (this.initializing === undefined) {
          return this.fail(message.id, new GatewayError('GW_INVALID_REQUEST', 'Invalid Request: send initialize first'));
        }
        // Over the in-flight caps: this request gets GW_OVERLOADED as its answer; the channel goes on.
        try {
          session.admit(1);
        } catch (err) {
          return this.fail(message.id, toGatewayError(err));
        }
        session.serve([message], this.sinks.requests, CHANNEL_REQUEST, undefined, caller);
      } else if (isResponse(message)) {
        await session.handleResponse(message as JsonRpcResponse);
      } else {
        await session.handleNotification(message as JsonRpcNotification);
      }
    } catch (err) {
      // Only forwarding a notification or an answer can fail here (upstream gone); the session's
      // own end reports that to the client.
      this.logger.debug({ err, session: session.id }, 'could not forward a message upstream');
    }
  }
}
