/**
 * The legacy HTTP+SSE upstream wire (MCP 2024-11-05, basic/transports "HTTP with SSE"): one GET
 * opens the event stream; its first `endpoint` event names the URI to POST messages to; every
 * message from the server arrives as a `message` event on that stream.
 *
 * The endpoint is resolved against the stream's URL and must stay on the same origin: a server
 * (or anyone able to inject an event) must not be able to send our configured credentials
 * elsewhere. The upstream session lives as long as the stream: there is no resumption in this
 * revision, so a dropped stream closes the transport with a reason (the session then ends or
 * restarts per `onExit`, as for a crashed child).
 */
import { request, type Dispatcher } from 'undici';
import { GatewayError } from '../errors/gateway-error.ts';
import { isRequest } from '../jsonrpc/envelope.ts';
import { setTraceMeta } from '../jsonrpc/trace-context.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';
import { discard, mediaType, readHead, upstreamHeaders, withMessageHeaders } from './http-body.ts';
import { boundPost, postTimeout, toHttpError, toNetworkError, toProtocolError } from './http-errors.ts';
import { createSseMessageReader } from './sse-messages.ts';
import type { RemoteTransportOptions } from './streamable-wire.ts';
import type { SendOptions, Transport } from './types.ts';

/**
 * How long `start` waits for the `endpoint` event. 30 s, the handshake's own minimum (a server
 * behind `npx` may be slow to answer its first request, and this is its first answer).
 */
export const ENDPOINT_WAIT_MS = 30_000;
const ERROR_BODY_BYTES = 4_096;

export function createLegacySseTransport(options: RemoteTransportOptions): Transport {
  return new LegacySse(options);
}

/** The transport's state: the stream, the POSTs in flight, the endpoint the stream named. */
class LegacySse implements Transport {
  readonly options: RemoteTransportOptions;
  readonly name: string;
  readonly headers: Record<string, string>;
  readonly stream = new AbortController();
  readonly posts = new Set<AbortController>();
  endpoint: string | undefined;
  closed = false;
  startPromise: Promise<void> | undefined;
  onmessage?: (message: JsonRpcMessage) => void;
  onclose?: (reason?: GatewayError) => void;
  onundeliverable?: (upstreamId: number, error: GatewayError) => void;

  constructor(options: RemoteTransportOptions) {
    this.options = options;
    this.name = options.target.name;
    this.headers = upstreamHeaders(options.target, options.authorization, options.extraHeaders);
  }

  /** Puts the current credential (an exchanged token) into the headers before a request. */
  async authorize(): Promise<void> {
    const { credential } = this.options;
    if (credential !== undefined) this.headers.authorization = `Bearer ${await credential()}`;
  }

  closedError(): GatewayError {
    return new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${this.name}" connection is closed`, { target: this.name });
  }

  shutDown(reason: GatewayError | undefined): void {
    if (this.closed) return;
    this.closed = true;
    this.stream.abort();
    for (const post of this.posts) post.abort();
    this.posts.clear();
    if (reason !== undefined) this.options.logger.warn({ code: reason.code, reason: reason.message }, 'upstream connection lost');
    this.onclose?.(reason);
  }

  start(): Promise<void> {
    this.startPromise ??= this.closed ? Promise.reject(this.closedError()) : new Promise<void>((resolve, reject) => connect(this, resolve, reject));
    return this.startPromise;
  }

  async send(message: JsonRpcMessage, sendOptions?: SendOptions): Promise<void> {
    const { target, agent, credential, logger } = this.options;
    const { name, endpoint } = this;
    if (this.closed || endpoint === undefined) throw this.closedError();
    // The POST only acknowledges; the request lives on the stream, so its trace context rides in
    // _meta, and a cancel (the signal) has no POST to end: the correlator's notification says it.
    const trace = sendOptions?.trace;
    if (trace !== undefined && isRequest(message)) setTraceMeta(message, trace);
    const controller = new AbortController();
    this.posts.add(controller);
    // Every POST here is only an acknowledgement (answers come on the stream), so all are bounded.
    const timer = boundPost(controller, target.timeouts.requestMs);
    try {
      if (credential !== undefined) await this.authorize();
      const res = await request(endpoint, {
        method: 'POST',
        headers: ownHeaders({ ...this.headers, 'content-type': 'application/json' }, sendOptions?.headers),
        body: JSON.stringify(message),
        dispatcher: agent,
        signal: controller.signal,
      });
      if (res.statusCode === 401) this.options.credentialRejected?.();
      if (res.statusCode >= 400) {
        const error = toHttpError(name, res.statusCode, await readHead(res.body, ERROR_BODY_BYTES), logger);
        // The server no longer knows the stream's session: every later message would fail too.
        if (res.statusCode === 404) this.shutDown(error);
        throw error;
      }
      await discard(res.body);
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      if (controller.signal.aborted && !this.closed) throw postTimeout(name, message, target.timeouts.requestMs);
      throw controller.signal.aborted || this.closed ? this.closedError() : toNetworkError(name, err);
    } finally {
      clearTimeout(timer);
      this.posts.delete(controller);
    }
  }

  close(): Promise<void> {
    this.shutDown(undefined);
    return Promise.resolve();
  }
}

/** One start: the GET stream opening, until its `endpoint` event (or a refusal). */
interface Opening {
  readonly t: LegacySse;
  started: boolean;
  timer: NodeJS.Timeout | undefined;
  readonly resolve: () => void;
  readonly reject: (error: GatewayError) => void;
}

/** The start failed (before the endpoint event) or the stream did (after): either way it ends. */
function refuse(o: Opening, error: GatewayError): void {
  clearTimeout(o.timer);
  if (!o.started) {
    o.started = true;
    o.t.closed = true;
    o.t.stream.abort();
    o.reject(error);
  } else {
    o.t.shutDown(error);
  }
}

/** The `endpoint` event: the URI to POST to, resolved against the stream's URL, same origin only. */
function onEndpoint(o: Opening, data: string): void {
  const { name, target } = { name: o.t.name, target: o.t.options.target };
  let url: URL;
  try {
    url = new URL(data.trim(), target.url);
  } catch {
    refuse(o, toProtocolError(name, 200, 'the endpoint event holds no valid URI'));
    return;
  }
  if (url.origin !== new URL(target.url).origin) {
    refuse(o, toProtocolError(name, 200, 'the endpoint event names another origin; refused'));
    return;
  }
  o.t.endpoint = url.href;
  o.started = true;
  clearTimeout(o.timer);
  o.resolve();
}

function connect(t: LegacySse, resolve: () => void, reject: (error: GatewayError) => void): void {
  const { target, logger } = t.options;
  const o: Opening = { t, started: false, timer: undefined, resolve, reject };
  o.timer = setTimeout(() => refuse(o, toProtocolError(t.name, 200, `no endpoint event within ${ENDPOINT_WAIT_MS} ms`)), ENDPOINT_WAIT_MS);
  const parser = createSseMessageReader({
    target: t.name,
    maxMessageBytes: target.maxMessageBytes,
    logger,
    onmessage: (message) => {
      if (!t.closed) t.onmessage?.(message);
    },
    onundeliverable: (id, error) => t.onundeliverable?.(id, error),
    onother: (event) => {
      if (event.event !== 'endpoint' || o.started) return;
      onEndpoint(o, event.data);
    },
  });
  void readStream(o, parser);
}

/** The GET and its events, until the stream ends (which closes the transport). */
async function readStream(o: Opening, parser: { push(chunk: Buffer): void }): Promise<void> {
  const { t } = o;
  const { target, logger, agent } = t.options;
  const name = t.name;
  let res: Dispatcher.ResponseData;
  try {
    await t.authorize();
    res = await request(target.url, { method: 'GET', headers: { ...t.headers, accept: 'text/event-stream' }, dispatcher: agent, signal: t.stream.signal });
  } catch (err) {
    refuse(o, t.stream.signal.aborted ? t.closedError() : toNetworkError(name, err));
    return;
  }
  if (res.statusCode >= 400) {
    if (res.statusCode === 401) t.options.credentialRejected?.();
    refuse(o, toHttpError(name, res.statusCode, await readHead(res.body, ERROR_BODY_BYTES), logger));
    return;
  }
  if (mediaType(res.headers) !== 'text/event-stream') {
    await discard(res.body);
    refuse(o, toProtocolError(name, res.statusCode, 'the SSE URL did not answer with text/event-stream'));
    return;
  }
  try {
    for await (const chunk of res.body) parser.push(chunk);
  } catch {
    // handled below: the stream is gone either way
  }
  if (!t.closed) refuse(o, new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${name}" ended its SSE stream`, { target: name, reason: 'SSE stream ended' }));
}

/** The message's own headers on its POST (never replacing one already set); its trace is in _meta. */
function ownHeaders(base: Record<string, string>, own: SendOptions['headers']): Record<string, string> {
  return own === undefined ? base : withMessageHeaders(base, { headers: own });
}
