/**
 * Step-up in the chain (SEP-2350): the check every session runs on a routed request
 * (router/step-up.ts holds the rules, reloaded with the config), and the refusal a request gets
 * when its token lacks scopes. chain.ts delivers the refusal through StreamSet.challenge, which
 * makes it an HTTP 403 where the response has not started and the sink can (a Streamable HTTP
 * POST, a 2026 request), and a JSON-RPC error at 200 everywhere else (WebSocket, legacy SSE, a
 * stream already open, a batch, `gateway.auth.stepUp: jsonrpc`).
 */
import { GatewayError, toErrorResponse } from '../../errors/gateway-error.ts';
import type { JsonRpcErrorResponse } from '../../jsonrpc/types.ts';
import type { Logger } from '../../log/logger.ts';
import type { StepUpRules } from '../../router/step-up.ts';
import type { Pending } from '../flavour.ts';
import type { StepUpCheck, StepUpNeed } from './gates.ts';

/** The check sessions run, over whatever rules are in force now (`rules` follows reloads). */
export function stepUpCheckOf(rules: () => StepUpRules | undefined): StepUpCheck {
  return (target, request, caller) => {
    const now = rules();
    const missing = now?.missing(target, request.method, request.params, caller?.scopes);
    // Only a refusal builds the whole list (the base scopes and every scope the item's rules name).
    return now === undefined || missing === undefined ? undefined : { required: now.required(target, request.method, request.params), missing };
  };
}

/** The error `rec` is answered with: GW_STEP_UP_REQUIRED naming every scope the request needs (`requiredScopes`) and the missing ones (`missingScopes`). Logged, never the token. */
export function stepUpRefusal(rec: Pending, need: StepUpNeed, logger: Logger): JsonRpcErrorResponse {
  const error = new GatewayError('GW_STEP_UP_REQUIRED', undefined, { requiredScopes: [...need.required], missingScopes: [...need.missing] });
  logger.info({ code: error.code, clientId: rec.clientId, method: rec.method, target: rec.member?.name, requiredScopes: need.required, missingScopes: need.missing }, 'request refused for want of scopes (step-up)');
  return toErrorResponse(rec.clientId, error);
}
