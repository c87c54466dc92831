/**
 * What a body that `parseJson` refused becomes: -32700 for text that is not JSON, -32600 for JSON
 * nested deeper than the gateway reads (it is JSON, but no valid request nests that deep).
 */
import { GatewayError } from '../errors/gateway-error.ts';
import { JsonTooDeepError } from '../jsonrpc/depth.ts';

export function toParseFailure(err: unknown): GatewayError {
  if (err instanceof JsonTooDeepError) return new GatewayError('GW_INVALID_REQUEST', `Invalid Request: ${err.message}`, { limit: err.limit });
  return new GatewayError('GW_PARSE_ERROR', `Parse error: ${(err as Error).message}`);
}
