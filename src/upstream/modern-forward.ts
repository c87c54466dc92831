/**
 * One request of a 2025 client through a 2026-07-28 upstream (modern-bridge.ts): one stateless POST
 * per round, the `Mcp-Param-*` headers its tool declares, `input_required` turned into real
 * server->client requests, and the 2025 result shape. Module functions over the bridge's state,
 * so nothing here is a closure kept per bridge.
 */
import { GatewayError } from '../errors/gateway-error.ts';
import { idKey, idText, isErrorResponse, isObject } from '../jsonrpc/envelope.ts';
import { JsonRpcCode } from '../jsonrpc/codes.ts';
import { mayAsk } from '../jsonrpc/methods.ts';
import { carriedInputResponses, RESERVED_META_PREFIX } from '../jsonrpc/modern.ts';
import type { JsonObject, JsonRpcMessage, JsonRpcRequest, RequestId } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { withMessageHeaders } from '../transport/http-body.ts';
import { createAbortHandle, type AbortHandle } from '../transport/http-dispatch.ts';
import type { StatelessHttpWire } from '../transport/stateless-http.ts';
import type { SendOptions } from '../transport/types.ts';
import { toInputRequests, type InputAsker } from './input-requests.ts';
import { namesModernRevision } from './era-probe.ts';
import type { ParamTable } from './param-headers.ts';

/** Input rounds one request may take; an upstream asking forever is broken. */
export const MAX_INPUT_ROUNDS = 16;
/** Pages of tools/list read to learn a tool's headers again after a refusal. */
const MAX_LIST_PAGES = 20;

/** What a request needs of its bridge. */
export interface BridgeState {
  readonly name: string;
  readonly logger: Logger;
  readonly wire: StatelessHttpWire;
  readonly closed: boolean;
  /** The abort handle of each request's POST, by the request's (correlator) id. */
  readonly calls: Map<string, AbortHandle>;
  retryIds: number;
  /** The `x-mcp-header` declarations of the upstream's tools, learnt from the lists it relays. */
  readonly tools: ParamTable;
  readonly asker: InputAsker;
  /** To the client, unless closed (one function per bridge: the wire and the asker call it). */
  readonly up: (message: JsonRpcMessage) => void;
  envelope(meta: unknown): JsonObject;
}

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

/**
 * tools/list again (every page, up to MAX_LIST_PAGES) after a tools/call was refused for its
 * headers; true when the tool's declarations changed, so a retry would be sent differently.
 */
async function relearn(bridge: BridgeState, call: JsonObject, abort: AbortHandle): Promise<boolean> {
  const { tools, wire } = bridge;
  const tool = typeof call.name === 'string' ? call.name : '';
  const before = tools.get(tool);
  let cursor: unknown;
  for (let page = 0; page < MAX_LIST_PAGES && !abort.aborted; page++) {
    const listParams: JsonObject = { _meta: bridge.envelope(undefined), ...(typeof cursor === 'string' ? { cursor } : {}) };
    const answer = await wire.post({ jsonrpc: '2.0', id: `switchboard-tools-${++bridge.retryIds}`, method: 'tools/list', params: listParams }, () => undefined, abort);
    if (isErrorResponse(answer)) break;
    const result = (answer as { result: JsonObject }).result;
    tools.learn(result);
    cursor = result.nextCursor;
    if (typeof cursor !== 'string') break;
  }
  return tools.changed(tool, before);
}

/** One request through as many input rounds as the upstream needs. Resolves when answered. */
export async function forward(bridge: BridgeState, request: JsonRpcRequest, sendOptions: SendOptions | undefined): Promise<void> {
  const { name, logger, wire, calls, tools, asker, up } = bridge;
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
  let params: JsonObject = { ...base, _meta: bridge.envelope(base._meta) };
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
          wireId = `${idText(request.id)}.retry-${++bridge.retryIds}`;
          continue;
        }
        // Refused for its Mcp-Param-* headers (before the tool ran): learn the tools again, and
        // send it once more if what the tool declares has changed.
        if (!call || relearnt || response.error.code !== JsonRpcCode.HeaderMismatch || !(await relearn(bridge, base, abort))) return up({ ...response, id: request.id });
        relearnt = true;
        headers = postHeaders(tools.headersFor(base), sendOptions);
        wireId = `${idText(request.id)}.retry-${++bridge.retryIds}`;
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
      if (abort.aborted || bridge.closed) return;
      // The retry is a new request (a new id) carrying the answers and the state untouched.
      const { inputResponses: _r, requestState: _s, ...rest } = params;
      params = { ...rest, ...(responses === undefined ? {} : { inputResponses: responses }), ...(state === undefined ? {} : { requestState: state }) };
      wireId = `${idText(request.id)}.retry-${++bridge.retryIds}`;
    }
  } catch (err) {
    if (err instanceof GatewayError && err.code !== 'GW_UPSTREAM_CLOSED') logger.warn({ code: err.code, reason: err.details.reason }, 'bridged request failed');
    throw err;
  } finally {
    signal?.removeEventListener('abort', cancel);
    calls.delete(key);
    if (asker.open > 0) asker.withdraw(key, 'the request ended');
  }
}

/** The headers of one POST, when there are any: the tool's Mcp-Param-* ones, then the message's own and its trace. */
function postHeaders(params: Record<string, string> | undefined, own: SendOptions | undefined): Record<string, string> | undefined {
  if (own === undefined || (own.headers === undefined && own.trace === undefined)) return params;
  return withMessageHeaders({ ...params }, own);
}
