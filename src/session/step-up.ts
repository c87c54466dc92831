/**
 * Step-up in the session core (SEP-2350): the check every session runs on a routed request
 * (router/step-up.ts holds the rules, reloaded with the config), and the refusal a request gets
 * when its token lacks scopes. requests.ts delivers the refusal through StreamSet.challenge, which
 * makes it an HTTP 403 where the response has not started and the sink can (a Streamable HTTP
 * POST, a 2026 request), and a JSON-RPC error at 200 everywhere else (WebSocket, legacy SSE, a
 * stream already open, a batch, `gateway.auth.stepUp: jsonrpc`).
 */
import { GatewayError, toErrorResponse } from '../errors/gateway-error.ts';
import type { JsonRpcErrorResponse } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import type { StepUpRules } from '../router/step-up.ts';
import type { Pending, StepUpCheck } from './flavour.ts';

/** The check sessions run, over whatever rules are in force now (`rules` follows reloads). */
export function stepUpCheckOf(rules: () => StepUpRules | undefined): StepUpCheck {
  return (target, request, caller) => rules()?.missing(target, request.method, request.params, caller?.scopes);
}

/** The error `rec` is answered with: GW_STEP_UP_REQUIRED naming only the missing scopes. Logged, never the token. */
export function stepUpRefusal(rec: Pending, scopes: readonly string[], logger: Logger): JsonRpcErrorResponse {
  const error = new GatewayError('GW_STEP_UP_REQUIRED', undefined, { requiredScopes: [...scopes] });
  logger.info({ code: error.code, clientId: rec.clientId, method: rec.method, target: rec.member?.name, requiredScopes: scopes }, 'request refused for want of scopes (step-up)');
  return toErrorResponse(rec.clientId, error);
}
