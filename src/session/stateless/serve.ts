/**
 * Serving a 2026-07-28 request (stateless: no initialize, no session) on any endpoint, whatever
 * era its upstreams speak. The http layer has classified and checked the request (jsonrpc/era.ts);
 * here it is answered:
 *
 * - `server/discover` from the upstream side's handshake (a single target's own answer, an
 *   aggregate's merged one), in the 2026 shape, private to the caller;
 * - `subscriptions/listen` as a long-lived stream fed by the caller's hosts (listen.ts);
 * - a retry with `requestState` resumes its parked call (mrtr.ts);
 * - anything else is forwarded on a host (hosts.ts) with the envelope stripped, and answered
 *   through a relay (relay.ts) that shapes the answer and turns questions into input_required.
 */
import { GatewayError, isGatewayError, toErrorResponse, toGatewayError } from '../../errors/gateway-error.ts';
import { isObject } from '../../jsonrpc/envelope.ts';
import { META, withoutEnvelope } from '../../jsonrpc/era.ts';
import { carryInputResponses } from '../../jsonrpc/modern.ts';
import { mayAsk as callMayAsk, namedBy, subjectOf } from '../../jsonrpc/methods.ts';
import type { JsonObject, JsonRpcRequest } from '../../jsonrpc/types.ts';
import { ALL_PROTOCOL_VERSIONS } from '../../jsonrpc/versions.ts';
import type { Logger } from '../../log/logger.ts';
import type { Principal } from '../../upstream/caller.ts';
import type { RouteEndpoint } from '../endpoint-table.ts';
import { MODERN_REQUEST } from '../streams.ts';
import type { SessionStore } from '../store.ts';
import type { Exchange } from './exchange.ts';
import { ASKS_NOTHING, askingCapabilities } from './host-keys.ts';
import { askerOf, createHostPool, type Host, type HostCaller } from './hosts.ts';
import { createListeners } from './listen.ts';
import { createUpstreamSubscriptions } from './subscriptions.ts';
import { createInputBridge } from './mrtr.ts';
import { urlConsentShape } from './url-consent.ts';
import { createRelay, type RelayHooks } from './relay.ts';
import { createStateCodec, type StateClaims, type StateKeys } from './request-state.ts';

/** One classified 2026 request and what the http layer knows of its caller. */
export interface StatelessRequest {
  readonly endpoint: RouteEndpoint;
  readonly request: JsonRpcRequest;
  readonly meta: JsonObject;
  readonly principal: Principal | undefined;
  readonly authorization: string | undefined;
  /** The HTTP request's headers: the client's W3C trace context (`traceparent`) is read from them. */
  readonly headers: Readonly<Record<string, unknown>>;
  readonly exchange: Exchange;
  /** Step-up over HTTP: the `WWW-Authenticate` of a 403 for `missing` scopes (relay.ts); undefined: a JSON-RPC error. */
  readonly challenge?: ((missing: readonly string[]) => string) | undefined;
}

export interface StatelessOptions {
  store: SessionStore;
  logger: Logger;
  /** gateway.session.stateless */
  limits: { hostsPerCaller: number; hostIdleMs: number; inputWaitMs: number; maxListenStreams: number; maxParkedPerCaller: number; maxParked: number };
  /** With gateway.cluster: states sealed with the cluster's keys, naming this replica (docs/scaling.md, "The 2026 era across replicas"). */
  cluster?: StateKeys | undefined;
}

export interface StatelessServer {
  serve(input: StatelessRequest): void;
  /**
   * With gateway.cluster: the other replica holding the call a retry resumes (its `requestState`
   * opens, is not expired, and names that replica); undefined when this replica answers it (no
   * state, its own, one that does not open, a method that is never resumed).
   */
  ownerOf(request: JsonRpcRequest): string | undefined;
  close(): void;
}

/**
 * What a retry carries for the gateway (mrtr.ts), never for the upstream as params; a fresh call's
 * `inputResponses` go beside them to a 2026 upstream (forwardOn).
 */
const RETRY_KEYS: ReadonlySet<string> = new Set(['inputResponses', 'requestState']);
/** Every revision a discover answer lists: this one, and the 2025 ones `initialize` still opens. */
const SUPPORTED = ALL_PROTOCOL_VERSIONS;

/** A fresh call's own `inputResponses` (only a method that may ask has any): an object of answer objects, else GW_INVALID_PARAMS. */
function freshAnswers(request: JsonRpcRequest): JsonObject | undefined {
  const answers = callMayAsk(request.method) ? request.params?.inputResponses : undefined;
  if (answers === undefined) return undefined;
  if (!isObject(answers) || !Object.values(answers).every(isObject)) throw new GatewayError('GW_INVALID_PARAMS', 'Invalid params: inputResponses must be an object of answers by key');
  return answers;
}

function fail(exchange: Exchange, id: JsonRpcRequest['id'], err: unknown, logger: Logger): void {
  const error = toGatewayError(err);
  if (!isGatewayError(err)) logger.error({ err, correlationId: error.details.correlationId }, '2026 request failed');
  // The client's own faults and "come back later" keep their status; a failure of the upstream
  // side answers the request (200), as it would have inside a stream.
  const status = error.httpStatus >= 400 && error.httpStatus < 500 ? error.httpStatus : error.httpStatus === 503 ? 503 : 200;
  const retry = error.details.retryAfterSec;
  exchange.json(status, JSON.stringify(toErrorResponse(id, error)), typeof retry === 'number' ? { 'retry-after': String(retry) } : undefined);
}

/** The discover answer (SEP-2575) from what the upstream side said in its handshake. */
function discoverResult(init: JsonObject): JsonObject {
  const result: JsonObject = { resultType: 'complete', supportedVersions: SUPPORTED, capabilities: isObject(init.capabilities) ? init.capabilities : {} };
  if (isObject(init.serverInfo)) {
    result.serverInfo = init.serverInfo;
    result._meta = { [META.serverInfo]: init.serverInfo };
  }
  if (typeof init.instructions === 'string') result.instructions = init.instructions;
  // It depends on the caller (policy, upstream identity): never a shared cache.
  result.ttlMs = 0;
  result.cacheScope = 'private';
  return result;
}

export function createStatelessServer({ store, logger, limits, cluster }: StatelessOptions): StatelessServer {
  const log = logger.child({ component: 'stateless' });
  const codec = createStateCodec(cluster);
  const bridge = createInputBridge(codec, { waitMs: limits.inputWaitMs, perCaller: limits.maxParkedPerCaller, total: limits.maxParked }, log);
  const listeners = createListeners(limits.maxListenStreams);
  const hosts = createHostPool({
    store,
    logger: log,
    perCaller: limits.hostsPerCaller,
    idleMs: limits.hostIdleMs,
    onmessage(host, message) {
      if (typeof message.method !== 'string') return;
      if ('id' in message) bridge.ask(host, askerOf(host), message);
      else listeners.notify(host.scope, message);
    },
  });

  const subscriptions = createUpstreamSubscriptions();

  const callerOf = (input: StatelessRequest): HostCaller => {
    const info = input.meta[META.clientInfo];
    const capabilities = input.meta[META.clientCapabilities] as JsonObject;
    return {
      endpoint: input.endpoint,
      principal: input.principal,
      authorization: input.authorization,
      capabilities,
      asking: askingCapabilities(capabilities),
      clientInfo: isObject(info) ? info : undefined,
    };
  };

  /** One set of relay hooks per host (not per request). */
  const hooksOf = new WeakMap<Host, RelayHooks>();
  const hooksFor = (host: Host): RelayHooks => {
    let hooks = hooksOf.get(host);
    if (hooks === undefined) hooksOf.set(host, (hooks = makeHooks(host)));
    return hooks;
  };

  const makeHooks = (host: Host): RelayHooks => ({
    // A question belongs to the one call on the host that may ask, whichever stream the host wrote
    // it to: only tools/call, prompts/get and resources/read may answer input_required (SEP-2322).
    ask: (_relay, message) => bridge.ask(host, askerOf(host), message),
    done: (relay) => {
      bridge.forget(relay);
      host.askers.delete(relay);
      hosts.release(host);
    },
  });

  /** Forwards `request` on a host, its answer relayed to `exchange`; synchronous while a host is open. */
  const forward = (input: StatelessRequest, logLevel: string | undefined): void | Promise<void> => {
    // A fresh call (a retry with requestState is mrtr.ts's) may carry the client's own answers to
    // the upstream's input requests: checked for their shape here (the edge is the 2026 server),
    // then a 2026 upstream gets them unchanged beside the params and decides; a 2025 one never.
    const answers = freshAnswers(input.request);
    if (answers !== undefined) carryInputResponses(input.request, answers);
    const caller = callerOf(input);
    // A caller that declared nothing an upstream may ask for (sampling, elicitation, roots) cannot
    // be asked (the spec's rule for servers): its calls need no host of their own and share one.
    const mayAsk = callMayAsk(input.request.method) && caller.asking !== ASKS_NOTHING;
    const host = hosts.acquire(caller, mayAsk);
    if (host instanceof Promise) return host.then((opened) => forwardOn(opened, input, mayAsk, logLevel));
    forwardOn(host, input, mayAsk, logLevel);
  };

  const forwardOn = (host: Host, input: StatelessRequest, mayAsk: boolean, logLevel: string | undefined) => {
    const { request, exchange } = input;
    // The client went away while its host opened: that is the cancel, and nothing went upstream yet.
    if (exchange.closed) return hosts.release(host);
    try {
      // The in-flight caps hold for 2026 requests too: 503 GW_OVERLOADED, never a queue.
      host.session.admit(1);
    } catch (err) {
      hosts.release(host);
      throw err;
    }
    const named = namedBy(request.method, request.params);
    const uri = subjectOf(request.method)?.kind === 'uri' ? named : undefined;
    // Only calls that may answer input_required (SEP-2322) turn a consent error into one.
    const shape = callMayAsk(request.method) ? urlConsentShape(input.meta[META.clientCapabilities]) : undefined;
    const relay = createRelay(exchange, host.nextCall++, request.id, request.method, logLevel, hooksFor(host), uri, input.challenge, shape, named);
    if (mayAsk) host.askers.add(relay);
    const params = withoutEnvelope(request.params, RETRY_KEYS);
    if (params !== undefined) request.params = params;
    // The client's own request object and id: the core's correlator is the one rewrite upstream.
    // The caller is this request's own: step-up judges its token, not the one that opened the host.
    host.session.serve([request], relay, MODERN_REQUEST, input.headers, input.principal);
  };

  const discover = async (input: StatelessRequest) => {
    const host = await hosts.acquire(callerOf(input), false);
    hosts.release(host);
    input.exchange.json(200, JSON.stringify({ jsonrpc: '2.0', id: input.request.id, result: discoverResult(host.init) }));
  };

  const listen = async (input: StatelessRequest) => {
    // A listen stream keeps one host of the caller open, so the upstream has someone to tell.
    const host = await hosts.acquire(callerOf(input), false);
    const caps = isObject(host.init.capabilities) ? host.init.capabilities : {};
    const canSubscribe = isObject(caps.resources) && caps.resources.subscribe === true;
    /** Every URI held for the stream (granted or not): dropped when it ends. */
    let held: readonly string[] = [];
    const grant = async (uris: readonly string[]) => {
      if (!canSubscribe) return undefined;
      held = uris;
      // Subscribed through the host's session: a URI its filters or policy deny is refused there.
      const subscribed = await Promise.all(uris.map((uri) => subscriptions.add(host, uri)));
      return uris.filter((_, i) => subscribed[i]);
    };
    const onend = () => {
      for (const uri of held) subscriptions.drop(host, uri);
      hosts.release(host);
    };
    try {
      await listeners.open(host.scope, input.request, input.exchange, onend, grant);
    } catch (err) {
      hosts.release(host);
      throw err;
    }
  };

  const serve = (input: StatelessRequest): void | Promise<void> => {
    const { request, meta } = input;
    const level = meta[META.logLevel];
    const logLevel = typeof level === 'string' ? level : undefined;
    if (request.method === 'server/discover') return discover(input);
    if (request.method === 'subscriptions/listen') return listen(input);
    const state = request.params?.requestState;
    if (state === undefined) return forward(input, logLevel);
    const claims = codec.open(state);
    if (claims === undefined) throw new GatewayError('GW_INVALID_REQUEST_STATE', 'Invalid params: requestState was not issued by this gateway or was altered');
    // Another replica's call, not relayed to it (expired, or already a hop): nothing here to resume.
    if (claims.replica !== cluster?.replica) throw new GatewayError('GW_INVALID_REQUEST_STATE', 'Invalid params: requestState is unknown, expired, already used or not yours');
    try {
      bridge.resume(claims, request, hosts.scopeOf(callerOf(input)), input.exchange, logLevel, hosts.byId(claims.host), input.principal);
    } catch (err) {
      // SEP-2350 over HTTP: the 403 names every scope the call needs, as the chain's challenge does.
      const required = err instanceof GatewayError && err.code === 'GW_STEP_UP_REQUIRED' ? err.details.requiredScopes : undefined;
      if (input.challenge === undefined || !Array.isArray(required)) throw err;
      input.exchange.json(403, JSON.stringify(toErrorResponse(request.id, err as GatewayError)), { 'www-authenticate': input.challenge(required as string[]) });
    }
  };

  return {
    serve(input) {
      // A call on an open host is served synchronously: no promise, no closure for its failure.
      try {
        serve(input)?.catch((err: unknown) => fail(input.exchange, input.request.id, err, log));
      } catch (err) {
        fail(input.exchange, input.request.id, err, log);
      }
    },
    ownerOf(request) {
      const state = request.params?.requestState;
      if (cluster === undefined || state === undefined || request.method === 'server/discover' || request.method === 'subscriptions/listen') return undefined;
      const claims = codec.open(state);
      const owner = claims?.replica;
      return owner === undefined || owner === cluster.replica || (claims as StateClaims).expires < Date.now() ? undefined : owner;
    },
    close() {
      hosts.close();
      listeners.closeAll();
    },
  };
}
