/**
 * A fresh 2026 request (no `requestState`) admitted onto a host and forwarded (serve.ts): its own
 * `inputResponses` checked, a host acquired for its caller (hosts.ts), the in-flight caps applied,
 * and its answer relayed to the client's exchange (relay.ts). Module functions over the server's
 * state, so a request on an open host makes no closure of its own.
 */
import { GatewayError } from '../../errors/gateway-error.ts';
import { isObject } from '../../jsonrpc/envelope.ts';
import { META, withoutEnvelope } from '../../jsonrpc/era.ts';
import { carryInputResponses } from '../../jsonrpc/modern.ts';
import { mayAsk as callMayAsk, namedBy, subjectOf } from '../../jsonrpc/methods.ts';
import type { JsonObject, JsonRpcRequest } from '../../jsonrpc/types.ts';
import { MODERN_REQUEST } from '../streams.ts';
import { callerOf, type StatelessRequest } from './caller.ts';
import { ASKS_NOTHING } from './host-keys.ts';
import { askerOf, type Host, type HostPool } from './hosts.ts';
import type { InputBridge } from './mrtr.ts';
import { createRelay, type RelayHooks } from './relay.ts';
import { urlConsentShape } from './url-consent.ts';

/** What of the server forwarding reads. */
export interface ForwardState {
  readonly hosts: HostPool;
  readonly bridge: InputBridge;
  /** One set of relay hooks per host (not per request). */
  readonly hooks: WeakMap<Host, RelayHooks>;
}

/**
 * What a retry carries for the gateway (mrtr.ts), never for the upstream as params; a fresh call's
 * `inputResponses` go beside them to a 2026 upstream (forwardOn).
 */
const RETRY_KEYS: ReadonlySet<string> = new Set(['inputResponses', 'requestState']);

/** A fresh call's own `inputResponses` (only a method that may ask has any): an object of answer objects, else GW_INVALID_PARAMS. */
function freshAnswers(request: JsonRpcRequest): JsonObject | undefined {
  const answers = callMayAsk(request.method) ? request.params?.inputResponses : undefined;
  if (answers === undefined) return undefined;
  if (!isObject(answers) || !Object.values(answers).every(isObject)) throw new GatewayError('GW_INVALID_PARAMS', 'Invalid params: inputResponses must be an object of answers by key');
  return answers;
}

function hooksFor(state: ForwardState, host: Host): RelayHooks {
  let hooks = state.hooks.get(host);
  if (hooks === undefined) state.hooks.set(host, (hooks = makeHooks(state, host)));
  return hooks;
}

function makeHooks({ bridge, hosts }: ForwardState, host: Host): RelayHooks {
  return {
    // A question belongs to the one call on the host that may ask, whichever stream the host wrote
    // it to: only tools/call, prompts/get and resources/read may answer input_required (SEP-2322).
    ask: (_relay, message) => bridge.ask(host, askerOf(host), message),
    done: (relay) => {
      bridge.forget(relay);
      host.askers.delete(relay);
      hosts.release(host);
    },
  };
}

/** Forwards `request` on a host, its answer relayed to `exchange`; synchronous while a host is open. */
export function forward(state: ForwardState, input: StatelessRequest, logLevel: string | undefined): void | Promise<void> {
  // A fresh call (a retry with requestState is mrtr.ts's) may carry the client's own answers to
  // the upstream's input requests: checked for their shape here (the edge is the 2026 server),
  // then a 2026 upstream gets them unchanged beside the params and decides; a 2025 one never.
  const answers = freshAnswers(input.request);
  if (answers !== undefined) carryInputResponses(input.request, answers);
  const caller = callerOf(input);
  // A caller that declared nothing an upstream may ask for (sampling, elicitation, roots) cannot
  // be asked (the spec's rule for servers): its calls need no host of their own and share one.
  const mayAsk = callMayAsk(input.request.method) && caller.asking !== ASKS_NOTHING;
  const host = state.hosts.acquire(caller, mayAsk);
  if (host instanceof Promise) return host.then((opened) => forwardOn(state, opened, input, mayAsk, logLevel));
  forwardOn(state, host, input, mayAsk, logLevel);
}

function forwardOn(state: ForwardState, host: Host, input: StatelessRequest, mayAsk: boolean, logLevel: string | undefined): void {
  const { request, exchange } = input;
  // The client went away while its host opened: that is the cancel, and nothing went upstream yet.
  if (exchange.closed) return state.hosts.release(host);
  try {
    // The in-flight caps hold for 2026 requests too: 503 GW_OVERLOADED, never a queue.
    host.session.admit(1);
  } catch (err) {
    state.hosts.release(host);
    throw err;
  }
  const named = namedBy(request.method, request.params);
  const uri = subjectOf(request.method)?.kind === 'uri' ? named : undefined;
  // Only calls that may answer input_required (SEP-2322) turn a consent error into one.
  const shape = callMayAsk(request.method) ? urlConsentShape(input.meta[META.clientCapabilities]) : undefined;
  const relay = createRelay(exchange, host.nextCall++, request.id, request.method, logLevel, hooksFor(state, host), uri, input.challenge, shape, named);
  if (mayAsk) host.askers.add(relay);
  const params = withoutEnvelope(request.params, RETRY_KEYS);
  if (params !== undefined) request.params = params;
  // The client's own request object and id: the core's correlator is the one rewrite upstream.
  // The caller is this request's own: step-up judges its token, not the one that opened the host.
  host.session.serve([request], relay, MODERN_REQUEST, input.headers, input.principal);
}
