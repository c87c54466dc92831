/**
 * The one way an HTTP route answers with a failure: the GatewayError's status and a JSON-RPC error
 * envelope. Its own module so guards, CORS and every route can use it without importing a route.
 */
import type { FastifyReply } from 'fastify';
import { type GatewayError, toErrorResponse } from '../errors/gateway-error.ts';
import type { RequestId } from '../jsonrpc/types.ts';

/**
 * Replies with an error envelope. `id`: the request's own id when it is known (the 2026 revision
 * requires every error to echo it); null when the request could not be tied to an id.
 */
export function replyError(reply: FastifyReply, error: GatewayError, id: RequestId | null = null): FastifyReply {
  // GW_RATE_LIMITED, GW_OVERLOADED, GW_CIRCUIT_OPEN: when to try again (RFC 9110, 10.2.3).
  const retryAfter = error.details.retryAfterSec;
  if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter));
  return reply
    .code(error.httpStatus)
    .header('content-type', 'application/json')
    .send(JSON.stringify(toErrorResponse(id, error)));
}
