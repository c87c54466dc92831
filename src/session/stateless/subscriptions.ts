/**
 * The resource subscriptions listen streams ask for (`resourceSubscriptions`), held on the 2025
 * upstream behind their host: `resources/subscribe` when the first stream of a host wants a URI,
 * `resources/unsubscribe` when the last one goes. The subscribe goes through the host's session
 * like any request, so its filters and the policy judge the URI (a denied one is refused exactly
 * like an unknown one); a URI is granted to a stream only once its subscribe succeeded.
 */
import type { JsonRpcRequest } from '../../jsonrpc/types.ts';
import type { ResponseSink } from '../streams.ts';
import { CHANNEL_REQUEST } from '../streams.ts';
import type { Host } from './hosts.ts';

/** Where the answers of the gateway's own unsubscribe requests go: nowhere. */
const DISCARD: ResponseSink = { onclose: undefined, closed: false, json() {}, sse() {}, event() {}, end() {} };

export interface UpstreamSubscriptions {
  /** Holds `uri` for one more stream; resolves true when the host is subscribed to it. */
  add(host: Host, uri: string): Promise<boolean>;
  drop(host: Host, uri: string): void;
}

/**
 * A sink that resolves with whether the one answer it gets is a result (an error, or none: false).
 * It takes the session's messages as objects (`take`): nothing is serialized for it or parsed back.
 */
function answerSink(settle: (ok: boolean) => void): ResponseSink {
  let done = false;
  return {
    onclose: undefined,
    get closed() {
      return done;
    },
    take(message, final) {
      // Progress or a log line on the way: not the answer.
      if (done || !final) return;
      done = true;
      settle('result' in message);
    },
    json() {},
    sse() {},
    event() {},
    end() {
      if (!done) settle(false);
      done = true;
    },
  };
}

interface Held {
  streams: number;
  readonly subscribed: Promise<boolean>;
}

export function createUpstreamSubscriptions(): UpstreamSubscriptions {
  const held = new WeakMap<Host, Map<string, Held>>();

  const request = (host: Host, method: 'resources/subscribe' | 'resources/unsubscribe', uri: string): JsonRpcRequest => ({ jsonrpc: '2.0', id: host.nextCall++, method, params: { uri } });

  const subscribe = (host: Host, uri: string) =>
    new Promise<boolean>((resolve) => {
      if (host.session.ended) return resolve(false);
      host.session.serve([request(host, 'resources/subscribe', uri)], answerSink(resolve), CHANNEL_REQUEST);
    });

  return {
    add(host, uri) {
      let uris = held.get(host);
      if (uris === undefined) held.set(host, (uris = new Map()));
      let entry = uris.get(uri);
      if (entry === undefined) uris.set(uri, (entry = { streams: 0, subscribed: subscribe(host, uri) }));
      entry.streams++;
      return entry.subscribed;
    },
    drop(host, uri) {
      const uris = held.get(host);
      const entry = uris?.get(uri);
      if (uris === undefined || entry === undefined) return;
      if (--entry.streams > 0) return;
      uris.delete(uri);
      // Only what was subscribed is unsubscribed; a refused URI was never held upstream.
      void entry.subscribed.then((ok) => {
        if (ok && !host.session.ended && uris.get(uri) === undefined) host.session.serve([request(host, 'resources/unsubscribe', uri)], DISCARD, CHANNEL_REQUEST);
      });
    },
  };
}
