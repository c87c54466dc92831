/**
 * The bridge from 2025 server->client requests to 2026 multi-round-trip requests (SEP-2322).
 *
 * A 2025 upstream asks its client mid-call (sampling/createMessage, elicitation/create, roots/list)
 * and waits. A 2026 client cannot be asked: its request must instead be answered with an
 * `input_required` result listing what is needed, and the client retries the same method with a
 * new id, `inputResponses` and the `requestState` it was given. So the gateway keeps the upstream
 * call waiting, answers the client with the questions, and on the retry hands each answer to the
 * upstream under the id it asked with; the call then goes on, and its result (or the next round of
 * questions) answers the retry.
 *
 * Questions that arrive together (within GATHER_MS) go out in one round. A retry that leaves some
 * unanswered gets them again in a new round (what SEP-2322 asks of servers). The state is sealed
 * (request-state.ts) and good for one round; a round not resumed within `waitMs` cancels the call.
 *
 * Parked calls have their own bound, per scope (endpoint, principal, credential: every anonymous
 * caller is one) and in all: a caller that parks round after round and never comes back must not
 * hold the upstream calls, held sessions and in-flight slots every other caller needs. A round past
 * it is refused (GW_INPUT_ROUNDS_LIMIT, 503 + Retry-After) and its call cancelled upstream; the
 * caller's other requests, and everyone else's, are served as before (hosts.ts makes room beside
 * hosts that only hold parked calls).
 */
import { GatewayError } from '../../errors/gateway-error.ts';
import { isObject } from '../../jsonrpc/envelope.ts';
import { namedBy } from '../../jsonrpc/methods.ts';
import { META_INPUT_KEY } from '../../jsonrpc/modern.ts';
import type { JsonObject, JsonRpcErrorObject, JsonRpcRequest, JsonRpcResponse, RequestId } from '../../jsonrpc/types.ts';
import type { Logger } from '../../log/logger.ts';
import type { Principal } from '../../upstream/caller.ts';
import type { Exchange } from './exchange.ts';
import type { Host } from './hosts.ts';
import type { Relay } from './relay.ts';
import type { StateClaims, StateCodec } from './request-state.ts';

/** Questions an upstream asks within this window after the first go out in the same round. */
export const GATHER_MS = 20;

interface Ask {
  readonly upstreamId: RequestId;
  readonly method: string;
  readonly params: JsonObject;
}

interface Round {
  readonly host: Host;
  readonly asks: Map<string, Ask>;
  n: number;
  gather: NodeJS.Timeout | undefined;
  expiry: NodeJS.Timeout | undefined;
}

export interface InputBridge {
  /** A server->client request of `host`; `relay`: the call it belongs to (undefined: none can be told). */
  ask(host: Host, relay: Relay | undefined, request: JsonObject): void;
  /** A retry carrying a sealed state: answers go upstream and the retry takes over the call. */
  /** Throws GW_INVALID_REQUEST_STATE for a state that is not this retry's, GW_STEP_UP_REQUIRED when the retry's own token lacks the item's scopes. */
  resume(claims: StateClaims, retry: JsonRpcRequest, scope: string, exchange: Exchange, logLevel: string | undefined, host: Host | undefined, caller: Principal | undefined): void;
  /** The call ended: its round goes. */
  forget(relay: Relay): void;
}

const KEY_PREFIX: Readonly<Record<string, string>> = { 'sampling/createMessage': 'sampling', 'elicitation/create': 'elicitation', 'roots/list': 'roots' };

/**
 * The params of a question without the name a 2026 upstream gave it (input-requests.ts puts it
 * in `_meta`), and that name: a 2026 client is asked under the upstream's own name. A 2025
 * upstream's questions have none and get one of ours.
 */
function named(request: JsonObject): { params: JsonObject; name: string | undefined } {
  const params = isObject(request.params) ? request.params : {};
  const meta = params._meta;
  if (!isObject(meta) || !(META_INPUT_KEY in meta)) return { params, name: undefined };
  const { [META_INPUT_KEY]: name, ...rest } = meta;
  const { _meta: _m, ...others } = params;
  return { params: Object.keys(rest).length === 0 ? others : { ...others, _meta: rest }, name: typeof name === 'string' && name !== '' ? name : undefined };
}

export interface ParkingLimits {
  /** How long a parked round waits for its retry (ms). */
  readonly waitMs: number;
  /** Parked calls per scope. */
  readonly perCaller: number;
  /** Parked calls in all. */
  readonly total: number;
}

export function createInputBridge(codec: StateCodec, limits: ParkingLimits, logger: Logger): InputBridge {
  return new Parking(codec, limits, logger);
}

/** What a round needs of its bridge. */
interface ParkingState {
  readonly codec: StateCodec;
  readonly limits: ParkingLimits;
  readonly logger: Logger;
  readonly rounds: Map<Relay, Round>;
  /** Parked calls per scope, and their number in all. */
  readonly parked: Map<string, Set<Relay>>;
  parkedTotal: number;
}

/**
 * The bridge is its own state (ParkingState: the rounds by call, the parked calls by scope); its
 * methods are on the class, one copy for the gateway. A round's flush and expiry are module
 * functions that the timers call with the state as their argument, so no closure per round.
 */
class Parking implements InputBridge, ParkingState {
  readonly codec: StateCodec;
  readonly limits: ParkingLimits;
  readonly logger: Logger;
  readonly rounds = new Map<Relay, Round>();
  readonly parked = new Map<string, Set<Relay>>();
  parkedTotal = 0;
  private seq = 0;

  constructor(codec: StateCodec, limits: ParkingLimits, logger: Logger) {
    this.codec = codec;
    this.limits = limits;
    this.logger = logger;
  }

  ask(host: Host, relay: Relay | undefined, request: JsonObject): void {
    const id = request.id as RequestId;
    const method = typeof request.method === 'string' ? request.method : '';
    if (method === 'ping') return answerUpstream(host, id, { result: {} });
    const prefix = KEY_PREFIX[method];
    if (relay === undefined || relay.finished || prefix === undefined) {
      // No single call it belongs to (none, or several that may ask at once), or a question the
      // 2026 revision has no input request for: refused, so the upstream does not wait forever.
      this.logger.warn({ session: host.id, method }, 'a server->client request that no one 2026 call can answer; refused to the upstream');
      return answerUpstream(host, id, { error: new GatewayError('GW_SERVER_REQUEST_UNATTRIBUTABLE', `No single client request can answer ${method} here`).toJsonRpc() });
    }
    let round = this.rounds.get(relay);
    if (round === undefined) this.rounds.set(relay, (round = { host, asks: new Map(), n: 0, gather: undefined, expiry: undefined }));
    const { params, name } = named(request);
    // The upstream's name, unless the round holds it already (then one of ours: no answer is lost).
    round.asks.set(name !== undefined && !round.asks.has(name) ? name : `${prefix}-${++this.seq}`, { upstreamId: id, method, params });
    if (!relay.parked) round.gather ??= setTimeout(flush, GATHER_MS, this, relay, round);
  }

  resume(claims: StateClaims, retry: JsonRpcRequest, scope: string, exchange: Exchange, logLevel: string | undefined, host: Host | undefined, caller: Principal | undefined): void {
    const relay = host === undefined ? undefined : [...host.askers].find((r) => r.call === claims.call);
    const round = relay === undefined ? undefined : this.rounds.get(relay);
    const stale =
      host === undefined || relay === undefined || round === undefined || !relay.parked || relay.call !== claims.call ||
      claims.scope !== scope || claims.method !== retry.method || claims.round !== round.n || claims.expires < Date.now() ||
      // The retry is the same request (SEP-2322): a state presented with another tool, prompt or URI
      // would hand that item's caller the parked call's result, judged and audited as something else.
      namedBy(retry.method, retry.params) !== relay.named;
    if (stale) throw new GatewayError('GW_INVALID_REQUEST_STATE', 'Invalid params: requestState is unknown, expired, already used or not yours');
    // Judged by its own token, like any request: a narrower one does not finish a stepped-up call
    // (the round stays parked for a token that may).
    const need = relay.stepUp?.(caller);
    if (need !== undefined) throw new GatewayError('GW_STEP_UP_REQUIRED', undefined, { requiredScopes: [...need.required], missingScopes: [...need.missing] });
    const responses = retry.params?.inputResponses;
    if (!isObject(responses)) throw new GatewayError('GW_INVALID_PARAMS', 'Invalid params: inputResponses must be an object of answers by key');
    clearTimeout(round.expiry);
    unpark(this, relay, round.host.scope);
    for (const [key, ask] of round.asks) {
      const answer = Object.hasOwn(responses, key) ? responses[key] : undefined;
      // An answer of the wrong form is not an answer: its question is asked again below.
      if (!isObject(answer)) continue;
      round.asks.delete(key);
      answerUpstream(round.host, ask.upstreamId, { result: answer });
    }
    relay.rebind(exchange, retry.id, logLevel);
    if (round.asks.size > 0) flush(this, relay, round);
  }

  forget(relay: Relay): void {
    const round = this.rounds.get(relay);
    if (round === undefined) return;
    clearTimeout(round.gather);
    clearTimeout(round.expiry);
    this.rounds.delete(relay);
    unpark(this, relay, round.host.scope);
  }
}

function unpark(state: ParkingState, relay: Relay, scope: string): void {
  const set = state.parked.get(scope);
  if (set === undefined || !set.delete(relay)) return;
  state.parkedTotal--;
  if (set.size === 0) state.parked.delete(scope);
}

/** The refusal of one more parked call in `scope`, or undefined when there is room. */
function overLimit({ parked, parkedTotal, limits }: ParkingState, scope: string): GatewayError | undefined {
  const mine = parked.get(scope)?.size ?? 0;
  if (mine < limits.perCaller && parkedTotal < limits.total) return undefined;
  const which = mine >= limits.perCaller ? 'caller' : 'total';
  const limit = which === 'caller' ? limits.perCaller : limits.total;
  return new GatewayError('GW_INPUT_ROUNDS_LIMIT', `${limit} calls already wait for input${which === 'caller' ? ' from this caller' : ''}; answer one of them, then retry`, {
    kind: which,
    limit,
    retryAfterSec: Math.max(1, Math.min(30, Math.ceil(limits.waitMs / 1_000))),
  });
}

/** Answers one of `host`'s questions (the session recorded whom to give it to before asking). */
function answerUpstream(host: Host, id: RequestId, outcome: { result: JsonObject } | { error: JsonRpcErrorObject }): void {
  const response = { jsonrpc: '2.0', id, ...outcome } as JsonRpcResponse;
  host.session.handleResponse(response).catch(() => undefined);
}

/** Sends the round's open questions to the client, parking the call until the retry. */
function flush(state: ParkingState, relay: Relay, round: Round): void {
  const { waitMs } = state.limits;
  round.gather = undefined;
  if (relay.finished || relay.parked || round.asks.size === 0) return;
  const host = round.host;
  const refusal = overLimit(state, host.scope);
  if (refusal !== undefined) {
    state.logger.warn({ session: host.id, kind: refusal.details.kind, limit: refusal.details.limit }, 'too many calls parked for input; this one is refused and cancelled upstream');
    for (const ask of round.asks.values()) answerUpstream(host, ask.upstreamId, { error: refusal.toJsonRpc() });
    state.rounds.delete(relay);
    return relay.refuse(refusal);
  }
  round.n++;
  const requestState = state.codec.seal({ scope: host.scope, host: host.id, call: relay.call, method: relay.method, round: round.n, expires: Date.now() + waitMs });
  // fromEntries defines each key as its own property, whatever the name (even `__proto__`).
  const inputRequests: JsonObject = Object.fromEntries([...round.asks].map(([key, ask]) => [key, { method: ask.method, params: ask.params }]));
  relay.park({ jsonrpc: '2.0', id: relay.clientId as JsonObject[string], result: { resultType: 'input_required', inputRequests, requestState } });
  let mine = state.parked.get(host.scope);
  if (mine === undefined) state.parked.set(host.scope, (mine = new Set()));
  if (!mine.has(relay)) {
    mine.add(relay);
    state.parkedTotal++;
  }
  clearTimeout(round.expiry);
  round.expiry = setTimeout(expire, waitMs, state, relay, round);
  round.expiry.unref();
}

function expire(state: ParkingState, relay: Relay, round: Round): void {
  if (!relay.parked) return;
  state.logger.info({ session: round.host.id }, 'a 2026 client did not come back with the input asked for in time; the call is cancelled');
  state.rounds.delete(relay);
  unpark(state, relay, round.host.scope);
  // Closing its stream: the session core cancels the call upstream (cancelOnClose).
  relay.drop();
}
