/**
 * Requests of the gateway's own to a session's member (list reads of an aggregate, pinning's
 * re-reads): sent on the member's connection with id 0 (its correlator gives it an upstream id of
 * its own), resolved with the result object or rejected with the error's message.
 */
import { toErrorResponse } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcRequest, JsonRpcResponse, RequestId } from '../jsonrpc/types.ts';
import type { TimeoutPolicy } from '../config/types.ts';
import type { PendingHandler } from '../upstream/correlator.ts';
import type { Member } from './member.ts';

const promiseHandler: PendingHandler<{ resolve: (r: JsonRpcResponse) => void; clientId: RequestId }> = {
  onresponse(response, ctx) {
    ctx.resolve(response);
  },
  onerror(error, ctx) {
    ctx.resolve(toErrorResponse(ctx.clientId, error));
  },
};

/** Sends a request of the gateway's own to a member; resolves with its result or rejects. */
export async function askMember(member: Member, method: string, params: JsonObject, timeouts: TimeoutPolicy = member.target.timeouts): Promise<JsonObject> {
  const connection = await member.connect();
  const request: JsonRpcRequest = { jsonrpc: '2.0', id: 0, method, params };
  const answer = await new Promise<JsonRpcResponse>((resolve) =>
    connection.correlator.request(request, promiseHandler, { resolve, clientId: 0 }, timeouts),
  );
  const result: unknown = 'result' in answer ? answer.result : undefined;
  if (isObject(result)) return result;
  const error = (answer as { error?: { message?: unknown } }).error;
  throw new Error(`${method} failed: ${typeof error?.message === 'string' ? error.message : 'no result'}`);
}

