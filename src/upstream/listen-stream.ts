/**
 * The change notifications of a 2026-07-28 upstream, for a 2025 client: one `subscriptions/listen`
 * request per bridged connection (MCP 2026-07-28 basic/utilities/subscriptions), held open as an
 * SSE stream, asking for the list_changed kinds the upstream's `server/discover` offers. Its
 * acknowledgement comes first and is the gateway's; every later notification loses its
 * subscription-id tag (a 2025 client has no such thing) and is handed on like a 2025 server's
 * notification, which the session sends on the client's GET stream.
 *
 * The stream plays the part of the 2025 GET stream, with the same bound: it is reopened after it
 * ends (the server's shutdown, a cut connection), backing off from 250 ms doubling to 5 s, and
 * given up after 5 failures in a row that never got an acknowledgement. A refusal (a JSON-RPC
 * error answer) is final at once.
 */
import { isErrorResponse, isObject, isRequest, isResponse } from '../jsonrpc/envelope.ts';
import { META_SUBSCRIPTION_ID } from '../jsonrpc/modern.ts';
import type { JsonObject, JsonRpcMessage, JsonRpcNotification } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { createAbortHandle, type AbortHandle } from '../transport/http-dispatch.ts';
import type { StatelessHttpWire } from '../transport/stateless-http.ts';

const ACKNOWLEDGED = 'notifications/subscriptions/acknowledged';
export const LISTEN_ATTEMPTS = 5;
const INITIAL_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5_000;

/** The `notifications` filter of the listen request: the list_changed kinds the server offers. */
export function listenFilter(capabilities: unknown): JsonObject | undefined {
  if (!isObject(capabilities)) return undefined;
  const filter: JsonObject = {};
  const offers = (feature: string) => {
    const value = capabilities[feature];
    return isObject(value) && value.listChanged === true;
  };
  if (offers('tools')) filter.toolsListChanged = true;
  if (offers('prompts')) filter.promptsListChanged = true;
  if (offers('resources')) filter.resourcesListChanged = true;
  return Object.keys(filter).length === 0 ? undefined : filter;
}

export interface ListenStream {
  /** Opens the stream (once; later calls do nothing). */
  open(): void;
  /** Closes it for good. */
  close(): void;
}

export interface ListenStreamOptions {
  wire: StatelessHttpWire;
  logger: Logger;
  filter: JsonObject;
  /** The request's `_meta` envelope (made when each listen request is sent). */
  envelope: () => JsonObject;
  /** A change notification, untagged, for the session. */
  deliver: (notification: JsonRpcNotification) => void;
}

export function createListenStream({ wire, logger, filter, envelope, deliver }: ListenStreamOptions): ListenStream {
  let abort: AbortHandle | undefined;
  let opened = false;
  let closed = false;
  let failures = 0;
  let serial = 0;
  let timer: NodeJS.Timeout | undefined;

  const receive = (message: JsonRpcMessage) => {
    if (isRequest(message) || isResponse(message)) return;
    if (message.method === ACKNOWLEDGED) {
      failures = 0;
      return;
    }
    const meta = message.params?._meta;
    if (isObject(meta)) {
      delete meta[META_SUBSCRIPTION_ID];
      if (Object.keys(meta).length === 0) delete message.params!._meta;
    }
    deliver(message);
  };

  const listen = () => {
    if (closed) return;
    const handle = createAbortHandle();
    abort = handle;
    const request = { jsonrpc: '2.0' as const, id: `switchboard-listen-${++serial}`, method: 'subscriptions/listen', params: { notifications: filter, _meta: envelope() } };
    const ended = (why: string) => {
      if (closed || handle.aborted) return;
      failures++;
      if (failures >= LISTEN_ATTEMPTS) {
        logger.warn({ why, failures }, 'subscriptions/listen could not be kept open; no more change notifications from this upstream');
        return;
      }
      const delay = Math.min(MAX_BACKOFF_MS, INITIAL_BACKOFF_MS * 2 ** (failures - 1));
      logger.debug({ why, delay }, 'subscriptions/listen ended; listening again');
      timer = setTimeout(listen, delay);
      timer.unref();
    };
    wire.post(request, receive, handle).then(
      (answer) => {
        // Refused (no such method, or not for these kinds): asking again would only be refused again.
        if (isErrorResponse(answer)) logger.warn({ code: answer.error.code }, 'subscriptions/listen refused; no change notifications from this upstream');
        else ended('the server ended the subscription');
      },
      (err: unknown) => ended(isObject(err) && typeof err.code === 'string' ? err.code : 'failed'),
    );
  };

  return {
    open() {
      if (opened) return;
      opened = true;
      listen();
    },
    close() {
      closed = true;
      clearTimeout(timer);
      abort?.abort();
    },
  };
}
