/**
 * One POST of the Streamable HTTP wire and its whole answer (MCP basic/transports, "Sending
 * Messages to the Server"): `Accept: application/json, text/event-stream`; notifications and
 * responses get 202; a request's answer is one JSON body or an SSE stream that may carry progress
 * and server->client requests first, resumed with `Last-Event-ID` if it drops (sse-resume.ts).
 * The body's fate is decided from the head, before any of it is read (http-dispatch.ts).
 */
import { GatewayError } from '../errors/gateway-error.ts';
import { withMessageHeaders } from './http-body.ts';
import { dispatchExchange, type AbortHandle, type BodyPlan, type DispatchedResponse, type ResponseHead } from './http-dispatch.ts';
import { toHttpError, toNetworkError, toProtocolError } from './http-errors.ts';
import { toMessages } from './sse-messages.ts';
import type { SseParser } from './sse-parser.ts';
import { readAnswerStream } from './sse-resume.ts';
import type { SendOptions } from './types.ts';
import { ERROR_BODY_BYTES, type Exchange, type StreamableWire } from './streamable-wire.ts';

const ACCEPT_POST = 'application/json, text/event-stream';

/** What one POST needs besides its body. */
export interface PostOptions {
  readonly exchange: Exchange;
  readonly abort: AbortHandle;
  /** The body is `initialize`: no version header yet, and the answer's head names the session. */
  readonly initialize: boolean;
  /** The message's own headers and trace context (SendOptions). */
  readonly send?: SendOptions | undefined;
  /** Whether the exchange may still read on (false once the transport is closed). */
  readonly live: () => boolean;
}

/** One POST and its whole answer. Throws GW_UPSTREAM_SESSION_EXPIRED (status 404) for a lost session. */
export async function postExchange(wire: StreamableWire, body: string, post: PostOptions): Promise<void> {
  const { name, session, target, logger } = wire;
  const { exchange, abort, initialize } = post;
  const authorized = wire.authorize();
  if (authorized !== undefined) await authorized;
  const usedSession = session.sessionId;
  // Each request is its own POST: its own headers and trace context go as HTTP headers.
  const headers = withMessageHeaders(wire.headersFor({ accept: ACCEPT_POST, 'content-type': 'application/json' }), post.send);
  // The version header belongs to requests after initialize (2025-06-18, "Protocol Version Header").
  if (initialize) delete headers['mcp-protocol-version'];
  let parser: SseParser | undefined;
  const plan = (head: ResponseHead): BodyPlan => {
    const status = head.statusCode;
    if (status >= 400) return { mode: 'head', limit: ERROR_BODY_BYTES };
    // Before the body: an SSE answer delivers the initialize result while it streams, and the
    // client's next request must already carry the session id.
    if (initialize) session.sessionId = head.sessionId ?? session.sessionId;
    if (exchange.waiting.size === 0) return { mode: 'head', limit: 0 };
    if (head.contentType === 'text/event-stream') {
      const reader = wire.readerFor(exchange);
      parser = reader;
      return { mode: 'stream', onchunk: (chunk) => reader.push(chunk) };
    }
    if (head.contentType !== 'application/json') return { mode: 'head', limit: 0 };
    return { mode: 'collect', limit: target.maxMessageBytes };
  };
  let res: DispatchedResponse;
  try {
    res = await dispatchExchange(wire.agent, { origin: wire.origin, path: wire.path, method: 'POST', headers, body, abort, plan });
  } catch (err) {
    if (abort.aborted || !post.live()) throw wire.closedError();
    throw toNetworkError(name, err);
  }
  const status = res.statusCode;
  if (status === 404 && usedSession !== undefined) {
    throw new GatewayError('GW_UPSTREAM_SESSION_EXPIRED', `Upstream "${name}" no longer knows its session`, { target: name, status });
  }
  if (status === 401) wire.options.credentialRejected?.();
  // A 403 insufficient_scope may be answered by a new consent for more scopes (oauth.perUser).
  const instead = status === 403 && res.challenge !== undefined ? await wire.options.scopeRefused?.(res.challenge) : undefined;
  if (instead !== undefined) throw instead;
  if (status >= 400) throw toHttpError(name, status, res.text, logger);
  if (exchange.waiting.size === 0 && parser === undefined) return; // 202 for notifications and responses
  if (parser !== undefined) {
    const options = { parser, signal: abort.signal, open: wire.openStream, target: name, logger };
    return readAnswerStream({ events: res.streamed }, () => exchange.waiting.size > 0 && post.live(), options);
  }
  const type = res.contentType;
  if (type !== 'application/json') {
    throw toProtocolError(name, status, `expected application/json or text/event-stream, got ${type || 'no content type'}`);
  }
  if (res.overflow) {
    throw new GatewayError('GW_UPSTREAM_MESSAGE_TOO_LARGE', `Upstream "${name}" answered with more than ${target.maxMessageBytes} bytes`, {
      target: name,
      limit: target.maxMessageBytes,
    });
  }
  for (const message of toMessages(res.text, logger)) wire.receive(message, exchange);
  if (exchange.waiting.size > 0) throw toProtocolError(name, status, 'the JSON body holds no answer to the request');
}
