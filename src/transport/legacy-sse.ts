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
import type { Logger } from '../log/logger.ts';
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
  const { target, logger, agent } = options;
  const name = target.name;
  const headers = upstreamHeaders(target, options.authorization, options.extraHeaders);
  const { credential } = options;
  /** Puts the current credential (an exchanged token) into the headers before a request. */
  const authorize = async () => {
    if (credential !== undefined) headers.authorization = `Bearer ${await credential()}`;
  };
  const stream = new AbortController();
  const posts = new Set<AbortController>();
  let endpoint: string | undefined;
  let closed = false;
  let startPromise: Promise<void> | undefined;

  const closedError = () => new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${name}" connection is closed`, { target: name });

  const shutDown = (reason: GatewayError | undefined) => {
    if (closed) return;
    closed = true;
    stream.abort();
    for (const post of posts) post.abort();
    posts.clear();
    if (reason !== undefined) logger.warn({ code: reason.code, reason: reason.message }, 'upstream connection lost');
    transport.onclose?.(reason);
  };

  const connect = (resolve: () => void, reject: (error: GatewayError) => void) => {
    let started = false;
    const refuse = (error: GatewayError) => {
      clearTimeout(timer);
      if (!started) {
        started = true;
        closed = true;
        stream.abort();
        reject(error);
      } else {
        shutDown(error);
      }
    };
    const timer = setTimeout(
      () => refuse(toProtocolError(name, 200, `no endpoint event within ${ENDPOINT_WAIT_MS} ms`)),
      ENDPOINT_WAIT_MS,
    );
    const parser = createSseMessageReader({
      target: name,
      maxMessageBytes: target.maxMessageBytes,
      logger,
      onmessage: (message) => {
        if (!closed) transport.onmessage?.(message);
      },
      onundeliverable: (id, error) => transport.onundeliverable?.(id, error),
      onother: (event) => {
        if (event.event !== 'endpoint' || started) return;
        let url: URL;
        try {
          url = new URL(event.data.trim(), target.url);
        } catch {
          refuse(toProtocolError(name, 200, 'the endpoint event holds no valid URI'));
          return;
        }
        if (url.origin !== new URL(target.url).origin) {
          refuse(toProtocolError(name, 200, 'the endpoint event names another origin; refused'));
          return;
        }
        endpoint = url.href;
        started = true;
        clearTimeout(timer);
        resolve();
      },
    });

    void (async () => {
      let res: Dispatcher.ResponseData;
      try {
        await authorize();
        res = await request(target.url, { method: 'GET', headers: { ...headers, accept: 'text/event-stream' }, dispatcher: agent, signal: stream.signal });
      } catch (err) {
        refuse(stream.signal.aborted ? closedError() : toNetworkError(name, err));
        return;
      }
      if (res.statusCode >= 400) {
        if (res.statusCode === 401) options.credentialRejected?.();
        refuse(toHttpError(name, res.statusCode, await readHead(res.body, ERROR_BODY_BYTES), logger));
        return;
      }
      if (mediaType(res.headers) !== 'text/event-stream') {
        await discard(res.body);
        refuse(toProtocolError(name, res.statusCode, 'the SSE URL did not answer with text/event-stream'));
        return;
      }
      try {
        for await (const chunk of res.body) parser.push(chunk);
      } catch {
        // handled below: the stream is gone either way
      }
      if (!closed) refuse(new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${name}" ended its SSE stream`, { target: name, reason: 'SSE stream ended' }));
    })();
  };

  const transport: Transport = {
    start() {
      startPromise ??= closed ? Promise.reject(closedError()) : new Promise<void>(connect);
      return startPromise;
    },

    async send(message, sendOptions) {
      if (closed || endpoint === undefined) throw closedError();
      // The POST only acknowledges; the request lives on the stream, so its trace context rides in
      // _meta, and a cancel (the signal) has no POST to end: the correlator's notification says it.
      const trace = sendOptions?.trace;
      if (trace !== undefined && isRequest(message)) setTraceMeta(message, trace);
      const controller = new AbortController();
      posts.add(controller);
      // Every POST here is only an acknowledgement (answers come on the stream), so all are bounded.
      const timer = boundPost(controller, target.timeouts.requestMs);
      try {
        if (credential !== undefined) await authorize();
        const res = await request(endpoint, {
          method: 'POST',
          headers: ownHeaders({ ...headers, 'content-type': 'application/json' }, sendOptions?.headers),
          body: JSON.stringify(message),
          dispatcher: agent,
          signal: controller.signal,
        });
        if (res.statusCode === 401) options.credentialRejected?.();
        if (res.statusCode >= 400) {
          const error = toHttpError(name, res.statusCode, await readHead(res.body, ERROR_BODY_BYTES), logger);
          // The server no longer knows the stream's session: every later message would fail too.
          if (res.statusCode === 404) shutDown(error);
          throw error;
        }
        await discard(res.body);
      } catch (err) {
        if (err instanceof GatewayError) throw err;
        if (controller.signal.aborted && !closed) throw postTimeout(name, message, target.timeouts.requestMs);
        throw controller.signal.aborted || closed ? closedError() : toNetworkError(name, err);
      } finally {
        clearTimeout(timer);
        posts.delete(controller);
      }
    },

    close() {
      shutDown(undefined);
      return Promise.resolve();
    },
  };
  return transport;
}

/** The message's own headers on its POST (never replacing one already set); its trace is in _meta. */
function ownHeaders(base: Record<string, string>, own: SendOptions['headers']): Record<string, string> {
  return own === undefined ? base : withMessageHeaders(base, { headers: own });
}
