/**
 * The response side of one 2026 request served by a held 2025 session (a host, hosts.ts): the sink
 * of the request's stream in the session core (a MODERN_REQUEST stream, streams.ts), taking each
 * message as the object the core has and writing to the client's exchange what the 2026 revision
 * lets through, in its shape.
 *
 * - The answer gets `resultType` (and cache hints on cacheable results); it already carries the
 *   client's own id (the core served the request under it). An error answering the whole response
 *   gets the status the spec gives its code (exchange.ts).
 * - Progress passes; a log line passes only if the request set `_meta` logLevel, at that level or
 *   above; nothing else that belongs to no request rides on a request's stream.
 * - A server->client request is never written: it goes to `ask` (mrtr.ts), which turns it into an
 *   `input_required` result. Then the relay is parked: the exchange has its answer, the upstream call
 *   runs on, and the client's retry rebinds the relay to its own exchange and id.
 * - The client going away from an unparked exchange closes the sink: the core's `cancelOnClose`
 *   withdraws the request (in 2026 closing the response stream cancels the request).
 */
import { GatewayError, toErrorResponse } from '../../errors/gateway-error.ts';
import { JsonRpcCode } from '../../jsonrpc/codes.ts';
import { isObject } from '../../jsonrpc/envelope.ts';
import { isCacheable } from '../../jsonrpc/methods.ts';
import type { JsonObject, RequestId } from '../../jsonrpc/types.ts';
import { hasRawText, toWireText } from '../../jsonrpc/wire-text.ts';
import type { ResponseSink } from '../streams.ts';
import { type Exchange, statusOfError } from './exchange.ts';

export interface RelayHooks {
  /** A server->client request the host routed to this request. */
  ask(relay: Relay, request: JsonObject): void;
  /** The relay delivered its final answer, or its host ended, or the call was given up. */
  done(relay: Relay): void;
}

export interface Relay extends ResponseSink {
  /** The call's handle in its host (what a requestState names), unique in the host. */
  readonly call: number;
  readonly method: string;
  /** The tool or prompt name or resource URI the request named, as sent (a retry must name the same). */
  readonly named: string | undefined;
  /** The id of the client request the relay answers now (the retry's, after a rebind). */
  readonly clientId: RequestId;
  readonly parked: boolean;
  readonly finished: boolean;
  /** Gives the call up while parked (nobody came back in time): cancelled upstream, nothing more relayed. */
  drop(): void;
  /** Answers the current exchange with `message` (an input_required result) and waits for a retry. */
  park(message: JsonObject): void;
  /** Answers the current exchange with `error` instead of parking, and gives the call up (cancelled upstream). */
  refuse(error: GatewayError): void;
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
 * The start of a large answer's own line (wire-text.ts keeps it, the client's id already spliced
 * in): `{"jsonrpc":"2.0","id":<id>,"result":{` (jsonrpc before or after the id, any spacing). Only
 * `jsonrpc` and `id` may come before `result`, so nothing earlier can hold a look-alike of these keys.
 */
const PLAIN_HEAD = /^\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(?:"(?:[^"\\]|\\.)*"|[-+.\deE]+)\s*,\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"result"\s*:\s*\{/;

/**
 * A large plain result (one the reader kept the line of) in the 2026 shape without serializing it
 * again: `resultType` spliced into its text. Undefined when the text is not of that plain form.
 */
export function spliceComplete(body: string): string | undefined {
  const head = PLAIN_HEAD.exec(body);
  if (head === null || body.includes('"resultType"')) return undefined;
  const rest = body.slice(head[0].length);
  const empty = /^\s*\}/.test(rest);
  return `${head[0]}"resultType":"complete"${empty ? '' : ','}${rest}`;
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

/** The answer's text: a large plain result's own line with `resultType` spliced in, else shaped and serialized once. */
function answerOf(message: JsonObject, id: RequestId, method: string, uri: string | undefined): { status: number; body: string } {
  if (hasRawText(message) && message.id === id && isObject(message.result) && !isCacheable(method)) {
    const body = spliceComplete(toWireText(message as never));
    if (body !== undefined) return { status: 200, body };
  }
  return toModernAnswer(message, id, method, uri);
}

/**
 * `uri`: what a resources/read asked for (an unknown resource's error names it). `challenge`: with
 * step-up over HTTP, the `WWW-Authenticate` of a 403 for the missing scopes (StreamSet.challenge).
 * `shape`: rewrites the final answer (stateless/url-consent.ts).
 */
export function createRelay(exchange: Exchange, call: number, clientId: RequestId, method: string, logLevel: string | undefined, hooks: RelayHooks, uri?: string, challenge?: (missing: readonly string[]) => string, shape?: (answer: JsonObject) => JsonObject, named?: string): Relay {
  let current = exchange;
  let id = clientId;
  let level = logLevel;
  let streaming = false;
  let parked = false;
  let finished = false;
  /** The host's answer while parked: it waits for the retry. */
  let held: JsonObject | undefined;

  const write = (status: number, body: string) => {
    if (streaming) {
      current.event(body);
      current.end();
    } else {
      current.json(status, body);
    }
  };

  const finish = (answer: JsonObject) => {
    // The caller's own answer shape (url-consent.ts: a consent error as an input_required round).
    const message = shape === undefined ? answer : shape(answer);
    if (parked) {
      held = message;
      return;
    }
    finished = true;
    const { status, body } = answerOf(message, id, method, uri);
    write(status, body);
    hooks.done(relay);
  };

  /** Closes the sink: the core withdraws the request (cancel upstream); then nothing more is relayed. */
  const abandon = () => {
    parked = false;
    held = undefined;
    relay.onclose?.();
    if (finished) return;
    finished = true;
    hooks.done(relay);
  };

  const watch = (ex: Exchange) => {
    ex.onclose = () => {
      if (ex === current && !parked && !finished) abandon();
    };
  };

  const relayNotification = (message: JsonObject) => {
    if (parked) return;
    const params = isObject(message.params) ? message.params : undefined;
    if (message.method === 'notifications/progress' || (message.method === 'notifications/message' && passesLogLevel(params?.level, level))) {
      if (!streaming) {
        streaming = true;
        current.sse();
      }
      current.event(JSON.stringify(message));
    }
  };

  const relay: Relay = {
    call,
    method,
    named,
    // Set by the chain's step-up stage (stream-shapes.ts): how a retry's own token is judged.
    stepUp: undefined,
    onclose: undefined,
    get clientId() {
      return id;
    },
    get parked() {
      return parked;
    },
    get finished() {
      return finished;
    },
    // Open for the host until the answer is out, also while parked (the answer is still owed).
    get closed() {
      return finished;
    },
    drop() {
      if (!finished) abandon();
    },
    take(message, final) {
      if (finished) return;
      if (final) return finish(message);
      if (typeof message.method !== 'string') return;
      if ('id' in message) hooks.ask(relay, message);
      else relayNotification(message);
    },
    // A sink that takes objects gets no text: the stream set hands every message to `take`.
    json() {},
    event() {},
    sse() {
      // An answer slower than the stream set waits (streams.ts): SSE, so keep-alives reach the client.
      if (parked || finished || streaming) return;
      streaming = true;
      current.sse();
    },
    end() {
      if (finished) return;
      if (parked) {
        // The answer (or the host's end) waits for the retry, which gets it on rebind.
        held ??= { jsonrpc: '2.0', id: id as JsonObject[string], error: new GatewayError('GW_UPSTREAM_CLOSED', 'The upstream session ended while the call waited for input').toJsonRpc() };
        return;
      }
      // The host ended this stream without an answer: the host itself ended.
      finished = true;
      if (!current.closed) current.end();
      hooks.done(relay);
    },
    refuse(error) {
      if (finished) return;
      const body = JSON.stringify(toErrorResponse(id, error));
      const retry = error.details.retryAfterSec;
      if (streaming) write(200, body);
      else current.json(error.httpStatus, body, typeof retry === 'number' ? { 'retry-after': String(retry) } : undefined);
      abandon();
    },
    park(message) {
      if (finished) return;
      const { body } = toModernAnswer(message, id, method);
      parked = true;
      write(200, body);
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
    relay.challenge = (answer, scopes) => {
      // Too late for a status (a stream began, or the call is parked): the refusal is its answer.
      if (finished || parked || streaming) return finish(answer);
      finished = true;
      current.json(403, toModernAnswer(answer, id, method).body, { 'www-authenticate': challenge(scopes) });
      hooks.done(relay);
    };
  }
  watch(exchange);
  return relay;
}
