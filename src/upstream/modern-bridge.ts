/**
 * A 2026-07-28 (stateless) upstream behind a Transport that behaves like a 2025 server, so the
 * correlator, the supervisor and the session treat it as any other member and a 2025 client
 * downstream never learns the difference (issue 12 item 4; docs/eras.md).
 *
 * - `initialize` is answered here, from the upstream's `server/discover` (serverInfo,
 *   capabilities, instructions) and the version negotiated with the 2025 client; the client's
 *   capabilities and info go into every later request's `_meta` envelope.
 * - `notifications/initialized` opens a `subscriptions/listen` stream for the list_changed kinds
 *   the upstream offers (listen-stream.ts), whose notifications go to the client as a 2025
 *   server's would; other client notifications and `ping` stay here (2026 has no handshake and
 *   no ping); `logging/setLevel` is remembered and sent as the `_meta` logLevel of
 *   every later request (2026 carries the level per request); resources/(un)subscribe change the
 *   listen stream's `resourceSubscriptions` when the upstream offers subscriptions
 *   (resource-subscriptions.ts), else get "Method not found" (not offered).
 * - Every other request is one stateless POST (transport/stateless-http.ts) under the request's
 *   id, with the reserved `_meta` keys the client may have sent replaced by ours, and for
 *   tools/call the `Mcp-Param-*` headers its tool declares (param-headers.ts, learnt from the
 *   tools/list answers relayed; a call refused for them, which did not run, is sent once more
 *   after the tools are listed again).
 * - `resultType: complete` (or none) is the answer; `resultType` and the reserved `_meta` keys
 *   are removed, since 2025 results have neither. `input_required` becomes real server->client
 *   requests (input-requests.ts); once all are answered the request is sent again under a NEW id
 *   with `inputResponses` and the `requestState` exactly as the upstream gave it. Any other
 *   `resultType` fails the request (GW_UPSTREAM_INVALID_ANSWER).
 * - A cancel (the client's, or the correlator's on a timeout) is the abort of the request's send
 *   signal, which closes its POST: in 2026 closing the stream is the cancel. The correlator's
 *   `notifications/cancelled` that goes with it is dropped here (2026 has none). Nothing is replayed.
 */
import { GatewayError, toErrorResponse } from '../errors/gateway-error.ts';
import { idKey, idText, isErrorResponse, isObject, isRequest, isResponse } from '../jsonrpc/envelope.ts';
import { JsonRpcCode } from '../jsonrpc/codes.ts';
import { mayAsk } from '../jsonrpc/methods.ts';
import { carriedInputResponses, META, RESERVED_META_PREFIX, withoutReservedMeta } from '../jsonrpc/modern.ts';
import type { JsonObject, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, RequestId } from '../jsonrpc/types.ts';
import { isSupportedVersion, LATEST_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSION } from '../jsonrpc/versions.ts';
import type { RemoteTargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { withMessageHeaders } from '../transport/http-body.ts';
import { createAbortHandle, type AbortHandle } from '../transport/http-dispatch.ts';
import type { StatelessHttpWire } from '../transport/stateless-http.ts';
import type { SendOptions, Transport } from '../transport/types.ts';
import { createInputAsker, toInputRequests } from './input-requests.ts';
import { createListenStream, listenFilter } from './listen-stream.ts';
import { createResourceSubscriptions } from './resource-subscriptions.ts';
import { namesModernRevision } from './era-probe.ts';
import { GATEWAY_CLIENT_INFO } from './gateway-identity.ts';
import { createParamTable } from './param-headers.ts';

/** Input rounds one request may take; an upstream asking forever is broken. */
export const MAX_INPUT_ROUNDS = 16;
/** Pages of tools/list read to learn a tool's headers again after a refusal. */
const MAX_LIST_PAGES = 20;
/** Client capabilities the 2026 envelope knows (schema/2026-07-28 ClientCapabilities). */
const CLIENT_CAPABILITY_KEYS = ['experimental', 'sampling', 'elicitation', 'roots', 'extensions'];

export interface ModernBridgeOptions {
  target: RemoteTargetConfig;
  logger: Logger;
  wire: StatelessHttpWire;
  /** The upstream's `server/discover` result, already checked to list 2026-07-28. */
  discovered: JsonObject;
}

/**
 * Capabilities for a 2025 client: list_changed and per-resource subscriptions are relayed from a
 * `subscriptions/listen` stream (listen-stream.ts); `resources.subscribe` only when offered (true).
 */
export function toLegacyCapabilities(capabilities: unknown): JsonObject {
  const out: JsonObject = isObject(capabilities) ? { ...capabilities } : {};
  if (isObject(out.resources) && out.resources.subscribe !== undefined && out.resources.subscribe !== true) {
    const { subscribe: _s, ...rest } = out.resources;
    out.resources = rest;
  }
  return out;
}

/** Whether a 2026 upstream's capabilities offer per-resource subscriptions. */
const offersSubscribe = (capabilities: unknown) => isObject(capabilities) && isObject(capabilities.resources) && capabilities.resources.subscribe === true;

/** A result as a 2025 client expects it: no `resultType`, no reserved `_meta` keys. */
function toLegacyResult(result: JsonObject): JsonObject {
  delete result.resultType;
  const meta = result._meta;
  if (isObject(meta)) {
    for (const key of Object.keys(meta)) if (key.startsWith(RESERVED_META_PREFIX)) delete meta[key];
    if (Object.keys(meta).length === 0) delete result._meta;
  }
  return result;
}

const invalid = (target: string, reason: string) =>
  new GatewayError('GW_UPSTREAM_INVALID_ANSWER', `Upstream "${target}" answered outside the 2026-07-28 rules: ${reason}`, { target, reason });

export function createModernBridge({ target, logger, wire, discovered }: ModernBridgeOptions): Transport {
  const name = target.name;
  let clientCapabilities: JsonObject = {};
  let clientInfo: unknown;
  let logLevel: string | undefined;
  let closed = false;
  /** The abort handle of each request's POST, by the request's (correlator) id. */
  const calls = new Map<string, AbortHandle>();
  let retryIds = 0;
  /** The `x-mcp-header` declarations of the upstream's tools, learnt from the lists it relays. */
  const tools = createParamTable();

  const up = (message: JsonRpcMessage) => {
    if (!closed) bridge.onmessage?.(message);
  };
  const asker = createInputAsker(name, up);
  const filter = listenFilter(discovered.capabilities);
  const subscribable = offersSubscribe(discovered.capabilities);
  const answer = (id: RequestId, result: JsonObject) => queueMicrotask(() => up({ jsonrpc: '2.0', id, result }));
  const subscriptions = subscribable ? createResourceSubscriptions(name, () => listen!, answer) : undefined;
  const deliver = (n: JsonRpcNotification) => subscriptions?.wants(n) === false || up(n);
  const listen =
    filter === undefined && !subscribable ? undefined : createListenStream({ wire, logger, filter: filter ?? {}, envelope: () => envelope(undefined), deliver });

  const envelope = (meta: unknown): JsonObject => {
    const out = withoutReservedMeta(meta);
    out[META.protocolVersion] = MODERN_PROTOCOL_VERSION;
    out[META.clientCapabilities] = clientCapabilities;
    out[META.clientInfo] = isObject(clientInfo) ? clientInfo : GATEWAY_CLIENT_INFO;
    if (logLevel !== undefined) out[META.logLevel] = logLevel;
    return out;
  };

  const initialize = (request: JsonRpcRequest) => {
    const params = request.params ?? {};
    const caps = isObject(params.capabilities) ? params.capabilities : {};
    clientCapabilities = Object.fromEntries(CLIENT_CAPABILITY_KEYS.filter((k) => caps[k] !== undefined).map((k) => [k, caps[k]]));
    clientInfo = params.clientInfo;
    const meta = discovered._meta;
    const serverInfo = isObject(meta) && isObject(meta[META.serverInfo]) ? meta[META.serverInfo] : { name, version: 'unknown' };
    answer(request.id, {
      protocolVersion: isSupportedVersion(params.protocolVersion) ? params.protocolVersion : LATEST_PROTOCOL_VERSION,
      capabilities: toLegacyCapabilities(discovered.capabilities),
      serverInfo,
      ...(typeof discovered.instructions === 'string' ? { instructions: discovered.instructions } : {}),
    });
  };

  /**
   * tools/list again (every page, up to MAX_LIST_PAGES) after a tools/call was refused for its
   * headers; true when the tool's declarations changed, so a retry would be sent differently.
   */
  const relearn = async (call: JsonObject, abort: AbortHandle): Promise<boolean> => {
    const tool = typeof call.name === 'string' ? call.name : '';
    const before = tools.get(tool);
    let cursor: unknown;
    for (let page = 0; page < MAX_LIST_PAGES && !abort.aborted; page++) {
      const listParams: JsonObject = { _meta: envelope(undefined), ...(typeof cursor === 'string' ? { cursor } : {}) };
      const answer = await wire.post({ jsonrpc: '2.0', id: `switchboard-tools-${++retryIds}`, method: 'tools/list', params: listParams }, () => undefined, abort);
      if (isErrorResponse(answer)) break;
      const result = (answer as { result: JsonObject }).result;
      tools.learn(result);
      cursor = result.nextCursor;
      if (typeof cursor !== 'string') break;
    }
    return tools.changed(tool, before);
  };

  /** One request through as many input rounds as the upstream needs. Resolves when answered. */
  const forward = async (request: JsonRpcRequest, sendOptions: SendOptions | undefined): Promise<void> => {
    const key = idKey(request.id);
    const abort = createAbortHandle();
    calls.set(key, abort);
    const signal = sendOptions?.signal;
    const cancel = () => {
      asker.withdraw(key, 'cancelled');
      abort.abort();
    };
    if (signal?.aborted) cancel();
    else signal?.addEventListener('abort', cancel, { once: true });
    const base = request.params ?? {};
    let params: JsonObject = { ...base, _meta: envelope(base._meta) };
    // A 2026 client's own answers on a fresh call (session/stateless/serve.ts): the first round
    // carries them as they came; the upstream decides what they are worth.
    const carried = carriedInputResponses(request);
    if (carried !== undefined) params.inputResponses = carried;
    let wireId: RequestId = request.id;
    const call = request.method === 'tools/call';
    // Each request is its own POST: its own headers and trace context go as HTTP headers.
    let headers = postHeaders(call ? tools.headersFor(base) : undefined, sendOptions);
    let relearnt = false;
    let reversioned = false;
    try {
      for (let round = 0; ; round++) {
        const response = await wire.post({ jsonrpc: '2.0', id: wireId, method: request.method, params }, up, abort, headers);
        if (isErrorResponse(response)) {
          // Refused for its revision by a server that names ours (-32022): it did not run; once more.
          if (!reversioned && namesModernRevision(response)) {
            reversioned = true;
            wireId = `${idText(request.id)}.retry-${++retryIds}`;
            continue;
          }
          // Refused for its Mcp-Param-* headers (before the tool ran): learn the tools again, and
          // send it once more if what the tool declares has changed.
          if (!call || relearnt || response.error.code !== JsonRpcCode.HeaderMismatch || !(await relearn(base, abort))) return up({ ...response, id: request.id });
          relearnt = true;
          headers = postHeaders(tools.headersFor(base), sendOptions);
          wireId = `${idText(request.id)}.retry-${++retryIds}`;
          continue;
        }
        const result = (response as { result: JsonObject }).result;
        const kind = result.resultType;
        if (request.method === 'tools/list' && (kind === undefined || kind === 'complete')) tools.learn(result);
        if (kind === undefined || kind === 'complete') return up({ jsonrpc: '2.0', id: request.id, result: toLegacyResult(result) });
        if (kind !== 'input_required') throw invalid(name, `resultType "${String(kind)}" is not one the gateway bridges`);
        // Only a method that may ask the client may answer input_required (basic/patterns/mrtr).
        if (!mayAsk(request.method)) throw invalid(name, `input_required answered to ${request.method}`);
        if (round >= MAX_INPUT_ROUNDS) throw invalid(name, `more than ${MAX_INPUT_ROUNDS} input rounds`);
        const requests = toInputRequests(result.inputRequests);
        if (typeof requests === 'string') throw invalid(name, requests);
        const state = result.requestState;
        if (state !== undefined && typeof state !== 'string') throw invalid(name, 'requestState is not a string');
        if (requests.size === 0 && state === undefined) throw invalid(name, 'input_required with neither inputRequests nor requestState');
        const responses = requests.size === 0 ? undefined : await asker.ask(key, requests);
        if (abort.aborted || closed) return;
        // The retry is a new request (a new id) carrying the answers and the state untouched.
        const { inputResponses: _r, requestState: _s, ...rest } = params;
        params = { ...rest, ...(responses === undefined ? {} : { inputResponses: responses }), ...(state === undefined ? {} : { requestState: state }) };
        wireId = `${idText(request.id)}.retry-${++retryIds}`;
      }
    } catch (err) {
      if (err instanceof GatewayError && err.code !== 'GW_UPSTREAM_CLOSED') logger.warn({ code: err.code, reason: err.details.reason }, 'bridged request failed');
      throw err;
    } finally {
      signal?.removeEventListener('abort', cancel);
      calls.delete(key);
      if (asker.open > 0) asker.withdraw(key, 'the request ended');
    }
  };

  const notify = (message: JsonRpcMessage): Promise<void> | undefined => {
    if (isResponse(message)) {
      if (!asker.answer(message)) logger.debug({ id: message.id }, 'answer to no input request of ours; dropped');
      return;
    }
    // The client is ready for notifications: listen for the upstream's (the 2025 GET stream's part).
    // The send is done once the upstream acknowledged it (bounded: listen-stream.ts), so the
    // handshake that sent it ends after that, and nothing the upstream says once the client is
    // answered is lost. Any other (cancelled: the send's signal did it; roots/list_changed...): 2026 has none.
    if (message.method === 'notifications/initialized') return listen?.open();
  };

  const bridge: Transport = {
    start: () => (closed ? Promise.reject(new GatewayError('GW_UPSTREAM_CLOSED', undefined, { target: name })) : Promise.resolve()),
    async send(message, sendOptions) {
      if (closed) throw new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${name}" connection is closed`, { target: name });
      if (!isRequest(message)) return notify(message);
      switch (message.method) {
        case 'initialize':
          return initialize(message);
        case 'ping':
          return answer(message.id, {});
        case 'logging/setLevel':
          logLevel = typeof message.params?.level === 'string' ? message.params.level : undefined;
          return answer(message.id, {});
        case 'resources/subscribe':
        case 'resources/unsubscribe':
          if (subscriptions !== undefined) return subscriptions.change(message);
          queueMicrotask(() => up(toErrorResponse(message.id, new GatewayError('GW_METHOD_NOT_FOUND'))));
          return;
        default:
          return forward(message, sendOptions);
      }
    },
    close() {
      if (!closed) {
        closed = true;
        listen?.close();
        for (const [key, abort] of calls) {
          asker.withdraw(key, 'closed');
          abort.abort();
        }
        calls.clear();
        bridge.onclose?.();
      }
      return Promise.resolve();
    },
  };
  return bridge;
}

/** The headers of one POST, when there are any: the tool's Mcp-Param-* ones, then the message's own and its trace. */
function postHeaders(params: Record<string, string> | undefined, own: SendOptions | undefined): Record<string, string> | undefined {
  if (own === undefined || (own.headers === undefined && own.trace === undefined)) return params;
  return withMessageHeaders({ ...params }, own);
}
