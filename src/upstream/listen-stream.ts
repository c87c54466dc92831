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
 *
 * Resource subscriptions (a 2025 client's resources/subscribe): a listen request's filter is fixed,
 * so a changed set of URIs is a new listen request with the whole set as `resourceSubscriptions`;
 * once the upstream acknowledges it, it becomes the held stream and the previous one is closed
 * (nothing is delivered twice: only the held stream's notifications are handed on). Refused or
 * ended before its acknowledgement, the held stream stays as it was.
 */
import { isErrorResponse, isObject, isRequest, isResponse } from '../jsonrpc/envelope.ts';
import { META } from '../jsonrpc/modern.ts';
import type { JsonObject, JsonRpcMessage, JsonRpcNotification } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { createAbortHandle, type AbortHandle } from '../transport/http-dispatch.ts';
import type { StatelessHttpWire } from '../transport/stateless-http.ts';

const ACKNOWLEDGED = 'notifications/subscriptions/acknowledged';
export const LISTEN_ATTEMPTS = 5;
const INITIAL_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5_000;
/**
 * Resource URIs one bridged session may hold subscribed: the same bound the gateway's own 2026 edge
 * puts on a listen request's `resourceSubscriptions` (session/stateless/listen.ts), since each change
 * re-sends the whole list upstream. Past it, resources/subscribe gets GW_SESSION_LIMIT.
 */
export const MAX_RESOURCE_SUBSCRIPTIONS = 256;
/**
 * How long a replacement listen request may go without its acknowledgement (the server's first
 * event) before it is given up, so a server that never acknowledges cannot hold a session's
 * subscription changes (one at a time) for ever: the change then fails and the held stream stays.
 */
export const REPLACE_ACK_MS = 30_000;
/**
 * How long opening the stream may wait for its first acknowledgement. The handshake waits for it
 * (modern-bridge.ts), so that everything the upstream says once a client is answered reaches that
 * client; an upstream slower than this is listened to anyway, the session just does not wait longer.
 */
export const OPEN_ACK_MS = 10_000;

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
  /**
   * Opens the stream (once; later calls only wait). Resolves once the upstream acknowledged it, or
   * the first attempt ended without that, or OPEN_ACK_MS passed, or nothing is listened to.
   */
  open(): Promise<void>;
  /**
   * Listens again with `uris` as the resourceSubscriptions; resolves with the URIs the upstream
   * acknowledged, or undefined when it refused or the request ended before its acknowledgement.
   */
  resubscribe(uris: readonly string[]): Promise<readonly string[] | undefined>;
  /** Closes it for good. */
  close(): void;
}

export interface ListenStreamOptions {
  wire: StatelessHttpWire;
  logger: Logger;
  /** The list_changed kinds asked for (may be empty when only resource subscriptions are wanted). */
  filter: JsonObject;
  /** The request's `_meta` envelope (made when each listen request is sent). */
  envelope: () => JsonObject;
  /** A change notification, untagged, for the session. */
  deliver: (notification: JsonRpcNotification) => void;
}

type Settle = (granted: readonly string[] | undefined) => void;

function grantedUris(params: unknown): string[] {
  const asked = isObject(params) && isObject(params.notifications) ? params.notifications.resourceSubscriptions : undefined;
  return Array.isArray(asked) ? asked.filter((u): u is string => typeof u === 'string') : [];
}

export function createListenStream(options: ListenStreamOptions): ListenStream {
  return new Listening(options);
}

/** The stream's state: the held listen request, its URIs, the replacements under way, the backoff. */
class Listening implements ListenStream {
  readonly wire: StatelessHttpWire;
  readonly logger: Logger;
  readonly filter: JsonObject;
  readonly envelope: () => JsonObject;
  readonly deliver: (notification: JsonRpcNotification) => void;
  /** The held stream: the one whose notifications are handed on. */
  current: AbortHandle | undefined;
  /** The URIs the held stream was acknowledged for. */
  held: readonly string[] = [];
  opened = false;
  closed = false;
  failures = 0;
  serial = 0;
  timer: NodeJS.Timeout | undefined;
  /** Replacements sent and not yet acknowledged (closed with the stream). */
  readonly replacing = new Set<AbortHandle>();
  readonly lists: boolean;
  /** Settles `open()`'s promise (once). */
  opening: (() => void) | undefined;
  openWait: Promise<void> | undefined;

  constructor({ wire, logger, filter, envelope, deliver }: ListenStreamOptions) {
    this.wire = wire;
    this.logger = logger;
    this.filter = filter;
    this.envelope = envelope;
    this.deliver = deliver;
    this.lists = Object.keys(filter).length > 0;
  }

  settleOpen(): void {
    this.opening?.();
    this.opening = undefined;
  }

  open(): Promise<void> {
    if (this.openWait !== undefined) return this.openWait;
    if (this.opened || !this.lists) {
      this.opened = true;
      return (this.openWait = Promise.resolve());
    }
    this.opened = true;
    this.openWait = new Promise<void>((resolve) => {
      const bound = setTimeout(resolve, OPEN_ACK_MS).unref();
      this.opening = () => {
        clearTimeout(bound);
        resolve();
      };
    });
    listen(this, this.held);
    return this.openWait;
  }

  resubscribe(uris: readonly string[]): Promise<readonly string[] | undefined> {
    this.opened = true;
    if (this.closed) return Promise.resolve(undefined);
    if (uris.length === 0 && !this.lists) {
      // Nothing left to listen for: the held stream goes.
      this.current?.abort();
      this.current = undefined;
      this.held = [];
      return Promise.resolve([]);
    }
    return new Promise((resolve) => listen(this, uris, resolve));
  }

  close(): void {
    this.closed = true;
    this.settleOpen();
    clearTimeout(this.timer);
    this.current?.abort();
    for (const handle of this.replacing) handle.abort();
    this.replacing.clear();
  }
}

/** One listen request: its handle, and while it replaces the held stream, who waits for its acknowledgement. */
interface Request {
  readonly s: Listening;
  readonly handle: AbortHandle;
  settle: Settle | undefined;
  readonly guard: NodeJS.Timeout | undefined;
}

function untag(s: Listening, message: JsonRpcNotification): void {
  const meta = message.params?._meta;
  if (isObject(meta)) {
    delete meta[META.subscriptionId];
    if (Object.keys(meta).length === 0) delete message.params!._meta;
  }
  s.deliver(message);
}

/** One listen request; with `settle` it replaces the held stream only once acknowledged. */
function listen(s: Listening, uris: readonly string[], settle?: Settle): void {
  if (s.closed) return settle?.(undefined);
  const handle = createAbortHandle();
  if (settle === undefined) {
    s.current?.abort();
    s.current = handle;
  } else s.replacing.add(handle);
  const guard = settle === undefined ? undefined : setTimeout(() => handle.abort(), REPLACE_ACK_MS).unref();
  const r: Request = { s, handle, settle, guard };
  const asked: JsonObject = uris.length === 0 ? s.filter : { ...s.filter, resourceSubscriptions: [...uris] };
  const request = { jsonrpc: '2.0' as const, id: `switchboard-listen-${++s.serial}`, method: 'subscriptions/listen', params: { notifications: asked, _meta: s.envelope() } };
  s.wire.post(request, (message) => receive(r, message), handle).then(
    (answer) => {
      // A replacement refused or ended before its acknowledgement: the held stream stays.
      if (r.settle !== undefined) return unsettled(r);
      // Refused (no such method, or not for these kinds): asking again would only be refused again.
      if (isErrorResponse(answer)) {
        s.settleOpen();
        s.logger.warn({ code: answer.error.code }, 'subscriptions/listen refused; no change notifications from this upstream');
      } else ended(r, 'the server ended the subscription');
    },
    (err: unknown) => {
      if (r.settle !== undefined) return unsettled(r);
      ended(r, isObject(err) && typeof err.code === 'string' ? err.code : 'failed');
    },
  );
}

function receive(r: Request, message: JsonRpcMessage): void {
  const { s, handle } = r;
  if (isRequest(message) || isResponse(message)) return;
  if (message.method === ACKNOWLEDGED) {
    s.failures = 0;
    if (handle === s.current) s.settleOpen();
    if (r.settle !== undefined) {
      clearTimeout(r.guard);
      s.replacing.delete(handle);
      clearTimeout(s.timer);
      if (s.current !== handle) s.current?.abort();
      s.current = handle;
      s.held = grantedUris(message.params);
      r.settle(s.held);
      r.settle = undefined;
    }
    return;
  }
  if (handle === s.current) untag(s, message);
}

function ended(r: Request, why: string): void {
  const { s, handle } = r;
  if (handle === s.current) s.settleOpen();
  if (s.closed || handle.aborted || handle !== s.current) return;
  s.failures++;
  if (s.failures >= LISTEN_ATTEMPTS) {
    s.logger.warn({ why, failures: s.failures }, 'subscriptions/listen could not be kept open; no more change notifications from this upstream');
    return;
  }
  const delay = Math.min(MAX_BACKOFF_MS, INITIAL_BACKOFF_MS * 2 ** (s.failures - 1));
  s.logger.debug({ why, delay }, 'subscriptions/listen ended; listening again');
  s.timer = setTimeout(() => listen(s, s.held), delay);
  s.timer.unref();
}

function unsettled(r: Request): void {
  clearTimeout(r.guard);
  r.s.replacing.delete(r.handle);
  r.settle?.(undefined);
}
