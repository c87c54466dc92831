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

/**
 * GW_TARGET_UNAVAILABLE naming the target and why; `cause`: the error that made it so, whose
 * exit details (exit code, the stderr lines a client may see, correlation id) are kept.
 */
export function unavailable(name: string, reason: string, cause?: { readonly details: Readonly<Record<string, unknown>> }): GatewayError {
  const kept: Record<string, unknown> = {};
  for (const key of ['exitCode', 'signal', 'stderr', 'correlationId'] as const) if (cause?.details[key] !== undefined) kept[key] = cause.details[key];
  return new GatewayError('GW_TARGET_UNAVAILABLE', `Target "${name}" is not available: ${reason}`, { target: name, reason, ...kept });
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

/** The gateway's own start failures that are the caller's to act on, not the target's (see composedHandshake). */
const SAID_AS_THEY_ARE: ReadonlySet<string> = new Set(['GW_CREDENTIAL_NOT_EXCHANGEABLE', 'GW_UPSTREAM_AUTH_REQUIRED', 'GW_UPSTREAM_AUTH_FAILED']);

/** Runs the composed handshake on a started connection; resolves with the initialize result. */
export async function composedHandshake(
  next: UpstreamConnection,
  params: JsonObject,
  roots: RootsSettle,
  timeouts: TimeoutPolicy,
  logger: Logger,
  failed?: (error: GatewayError) => void,
): Promise<JsonObject> {
  let own: GatewayError | undefined;
  const fail = (error: GatewayError) => {
    own = error;
    failed?.(error);
  };
  const answer = await askUpstream(next, { jsonrpc: '2.0', id: 0, method: 'initialize', params: structuredClone(params) }, timeouts, logger, fail);
  const result: unknown = 'result' in answer ? answer.result : undefined;
  if (!isObject(result)) {
    // The gateway's own errors that are not the target's failure (the caller's credential cannot be
    // exchanged; the caller must connect their own account) are said as they are; other failures of
    // its own (the child exited, timed out...) keep their words and exit details. Never an
    // upstream's error answer that merely copies a GW_* code (it could name any consent URL).
    if (own !== undefined && SAID_AS_THEY_ARE.has(own.code)) throw own;
    if (own !== undefined) throw unavailable(next.target.name, own.message, own);
    throw unavailable(next.target.name, `initialize refused: ${JSON.stringify(answer.error ?? answer)}`);
  }
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
