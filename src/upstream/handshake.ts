/**
 * The upstream handshake the gateway composes (no client initialize needed): `initialize` with the
 * params it knows, then `notifications/initialized`, then the roots exchange (roots-settle.ts).
 * Also the gateway's own requests during a start, whose answers come back to it, not to a client.
 */
import { GatewayError, toErrorResponse } from '../errors/gateway-error.ts';
import { isErrorResponse, isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcRequest, JsonRpcResponse, RequestId } from '../jsonrpc/types.ts';
import type { TimeoutPolicy } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { UpstreamConnection } from './connection.ts';
import type { PendingHandler } from './correlator.ts';
import type { RootsSettle } from './roots-settle.ts';
import { explainStartupFailure } from './startup-deadline.ts';

type Asked = {
  resolve: (r: JsonRpcResponse) => void;
  clientId: RequestId;
  explain?: (e: GatewayError) => GatewayError;
  /** Told of a failure of the exchange itself (exit, timeout, refused connection): the circuit breaker counts those. */
  failed?: ((e: GatewayError) => void) | undefined;
};
const ownHandler: PendingHandler<Asked> = {
  onresponse(response, ctx) {
    ctx.resolve(response);
  },
  onerror(error, ctx) {
    const explained = ctx.explain?.(error) ?? error;
    ctx.failed?.(explained);
    ctx.resolve(toErrorResponse(ctx.clientId, explained));
  },
};

function ignore(): void {}

/** GW_TARGET_UNAVAILABLE naming the target and why. */
export function unavailable(name: string, reason: string): GatewayError {
  return new GatewayError('GW_TARGET_UNAVAILABLE', `Target "${name}" is not available: ${reason}`, { target: name, reason });
}

/**
 * Sends `request` on a starting connection; a failure resolves as an error answer that explains the
 * start (and is handed to `failed` as it is).
 */
export function askUpstream(
  next: UpstreamConnection,
  request: JsonRpcRequest,
  timeouts: TimeoutPolicy,
  logger: Logger,
  failed?: (error: GatewayError) => void,
): Promise<JsonRpcResponse> {
  return new Promise<JsonRpcResponse>((resolve) =>
    next.correlator.request(request, ownHandler, { resolve, clientId: request.id, explain: (e) => explainStartupFailure(e, next, logger), failed }, timeouts),
  );
}

/**
 * The caller has to connect their own account at the target (oauth.perUser): that error as it is,
 * so an aggregate's client gets the consent URL for that server only, not an opaque unavailability.
 */
function ownAccountNeeded(answer: JsonRpcResponse): GatewayError | undefined {
  if (!isErrorResponse(answer)) return undefined;
  const { message, data } = answer.error;
  if (!isObject(data) || (data.code !== 'GW_UPSTREAM_AUTH_REQUIRED' && data.code !== 'GW_UPSTREAM_AUTH_FAILED')) return undefined;
  const { code, ...details } = data;
  return new GatewayError(code, message, details);
}

/** Runs the composed handshake on a started connection; resolves with the initialize result. */
export async function composedHandshake(
  next: UpstreamConnection,
  params: JsonObject,
  roots: RootsSettle,
  timeouts: TimeoutPolicy,
  logger: Logger,
  failed?: (error: GatewayError) => void,
): Promise<JsonObject> {
  const answer = await askUpstream(next, { jsonrpc: '2.0', id: 0, method: 'initialize', params: structuredClone(params) }, timeouts, logger, failed);
  const result: unknown = 'result' in answer ? answer.result : undefined;
  if (!isObject(result)) throw ownAccountNeeded(answer) ?? unavailable(next.target.name, `initialize refused: ${JSON.stringify(answer.error ?? answer)}`);
  await next.correlator.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  // The roots exchange is timed by the member's answers to pings (roots-settle.ts); a failed
  // ping is no failure of the start (its exit or silence is seen by the handshake's own paths).
  await roots.settled(() => askUpstream(next, { jsonrpc: '2.0', id: 0, method: 'ping' }, timeouts, logger));
  return result;
}

/** The downstream's logging level, set again on a fresh connection that offers logging. */
export function replayLogLevel(next: UpstreamConnection, level: string | undefined, capabilities: JsonObject, timeouts: TimeoutPolicy): void {
  if (level === undefined || capabilities.logging === undefined) return;
  const setLevel: JsonRpcRequest = { jsonrpc: '2.0', id: 0, method: 'logging/setLevel', params: { level } };
  next.correlator.request(setLevel, ownHandler, { resolve: ignore, clientId: 0 }, timeouts);
}
