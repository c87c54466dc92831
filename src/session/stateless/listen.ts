/**
 * `subscriptions/listen` (2026-07-28): the one way a stateless client hears of changes. Each listen
 * request keeps its response open as an SSE stream: first `notifications/subscriptions/acknowledged`
 * with the filter granted, then every matching notification of the caller's hosts, each tagged
 * `_meta["io.modelcontextprotocol/subscriptionId"]` = the listen request's id. Only the types asked
 * for are sent; resource URIs only those granted (subscribed upstream through the caller's held
 * session, so its filters and policy judged them). Bounded: at most `max` open listen streams; past it the request gets GW_SESSION_LIMIT.
 */
import { GatewayError } from '../../errors/gateway-error.ts';
import { isObject } from '../../jsonrpc/envelope.ts';
import { META } from '../../jsonrpc/era.ts';
import type { JsonObject, JsonRpcRequest } from '../../jsonrpc/types.ts';
import { canonicalUri } from '../../router/canonical.ts';
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
  /** The filter's resourceSubscriptions, canonical (undefined: none granted). */
  readonly granted: ReadonlySet<string> | undefined;
  readonly exchange: Exchange;
}

export interface Listeners {
  /**
   * Opens a listen stream for `scope`; `onend` runs once when it closes. `grant` says which of the
   * `resourceSubscriptions` asked for are granted (undefined: none can be, the key is left out);
   * the acknowledgement waits for it. Rejects with GW_SESSION_LIMIT.
   */
  open(scope: string, request: JsonRpcRequest, exchange: Exchange, onend: () => void, grant: Grant): Promise<void>;
  /** A notification of one of `scope`'s hosts. */
  notify(scope: string, notification: JsonObject): void;
  readonly size: number;
  /** Ends every stream (shutdown). */
  closeAll(): void;
}

/** Which of the URIs asked for a listen stream gets; undefined: the upstream cannot subscribe. */
export type Grant = (uris: readonly string[]) => Promise<readonly string[] | undefined>;

/** The filter granted: the booleans asked for as true, and the URIs asked for. */
function grantOf(params: unknown): Filter {
  const asked = isObject(params) && isObject(params.notifications) ? params.notifications : {};
  const granted: Record<string, unknown> = {};
  for (const key of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const) if (asked[key] === true) granted[key] = true;
  const uris = asked.resourceSubscriptions;
  if (Array.isArray(uris)) granted.resourceSubscriptions = uris.filter((u): u is string => typeof u === 'string').slice(0, 256);
  return granted as Filter;
}

/** The granted URIs in canonical spelling (router/canonical.ts): an update names the URI as the upstream got it, which is the canonical one the chain forwarded. */
const canonicalOf = (uris: readonly string[]): ReadonlySet<string> => new Set(uris.map((u) => canonicalUri(u) ?? u));

function wants(filter: Filter, granted: ReadonlySet<string> | undefined, notification: JsonObject): boolean {
  switch (notification.method) {
    case 'notifications/tools/list_changed':
      return filter.toolsListChanged === true;
    case 'notifications/prompts/list_changed':
      return filter.promptsListChanged === true;
    case 'notifications/resources/list_changed':
      return filter.resourcesListChanged === true;
    case 'notifications/resources/updated': {
      const uri = isObject(notification.params) ? notification.params.uri : undefined;
      return typeof uri === 'string' && granted !== undefined && granted.has(canonicalUri(uri) ?? uri);
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
  let pending = 0;
  let closing = false;
  return {
    async open(scope, request, exchange, onend, grant) {
      // Streams waiting for their grant count too: the bound holds while subscriptions are asked.
      if (listeners.size + pending >= max) throw new GatewayError('GW_SESSION_LIMIT', undefined, { limit: max, kind: 'listen-streams' });
      pending++;
      let gone = false;
      exchange.onclose = () => void (gone = true);
      const { resourceSubscriptions, ...lists } = grantOf(request.params);
      let filter: Filter = lists;
      try {
        const uris = resourceSubscriptions === undefined ? undefined : await grant(resourceSubscriptions);
        if (uris !== undefined) filter = { ...lists, resourceSubscriptions: [...uris] };
      } finally {
        pending--;
      }
      if (gone || exchange.closed || closing) {
        if (!exchange.closed) exchange.end();
        return onend();
      }
      const granted = filter.resourceSubscriptions === undefined ? undefined : canonicalOf(filter.resourceSubscriptions);
      const listener: Listener = { id: request.id, scope, filter, granted, exchange };
      listeners.add(listener);
      exchange.onclose = () => {
        if (listeners.delete(listener)) onend();
      };
      exchange.sse();
      const ack = { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: { [META.subscriptionId]: request.id }, notifications: filter } };
      exchange.event(JSON.stringify(ack));
    },
    notify(scope, notification) {
      for (const l of listeners) if (l.scope === scope && !l.exchange.closed && wants(l.filter, l.granted, notification)) l.exchange.event(tagged(notification, l.id));
    },
    get size() {
      return listeners.size;
    },
    closeAll() {
      closing = true;
      for (const l of listeners) l.exchange.end();
      listeners.clear();
    },
  };
}
