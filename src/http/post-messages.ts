/**
 * The messages of a 2025 POST (mcp-route.ts): the body as a list, and what goes upstream before
 * its requests are served (notifications, answers).
 */
import { randomUUID } from 'node:crypto';
import { GatewayError, isGatewayError } from '../errors/gateway-error.ts';
import { isRequest, isResponse, toMessage } from '../jsonrpc/envelope.ts';
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import type { Session } from '../session/session.ts';

/** The messages of a POST's body, a lone message as a list of one (`batch` is `Array.isArray(value)`). */
export function toMessages(value: unknown, batch: boolean): JsonRpcMessage[] {
  if (!batch) {
    const msg = toMessage(value);
    if (typeof msg === 'string') throw new GatewayError('GW_INVALID_REQUEST', `Invalid Request: ${msg}`);
    return [msg];
  }
  const items = value as unknown[];
  if (items.length === 0) throw new GatewayError('GW_INVALID_REQUEST', 'Invalid Request: empty batch');
  const messages: JsonRpcMessage[] = [];
  for (let i = 0; i < items.length; i++) {
    const msg = toMessage(items[i]);
    if (typeof msg === 'string') {
      throw new GatewayError('GW_INVALID_REQUEST', `Invalid Request: ${batch ? `batch item ${i}: ` : ''}${msg}`);
    }
    messages.push(msg);
  }
  return messages;
}

/**
 * Hands a notification or an answer to the session. A failure raised on purpose (the upstream did
 * not accept it in time, ...) answers the POST as before; anything else (a message the session
 * could not use) must not turn into a 500 for a message that gets no reply: it is logged, with a
 * correlation id, and the POST gets its 202.
 */
async function forward(session: Session, msg: JsonRpcMessage, logger: Logger): Promise<void> {
  try {
    if (isResponse(msg)) await session.handleResponse(msg as JsonRpcResponse);
    else await session.handleNotification(msg as JsonRpcNotification);
  } catch (err) {
    if (isGatewayError(err)) throw err;
    const method = (msg as { method?: unknown }).method;
    const correlationId = randomUUID();
    logger.error({ err, correlationId, session: session.id, method: typeof method === 'string' ? method : undefined }, 'could not forward a message upstream; dropped');
  }
}

/** The requests of a 2025 POST to a live session: its notifications and answers go upstream first. */
export async function requestsOf(session: Session, messages: readonly JsonRpcMessage[], logger: Logger): Promise<JsonRpcRequest[] | undefined> {
  let requests: JsonRpcRequest[] | undefined;
  for (const msg of messages) {
    if (isRequest(msg)) {
      if (msg.method === 'initialize') throw new GatewayError('GW_ALREADY_INITIALIZED');
      (requests ??= []).push(msg);
    } else {
      await forward(session, msg, logger);
    }
  }
  return requests;
}

/** True when every message is a request: nothing to hand upstream before they are served. */
export function onlyRequests(messages: readonly JsonRpcMessage[]): messages is JsonRpcRequest[] {
  // Indexed loops on this path: a for-of makes an iterator per call until the function is optimised.
  for (let i = 0; i < messages.length; i++) if (!isRequest(messages[i] as JsonRpcMessage)) return false;
  return true;
}
