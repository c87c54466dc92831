/**
 * Per-user upstream consent on 2026 requests (docs/upstreams.md, "Each user's own account"): a
 * call that needs the caller's account at a server gets an `input_required` result (SEP-2322)
 * whose one input request is the URL elicitation, in place of the -32042 error, when the request's
 * client capabilities declare `elicitation.url`. No `requestState`: nothing waits at the gateway
 * (the user consents in a browser, then the client's retry is a fresh call, which finds the
 * token). A client that declared no URL elicitation keeps the -32042 error with the URL. The 2026
 * draft's URL-mode params have no `elicitationId` (nor `notifications/elicitation/complete`): the
 * id only names the input request's key.
 */
import { isObject } from '../../jsonrpc/envelope.ts';
import type { JsonObject } from '../../jsonrpc/types.ts';
import { declaresUrlElicitation, elicitationsOf } from '../url-consent.ts';

/** The answer as an input_required round, when it is a consent error; else unchanged. */
export function consentAsInput(message: JsonObject): JsonObject {
  const error = isObject(message.error) ? message.error : undefined;
  const asks = elicitationsOf(error?.data);
  if (asks.length === 0) return message;
  const inputRequests: JsonObject = Object.fromEntries(
    asks.map((e) => [`elicitation-${e.elicitationId}`, { method: 'elicitation/create', params: { mode: 'url', url: e.url, message: e.message } }]),
  );
  return { jsonrpc: '2.0', id: message.id as JsonObject[string], result: { resultType: 'input_required', inputRequests } };
}

/** The relay's answer shape for a caller whose capabilities declare URL elicitation; undefined for any other. */
export function urlConsentShape(capabilities: unknown): ((answer: JsonObject) => JsonObject) | undefined {
  return declaresUrlElicitation({ capabilities }) ? consentAsInput : undefined;
}
