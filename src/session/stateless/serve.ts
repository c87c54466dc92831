/**
 * Serving a 2026-07-28 request (stateless: no initialize, no session) on any endpoint, whatever
 * era its upstreams speak. The http layer has classified and checked the request (jsonrpc/era.ts);
 * here it is answered:
 *
 * - `server/discover` from the upstream side's handshake (a single target's own answer, an
 *   aggregate's merged one), in the 2026 shape, private to the caller;
 * - `subscriptions/listen` as a long-lived stream fed by the caller's hosts (listen.ts);
 * - a retry with `requestState` resumes its parked call (resume.ts, mrtr.ts);
 * - anything else is forwarded on a host (forward.ts, hosts.ts) with the envelope stripped, and answered
 *   through a relay (relay.ts) that shapes the answer and turns questions into input_required.
 */
import { isGatewayError, toErrorResponse, toGatewayError } from '../../errors/gateway-error.ts';
import { isObject } from '../../jsonrpc/envelope.ts';
import { META } from '../../jsonrpc/era.ts';
import type { JsonObject, JsonRpcRequest } from '../../jsonrpc/types.ts';
import { ALL_PROTOCOL_VERSIONS } from '../../jsonrpc/versions.ts';
import type { Logger } from '../../log/logger.ts';
import type { SessionStore } from '../store.ts';
import type { Exchange } from './exchange.ts';
import { callerOf, type StatelessRequest } from './caller.ts';
import { forward, type ForwardState } from './forward.ts';
import { askerOf, createHostPool } from './hosts.ts';
import { createListeners, type Listeners } from './listen.ts';
import { createUpstreamSubscriptions, type UpstreamSubscriptions } from './subscriptions.ts';
import { createInputBridge } from './mrtr.ts';
import { createStateCodec, type StateKeys } from './request-state.ts';
import { ownerOf, resume, type ResumeState } from './resume.ts';

export type { StatelessRequest } from './caller.ts';

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

/** Every revision a discover answer lists: this one, and the 2025 ones `initialize` still opens. */
const SUPPORTED = ALL_PROTOCOL_VERSIONS;

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

/** The server's parts, read by the module functions that serve (here, forward.ts, resume.ts). */
interface ServerState extends ForwardState, ResumeState {
  readonly listeners: Listeners;
  readonly subscriptions: UpstreamSubscriptions;
}

async function discover({ hosts }: ServerState, input: StatelessRequest): Promise<void> {
  const host = await hosts.acquire(callerOf(input), false);
  hosts.release(host);
  input.exchange.json(200, JSON.stringify({ jsonrpc: '2.0', id: input.request.id, result: discoverResult(host.init) }));
}

async function listen({ hosts, listeners, subscriptions }: ServerState, input: StatelessRequest): Promise<void> {
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
}

function serveOne(state: ServerState, input: StatelessRequest): void | Promise<void> {
  const { request, meta } = input;
  const level = meta[META.logLevel];
  const logLevel = typeof level === 'string' ? level : undefined;
  if (request.method === 'server/discover') return discover(state, input);
  if (request.method === 'subscriptions/listen') return listen(state, input);
  const requestState = request.params?.requestState;
  if (requestState === undefined) return forward(state, input, logLevel);
  resume(state, input, requestState, logLevel);
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
  const state: ServerState = { codec, bridge, hosts, cluster, listeners, subscriptions: createUpstreamSubscriptions(), hooks: new WeakMap() };

  return {
    serve(input) {
      // A call on an open host is served synchronously: no promise, no closure for its failure.
      try {
        serveOne(state, input)?.catch((err: unknown) => fail(input.exchange, input.request.id, err, log));
      } catch (err) {
        fail(input.exchange, input.request.id, err, log);
      }
    },
    ownerOf: (request) => ownerOf(state, request),
    close() {
      hosts.close();
      listeners.closeAll();
    },
  };
}
