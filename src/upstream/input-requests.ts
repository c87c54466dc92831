/**
 * The input a 2026-07-28 upstream asks for (an `input_required` result, MCP 2026-07-28
 * basic/patterns/mrtr), asked of a 2025 client the way a 2025 server would: as real
 * server->client requests (sampling/createMessage, elicitation/create, roots/list) that travel the
 * session's ordinary server->client path and whose answers come back through `answer`. One round's
 * answers resolve together, as the bare results keyed like the upstream's `inputRequests`.
 *
 * Bounded: at most MAX_INPUT_REQUESTS per round, and a round belongs to one in-flight call, so
 * what waits here is bounded by the calls in flight.
 */
import { GatewayError } from '../errors/gateway-error.ts';
import { idKey, isErrorResponse, isObject } from '../jsonrpc/envelope.ts';
import { META_INPUT_KEY } from '../jsonrpc/modern.ts';
import type { JsonObject, JsonRpcMessage, JsonRpcResponse } from '../jsonrpc/types.ts';

/** Input requests one `input_required` result may carry; more is a broken or hostile upstream. */
export const MAX_INPUT_REQUESTS = 16;

export interface InputRequest {
  readonly method: string;
  readonly params?: JsonObject;
}

export interface InputAsker {
  /** Asks the client each request (ids of our own); resolves with the answers by key, or rejects (GW_INPUT_REQUEST_FAILED). */
  ask(call: string, requests: ReadonlyMap<string, InputRequest>): Promise<JsonObject>;
  /** The client's answer to one of our requests; false when it answers none of them. */
  answer(response: JsonRpcResponse): boolean;
  /** The call ended (cancelled, failed): its open questions are withdrawn from the client. */
  withdraw(call: string, reason: string): void;
  /** Questions open now (tests). */
  readonly open: number;
}

interface Question {
  /** The id the session saw on our request (`input-<n>`). */
  readonly id: string;
  readonly call: string;
  readonly key: string;
  readonly method: string;
  readonly round: Round;
}

interface Round {
  readonly answers: JsonObject;
  left: number;
  resolve(answers: JsonObject): void;
  reject(error: GatewayError): void;
}

/**
 * `deliver` hands a message to the session as if the upstream had sent it (a request, or the
 * `notifications/cancelled` that withdraws one).
 */
export function createInputAsker(target: string, deliver: (message: JsonRpcMessage) => void): InputAsker {
  const questions = new Map<string, Question>();
  let nextId = 1;

  const forget = (round: Round) => {
    for (const [k, q] of questions) if (q.round === round) questions.delete(k);
  };

  return {
    ask(call, requests) {
      return new Promise<JsonObject>((resolve, reject) => {
        const round: Round = { answers: {}, left: requests.size, resolve, reject };
        for (const [key, request] of requests) {
          const id = `input-${nextId++}`;
          questions.set(idKey(id), { id, call, key, method: request.method, round });
          // The name rides along in `_meta` so a 2026 client behind us is asked under it (mrtr.ts).
          const params = request.params ?? {};
          const meta = isObject(params._meta) ? params._meta : {};
          deliver({ jsonrpc: '2.0', id, method: request.method, params: { ...params, _meta: { ...meta, [META_INPUT_KEY]: key } } });
        }
      });
    },

    answer(response) {
      const id = response.id === null ? undefined : idKey(response.id);
      const question = id === undefined ? undefined : questions.get(id);
      if (id === undefined || question === undefined) return false;
      questions.delete(id);
      const round = question.round;
      if (isErrorResponse(response)) {
        forget(round);
        round.reject(
          new GatewayError('GW_INPUT_REQUEST_FAILED', `The client could not answer ${question.method} for upstream "${target}"`, {
            target,
            method: question.method,
            reason: String(response.error.code),
          }),
        );
        return true;
      }
      // Defined, not assigned: the upstream's name may be any string (`__proto__` too).
      const value = isObject(response.result) ? response.result : {};
      Object.defineProperty(round.answers, question.key, { value, enumerable: true, writable: true, configurable: true });
      if (--round.left === 0) round.resolve(round.answers);
      return true;
    },

    withdraw(call, reason) {
      for (const [k, q] of questions) {
        if (q.call !== call) continue;
        questions.delete(k);
        // The session translates the id to the one the client saw (server-messages.ts).
        deliver({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: q.id, reason } });
        q.round.reject(new GatewayError('GW_UPSTREAM_CLOSED', `Request to upstream "${target}" was closed`, { target, reason }));
      }
    },

    get open() {
      return questions.size;
    },
  };
}

/**
 * The `inputRequests` of an `input_required` result as a map, or the reason it is unusable: each
 * value must be an object with a string `method` (basic/patterns/mrtr, InputRequest).
 */
export function toInputRequests(value: unknown): ReadonlyMap<string, InputRequest> | string {
  const out = new Map<string, InputRequest>();
  if (value === undefined) return out;
  if (!isObject(value)) return 'inputRequests is not an object';
  for (const [key, request] of Object.entries(value)) {
    if (!isObject(request) || typeof request.method !== 'string') return `input request "${key}" has no method`;
    if (request.params !== undefined && !isObject(request.params)) return `input request "${key}" has params that are not an object`;
    out.set(key, request.params === undefined ? { method: request.method } : { method: request.method, params: request.params });
  }
  if (out.size > MAX_INPUT_REQUESTS) return `more than ${MAX_INPUT_REQUESTS} input requests`;
  return out;
}
