/**
 * The resource subscriptions listen streams ask for (`resourceSubscriptions`), held on the 2025
 * upstream behind their host: `resources/subscribe` when the first stream of a host wants a URI,
 * `resources/unsubscribe` when the last one goes. The answers are not waited for: a refusal only
 * means no `resources/updated` for that URI, which is what the stream would see anyway.
 */
import type { JsonRpcRequest } from '../../jsonrpc/types.ts';
import type { ResponseSink } from '../streams.ts';
import { CHANNEL_REQUEST } from '../streams.ts';
import type { Host } from './hosts.ts';

/** Where the answers of the gateway's own subscribe requests go: nowhere. */
const DISCARD: ResponseSink = { onclose: undefined, closed: false, json() {}, sse() {}, event() {}, end() {} };

export interface UpstreamSubscriptions {
  add(host: Host, uri: string): void;
  drop(host: Host, uri: string): void;
}

export function createUpstreamSubscriptions(): UpstreamSubscriptions {
  const counts = new WeakMap<Host, Map<string, number>>();

  const send = (host: Host, method: 'resources/subscribe' | 'resources/unsubscribe', uri: string) => {
    if (host.session.ended) return;
    const request: JsonRpcRequest = { jsonrpc: '2.0', id: host.nextCall++, method, params: { uri } };
    host.session.serve([request], DISCARD, CHANNEL_REQUEST);
  };

  return {
    add(host, uri) {
      let uris = counts.get(host);
      if (uris === undefined) counts.set(host, (uris = new Map()));
      const n = uris.get(uri) ?? 0;
      uris.set(uri, n + 1);
      if (n === 0) send(host, 'resources/subscribe', uri);
    },
    drop(host, uri) {
      const uris = counts.get(host);
      const n = uris?.get(uri) ?? 0;
      if (uris === undefined || n === 0) return;
      if (n > 1) return void uris.set(uri, n - 1);
      uris.delete(uri);
      send(host, 'resources/unsubscribe', uri);
    },
  };
}
