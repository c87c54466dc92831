/**
 * A 2025 client's resources/subscribe and resources/unsubscribe toward a 2026-07-28 upstream that
 * offers subscriptions (`resources.subscribe`): each changes the set of URIs the bridge's
 * `subscriptions/listen` stream asks for as `resourceSubscriptions` (listen-stream.ts re-sends the
 * listen request with the whole set). A subscribe is answered `{}` once the upstream acknowledged
 * the URI as granted; not granted, it fails (GW_UPSTREAM_INVALID_ANSWER: the upstream offered
 * subscriptions). An unsubscribe takes effect at once: resources/updated reaches the client only for
 * a URI it holds. One change at a time; at most MAX_RESOURCE_SUBSCRIPTIONS URIs (GW_SESSION_LIMIT).
 */
import { GatewayError } from '../errors/gateway-error.ts';
import type { JsonObject, JsonRpcNotification, JsonRpcRequest, RequestId } from '../jsonrpc/types.ts';
import { MAX_RESOURCE_SUBSCRIPTIONS, type ListenStream } from './listen-stream.ts';

export interface ResourceSubscriptions {
  /** resources/subscribe or resources/unsubscribe; answered through `answer`, or rejects. */
  change(request: JsonRpcRequest): Promise<void>;
  /** Whether a change notification from the listen stream is for this client. */
  wants(notification: JsonRpcNotification): boolean;
}

export function createResourceSubscriptions(
  target: string,
  listen: () => ListenStream,
  answer: (id: RequestId, result: JsonObject) => void,
): ResourceSubscriptions {
  const subscribed = new Set<string>();
  let queue: Promise<unknown> = Promise.resolve();

  const apply = async (request: JsonRpcRequest): Promise<void> => {
    const uri = request.params?.uri;
    if (typeof uri !== 'string') throw new GatewayError('GW_INVALID_PARAMS', `Invalid params: uri must be a string`);
    const adding = request.method === 'resources/subscribe';
    if (adding === subscribed.has(uri)) return answer(request.id, {});
    if (adding && subscribed.size >= MAX_RESOURCE_SUBSCRIPTIONS)
      throw new GatewayError('GW_SESSION_LIMIT', undefined, { limit: MAX_RESOURCE_SUBSCRIPTIONS, kind: 'resource-subscriptions' });
    if (!adding) subscribed.delete(uri);
    const granted = await listen().resubscribe(adding ? [...subscribed, uri] : [...subscribed]);
    if (adding && granted?.includes(uri) !== true) {
      const reason = 'subscriptions/listen did not grant the resource subscription';
      throw new GatewayError('GW_UPSTREAM_INVALID_ANSWER', `Upstream "${target}" ${reason}`, { target, reason });
    }
    if (adding) subscribed.add(uri);
    answer(request.id, {});
  };

  return {
    change(request) {
      const next = queue.then(() => apply(request));
      queue = next.catch(() => undefined);
      return next;
    },
    wants(notification) {
      if (notification.method !== 'notifications/resources/updated') return true;
      const uri = notification.params?.uri;
      return typeof uri === 'string' && subscribed.has(uri);
    },
  };
}
