/**
 * The response side of one 2026 request served by a held 2025 session (a host, hosts.ts): the
 * ResponseSink the host writes into, relaying to the client's exchange what the 2026 revision lets
 * through, in its shape.
 *
 * - The answer gets `resultType` (and cache hints on cacheable results) and the client's own id; an
 *   error answering the whole response gets the status the spec gives its code (exchange.ts).
 * - Progress passes; a log line passes only if the request set `_meta` logLevel, at that level or
 *   above; nothing else that belongs to no request rides on a request's stream.
 * - A server->client request is never written: it goes to `ask` (mrtr.ts), which turns it into an
 *   `input_required` result. Then the relay is parked: the exchange has its answer, the upstream call
 *   runs on, and the client's retry rebinds the relay to its own exchange and id.
 * - The client going away from an unparked exchange is a cancel (`abandon`): in 2026 closing the
 *   response stream cancels the request.
 */
import { GatewayError } from '../../errors/gateway-error.ts';
import { JsonRpcCode } from '../../jsonrpc/codes.ts';
import { isObject } from '../../jsonrpc/envelope.ts';
import { isCacheable } from '../../jsonrpc/methods.ts';
import type { JsonObject, RequestId } from '../../jsonrpc/types.ts';
import type { ResponseSink } from '../streams.ts';
import { type Exchange, statusOfError } from './exchange.ts';

export interface RelayHooks {
  /** A server->client request the host routed to this request. */
  ask(relay: Relay, request: JsonObject): void;
  /** The client went away before the answer: cancel the request upstream. */
  abandon(relay: Relay): void;
  /** The relay delivered its final answer, or its host ended. */
  done(relay: Relay): void;
}

export interface Relay extends ResponseSink {
  /** The id the host knows the request by (unique in its host, whatever ids clients use). */
  readonly hostId: number;
  readonly method: string;
  /** The id of the client request the relay answers now (the retry's, after a rebind). */
  readonly clientId: RequestId;
  readonly parked: boolean;
  readonly finished: boolean;
  /** Gives the call up while parked (nobody came back in time): nothing more is relayed, `done` runs. */
  drop(): void;
  /** Answers the current exchange with `message` (an input_required result) and waits for a retry. */
  park(message: JsonObject): void;
  /** A retry carries on: what comes next goes to `exchange`, with the retry's id and log level. */
  rebind(exchange: Exchange, clientId: RequestId, logLevel: string | undefined): void;
}

const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** True when a log line of `level` passes a request that asked for `wanted` (undefined: none). */
export function passesLogLevel(level: unknown, wanted: string | undefined): boolean {
  if (wanted === undefined) return false;
  const at = LEVELS.indexOf(typeof level === 'string' ? level : '');
  const min = LEVELS.indexOf(wanted);
  return at >= (min < 0 ? 0 : min);
}

/**
 * The start of a host's plain success answer as upstreams and the gateway write it: `{"jsonrpc":
 * "2.0","id":<n>,"result":{` (jsonrpc before or after the id, any spacing). Only `jsonrpc` and
 * `id` may come before `result`, so nothing earlier can hold a look-alike of these keys.
 */
const PLAIN_HEAD = /^\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(\d+)\s*,\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"result"\s*:\s*\{/;

/**
 * The fast path of the common answer (a result that needs no cache hints): the host's text with the
 * client's id and `resultType` spliced in, instead of a parse and a serialization of the whole
 * answer. Undefined when the text is not of that plain form (the caller parses it then).
 */
export function spliceComplete(body: string, hostId: number, idText: string): string | undefined {
  const head = PLAIN_HEAD.exec(body);
  if (head === null || Number(head[1]) !== hostId || body.includes('"resultType"')) return undefined;
  const rest = body.slice(head[0].length);
  const empty = /^\s*\}/.test(rest);
  return `{"jsonrpc":"2.0","id":${idText},"result":{"resultType":"complete"${empty ? '' : ','}${rest}`;
}

/** A host's answer in the 2026 shape, for the client's `id`; with the HTTP status if it is the whole response. */
export function toModernAnswer(message: JsonObject, id: RequestId, method: string, uri?: string): { status: number; body: string } {
  message.id = id as JsonObject[string];
  const error = message.error;
  if (isObject(error)) {
    // SEP-2164 (2026): an unknown resource is -32602, not the 2025 -32002, and names the URI.
    if (error.code === JsonRpcCode.ResourceNotFound) error.code = JsonRpcCode.InvalidParams;
    const data = isObject(error.data) ? error.data : {};
    if (uri !== undefined && error.code === JsonRpcCode.InvalidParams && data.uri === undefined) error.data = { ...data, uri };
    return { status: statusOfError(error.code), body: JSON.stringify(message) };
  }
  const result = message.result;
  if (isObject(result)) {
    if (result.resultType === undefined) result.resultType = 'complete';
    // Results a client may cache (SEP-2549): the gateway says for how long, and only for this caller.
    if (isCacheable(method)) {
      if (typeof result.ttlMs !== 'number') result.ttlMs = 0;
      // The gateway's answers depend on who asks (policy, upstream identity): never shared caches.
      result.cacheScope = 'private';
    }
  }
  return { status: 200, body: JSON.stringify(message) };
}

/**
 * `uri`: what a resources/read asked for (an unknown resource's error names it). `challenge`: with
 * step-up over HTTP, the `WWW-Authenticate` of a 403 for the missing scopes (StreamSet.challenge).
 */
export function createRelay(exchange: Exchange, hostId: number, clientId: RequestId, method: string, logLevel: string | undefined, hooks: RelayHooks, uri?: string, challenge?: (missing: readonly string[]) => string): Relay {
  let current = exchange;
  let id = clientId;
  let level = logLevel;
  let streaming = false;
  let promoted = false;
  let parked = false;
  let finished = false;
  /** The host's answer while parked: it waits for the retry. */
  let held: JsonObject | undefined;

  const watch = (ex: Exchange) => {
    ex.onclose = () => {
      if (ex === current && !parked && !finished) hooks.abandon(relay);
    };
  };

  const finish = (message: JsonObject) => {
    if (parked) {
      held = message;
      return;
    }
    finished = true;
    const { status, body } = toModernAnswer(message, id, method, uri);
    if (streaming) {
      current.event(body);
      current.end();
    } else {
      current.json(status, body);
    }
    hooks.done(relay);
  };

  const relayNotification = (message: JsonObject, data: string) => {
    if (parked || finished) return;
    const params = isObject(message.params) ? message.params : undefined;
    if (message.method === 'notifications/progress' || (message.method === 'notifications/message' && passesLogLevel(params?.level, level))) {
      if (!streaming) {
        streaming = true;
        current.sse();
      }
      current.event(data);
    }
  };

  const relay: Relay = {
    hostId,
    method,
    onclose: undefined,
    get clientId() {
      return id;
    },
    get parked() {
      return parked;
    },
    drop() {
      if (finished) return;
      finished = true;
      parked = false;
      held = undefined;
      hooks.done(relay);
    },
    get finished() {
      return finished;
    },
    // Open for the host until the answer is out, also while parked (the answer is still owed).
    get closed() {
      return finished;
    },
    json(body) {
      // The common case, a result answering the live exchange, without parsing it.
      const text = parked || isCacheable(method) ? undefined : spliceComplete(body, hostId, JSON.stringify(id));
      if (text !== undefined) {
        finished = true;
        current.json(200, text);
        hooks.done(relay);
        return;
      }
      const message: unknown = JSON.parse(body);
      if (isObject(message)) finish(message);
    },
    sse() {
      // The host turns a stream into SSE for a slow answer (keep-alive comments then reach the
      // client) and right before a message it relays: that one may be a server->client request,
      // which never reaches the client as such, so decide after it was seen.
      promoted = true;
      queueMicrotask(() => {
        if (promoted && !parked && !finished && !streaming) {
          streaming = true;
          current.sse();
        }
        promoted = false;
      });
    },
    event(_eventId, data) {
      if (data === '' || finished) return;
      const message: unknown = JSON.parse(data);
      if (!isObject(message)) return;
      if (typeof message.method === 'string') {
        if ('id' in message) {
          promoted = false;
          hooks.ask(relay, message);
        }
        else relayNotification(message, data);
        return;
      }
      finish(message);
    },
    end() {
      if (finished) return;
      if (parked) {
        // The answer (or the host's end) waits for the retry, which gets it on rebind.
        held ??= { jsonrpc: '2.0', id: hostId, error: new GatewayError('GW_UPSTREAM_CLOSED', 'The upstream session ended while the call waited for input').toJsonRpc() };
        return;
      }
      // The host ended this stream without an answer: the host itself ended.
      finished = true;
      if (!current.closed) current.end();
      hooks.done(relay);
    },
    park(message) {
      if (finished) return;
      const { body } = toModernAnswer(message, id, method);
      parked = true;
      if (streaming) {
        current.event(body);
        current.end();
      } else {
        current.json(200, body);
      }
    },
    rebind(next, nextId, nextLevel) {
      current = next;
      id = nextId;
      level = nextLevel;
      streaming = false;
      parked = false;
      watch(next);
      if (held !== undefined) {
        const answer = held;
        held = undefined;
        finish(answer);
      }
    },
  };
  if (challenge !== undefined) {
    relay.challenge = (body, scopes) => {
      if (finished || parked || streaming) return relay.json(body);
      finished = true;
      const message: unknown = JSON.parse(body);
      current.json(403, toModernAnswer(isObject(message) ? message : {}, id, method).body, { 'www-authenticate': challenge(scopes) });
      hooks.done(relay);
    };
  }
  watch(exchange);
  return relay;
}
