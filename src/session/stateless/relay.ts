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
import { isObject } from '../../jsonrpc/envelope.ts';
import type { JsonObject, RequestId } from '../../jsonrpc/types.ts';
import type { ResponseSink } from '../streams.ts';
import type { Exchange } from './exchange.ts';
import { answerOf, passesLogLevel, toModernAnswer } from './modern-answer.ts';

export { passesLogLevel, spliceComplete, toModernAnswer } from './modern-answer.ts';

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

/** The shape of a refusal over HTTP (step-up): `WWW-Authenticate` for the missing scopes. */
type Challenge = (missing: readonly string[]) => string;

/**
 * The relay of one call: a class, so a request costs one object and its fields, not a closure per
 * method (issue 34: the 2026 path's per-request objects). `take` is the one bound function: the
 * stream set calls it unbound (streams.ts).
 */
class StatelessRelay implements Relay {
  readonly call: number;
  readonly method: string;
  readonly named: string | undefined;
  // Set by the chain's step-up stage (stream-shapes.ts): how a retry's own token is judged. An own
  // property, so the chain finds it (`'stepUp' in sink`).
  stepUp: Relay['stepUp'] = undefined;
  onclose: (() => void) | undefined = undefined;
  challenge?: (message: JsonObject, scopes: readonly string[]) => void;
  readonly take: (message: JsonObject, final: boolean) => void;
  #current: Exchange;
  #id: RequestId;
  #level: string | undefined;
  #streaming = false;
  #parked = false;
  #finished = false;
  /** The host's answer while parked: it waits for the retry. */
  #held: JsonObject | undefined = undefined;
  readonly #hooks: RelayHooks;
  readonly #uri: string | undefined;
  readonly #shape: ((answer: JsonObject) => JsonObject) | undefined;
  readonly #challenge: Challenge | undefined;

  constructor(exchange: Exchange, call: number, clientId: RequestId, method: string, logLevel: string | undefined, hooks: RelayHooks, uri: string | undefined, challenge: Challenge | undefined, shape: ((answer: JsonObject) => JsonObject) | undefined, named: string | undefined) {
    this.call = call;
    this.method = method;
    this.named = named;
    this.#current = exchange;
    this.#id = clientId;
    this.#level = logLevel;
    this.#hooks = hooks;
    this.#uri = uri;
    this.#shape = shape;
    this.#challenge = challenge;
    this.take = (message, final) => this.#take(message, final);
    if (challenge !== undefined) this.challenge = (answer, scopes) => this.#refuseWithChallenge(answer, scopes);
    this.#watch(exchange);
  }

  get clientId(): RequestId {
    return this.#id;
  }
  get parked(): boolean {
    return this.#parked;
  }
  get finished(): boolean {
    return this.#finished;
  }
  // Open for the host until the answer is out, also while parked (the answer is still owed).
  get closed(): boolean {
    return this.#finished;
  }

  // A sink that takes objects gets no text: the stream set hands every message to `take`.
  json(): void {}
  event(): void {}

  sse(): void {
    // An answer slower than the stream set waits (streams.ts): SSE, so keep-alives reach the client.
    if (this.#parked || this.#finished || this.#streaming) return;
    this.#streaming = true;
    this.#current.sse();
  }

  end(): void {
    if (this.#finished) return;
    if (this.#parked) {
      // The answer (or the host's end) waits for the retry, which gets it on rebind.
      this.#held ??= { jsonrpc: '2.0', id: this.#id as JsonObject[string], error: new GatewayError('GW_UPSTREAM_CLOSED', 'The upstream session ended while the call waited for input').toJsonRpc() };
      return;
    }
    // The host ended this stream without an answer: the host itself ended.
    this.#finished = true;
    if (!this.#current.closed) this.#current.end();
    this.#hooks.done(this);
  }

  drop(): void {
    if (!this.#finished) this.#abandon();
  }

  refuse(error: GatewayError): void {
    if (this.#finished) return;
    const body = JSON.stringify(toErrorResponse(this.#id, error));
    const retry = error.details.retryAfterSec;
    if (this.#streaming) this.#write(200, body);
    else this.#current.json(error.httpStatus, body, typeof retry === 'number' ? { 'retry-after': String(retry) } : undefined);
    this.#abandon();
  }

  park(message: JsonObject): void {
    if (this.#finished) return;
    const { body } = toModernAnswer(message, this.#id, this.method);
    this.#parked = true;
    this.#write(200, body);
  }

  rebind(next: Exchange, nextId: RequestId, nextLevel: string | undefined): void {
    this.#current = next;
    this.#id = nextId;
    this.#level = nextLevel;
    this.#streaming = false;
    this.#parked = false;
    this.#watch(next);
    const answer = this.#held;
    if (answer !== undefined) {
      this.#held = undefined;
      this.#finish(answer);
    }
  }

  #take(message: JsonObject, final: boolean): void {
    if (this.#finished) return;
    if (final) return this.#finish(message);
    if (typeof message.method !== 'string') return;
    if ('id' in message) this.#hooks.ask(this, message);
    else this.#relayNotification(message);
  }

  #write(status: number, body: string): void {
    if (this.#streaming) {
      this.#current.event(body);
      this.#current.end();
    } else {
      this.#current.json(status, body);
    }
  }

  #finish(answer: JsonObject): void {
    // The caller's own answer shape (url-consent.ts: a consent error as an input_required round).
    const message = this.#shape === undefined ? answer : this.#shape(answer);
    if (this.#parked) {
      this.#held = message;
      return;
    }
    this.#finished = true;
    const { status, body } = answerOf(message, this.#id, this.method, this.#uri);
    this.#write(status, body);
    this.#hooks.done(this);
  }

  /** Closes the sink: the core withdraws the request (cancel upstream); then nothing more is relayed. */
  #abandon(): void {
    this.#parked = false;
    this.#held = undefined;
    this.onclose?.();
    if (this.#finished) return;
    this.#finished = true;
    this.#hooks.done(this);
  }

  #watch(ex: Exchange): void {
    ex.onclose = () => {
      if (ex === this.#current && !this.#parked && !this.#finished) this.#abandon();
    };
  }

  #relayNotification(message: JsonObject): void {
    if (this.#parked) return;
    const params = isObject(message.params) ? message.params : undefined;
    if (message.method === 'notifications/progress' || (message.method === 'notifications/message' && passesLogLevel(params?.level, this.#level))) {
      if (!this.#streaming) {
        this.#streaming = true;
        this.#current.sse();
      }
      this.#current.event(JSON.stringify(message));
    }
  }

  #refuseWithChallenge(answer: JsonObject, scopes: readonly string[]): void {
    // Too late for a status (a stream began, or the call is parked): the refusal is its answer.
    if (this.#finished || this.#parked || this.#streaming) return this.#finish(answer);
    this.#finished = true;
    this.#current.json(403, toModernAnswer(answer, this.#id, this.method).body, { 'www-authenticate': (this.#challenge as Challenge)(scopes) });
    this.#hooks.done(this);
  }
}

/**
 * `uri`: what a resources/read asked for (an unknown resource's error names it). `challenge`: with
 * step-up over HTTP, the `WWW-Authenticate` of a 403 for the missing scopes (StreamSet.challenge).
 * `shape`: rewrites the final answer (stateless/url-consent.ts).
 */
export function createRelay(exchange: Exchange, call: number, clientId: RequestId, method: string, logLevel: string | undefined, hooks: RelayHooks, uri?: string, challenge?: Challenge, shape?: (answer: JsonObject) => JsonObject, named?: string): Relay {
  return new StatelessRelay(exchange, call, clientId, method, logLevel, hooks, uri, challenge, shape, named);
}
