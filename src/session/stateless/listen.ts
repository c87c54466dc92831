/**
 * `subscriptions/listen` (2026-07-28): the one way a stateless client hears of changes. Each listen
 * request keeps its response open as an SSE stream: first `notifications/subscriptions/acknowledged`
 * with the filter granted, then every matching notification of the caller's hosts, each tagged
 * `_meta["io.modelcontextprotocol/subscriptionId"]` = the listen request's id. Only the types asked
 * for are sent. Bounded: at most `max` open listen streams; past it the request gets GW_SESSION_LIMIT.
 */
import { GatewayError } from '../../errors/gateway-error.ts';
import { isObject } from '../../jsonrpc/envelope.ts';
import { META } from '../../jsonrpc/era.ts';
import type { JsonObject, JsonRpcRequest } from '../../jsonrpc/types.ts';
import type { Exchange } from './exchange.ts';

/** What a listen stream asked for (SubscriptionFilter). */
interface Filter {
  readonly toolsListChanged?: true;
  readonly promptsListChanged?: true;
  readonly resourcesListChanged?: true;
  readonly resourceSubscriptions?: string[];
}

interface Listener {
  readonly id: JsonRpcRequest['id'];
  readonly scope: string;
  readonly filter: Filter;
  readonly exchange: Exchange;
}

export interface Listeners {
  /**
   * Opens a listen stream for `scope`; `onend` runs once when it closes. `subscribe`: whether the
   * upstream can subscribe to resources (else no `resourceSubscriptions` is granted). Returns the
   * resource URIs granted. Throws GW_SESSION_LIMIT.
   */
  open(scope: string, request: JsonRpcRequest, exchange: Exchange, onend: () => void, subscribe: boolean): readonly string[];
  /** A notification of one of `scope`'s hosts. */
  notify(scope: string, notification: JsonObject): void;
  readonly size: number;
  /** Ends every stream (shutdown). */
  closeAll(): void;
}

/** The filter granted: the booleans asked for as true, and the URIs asked for. */
function grantOf(params: unknown): Filter {
  const asked = isObject(params) && isObject(params.notifications) ? params.notifications : {};
  const granted: Record<string, unknown> = {};
  for (const key of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const) if (asked[key] === true) granted[key] = true;
  const uris = asked.resourceSubscriptions;
  if (Array.isArray(uris)) granted.resourceSubscriptions = uris.filter((u): u is string => typeof u === 'string').slice(0, 256);
  return granted as Filter;
}

function wants(filter: Filter, notification: JsonObject): boolean {
  switch (notification.method) {
    case 'notifications/tools/list_changed':
      return filter.toolsListChanged === true;
    case 'notifications/prompts/list_changed':
      return filter.promptsListChanged === true;
    case 'notifications/resources/list_changed':
      return filter.resourcesListChanged === true;
    case 'notifications/resources/updated': {
      const uri = isObject(notification.params) ? notification.params.uri : undefined;
      return typeof uri === 'string' && (filter.resourceSubscriptions?.includes(uri) ?? false);
    }
    default:
      return false;
  }
}

/** `notification` tagged for one listen stream (a copy: several streams may get it). */
function tagged(notification: JsonObject, id: JsonRpcRequest['id']): string {
  const params = isObject(notification.params) ? notification.params : {};
  const meta = isObject(params._meta) ? params._meta : {};
  return JSON.stringify({ ...notification, params: { ...params, _meta: { ...meta, [META.subscriptionId]: id } } });
}

export function createListeners(max: number): Listeners {
  const listeners = new Set<Listener>();
  return {
    open(scope, request, exchange, onend, subscribe) {
      if (listeners.size >= max) throw new GatewayError('GW_SESSION_LIMIT', undefined, { limit: max, kind: 'listen-streams' });
      const asked = grantOf(request.params);
      const { resourceSubscriptions, ...lists } = asked;
      const filter: Filter = subscribe && resourceSubscriptions !== undefined ? asked : lists;
      const listener: Listener = { id: request.id, scope, filter, exchange };
      listeners.add(listener);
      exchange.onclose = () => {
        if (listeners.delete(listener)) onend();
      };
      exchange.sse();
      const ack = { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: { [META.subscriptionId]: request.id }, notifications: filter } };
      exchange.event(JSON.stringify(ack));
      return filter.resourceSubscriptions ?? [];
    },
    notify(scope, notification) {
      for (const l of listeners) if (l.scope === scope && !l.exchange.closed && wants(l.filter, notification)) l.exchange.event(tagged(notification, l.id));
    },
    get size() {
      return listeners.size;
    },
    closeAll() {
      for (const l of listeners) l.exchange.end();
      listeners.clear();
    },
  };
}
