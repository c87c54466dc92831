/**
 * Server-initiated messages of a session's upstreams (its members), on their way to the one
 * downstream: server->client requests get ids from one session-wide counter (two targets asking at
 * once cannot collide) and their answers go back to the member that asked, under its own id; a
 * member's cancel of its own request is translated to the id the client saw.
 *
 * Behind an aggregate (`namespaced`) notifications get their target's context (encoded URIs,
 * logger names) and list_changed is coalesced; a single-target session passes them as they are.
 */
import { GatewayError, toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import { cancelledRequestId, idKey, isObject } from '../jsonrpc/envelope.ts';
import { META_INPUT_KEY } from '../jsonrpc/modern.ts';
import { dropRawText } from '../jsonrpc/wire-text.ts';
import type { JsonObject, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, RequestId } from '../jsonrpc/types.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { NameTable } from '../router/name-table.ts';
import { encodeResourceUri } from '../router/resource-uri.ts';
import type { Member } from './member.ts';
import type { OutStream, StreamSet } from './streams.ts';
import type { ServerAsked } from './chain/server-asked.ts';

/** list_changed from several targets within this window reaches the downstream once. */
export const LIST_CHANGED_COALESCE_MS = 20;
const LIST_CHANGED = {
  tools: 'notifications/tools/list_changed',
  prompts: 'notifications/prompts/list_changed',
  resources: 'notifications/resources/list_changed',
} as const;
export type ListFeature = keyof typeof LIST_CHANGED;

export interface ServerMessagesOptions {
  streams: StreamSet;
  limits: GatewayConfig['limits'];
  logger: Logger;
  tables: { readonly tools: NameTable; readonly prompts: NameTable };
  /** False before initialize and after the end: no list_changed then. */
  live: () => boolean;
  /** Several targets behind one endpoint: names, URIs and logger names carry their target. */
  namespaced: boolean;
  /**
   * Held for 2026 clients (session/stateless/): a request keeps the name a 2026 upstream gave it
   * (`_meta` META_INPUT_KEY, for mrtr.ts); any other downstream never sees that key.
   */
  held: boolean;
  /** The chain's judgment of what an upstream asks the client (chain/server-asked.ts); undefined: none. */
  judge?: ServerAsked | undefined;
}

export interface ServerMessages {
  /** A member's request to the client (sampling, elicitation, roots, ping). */
  request(member: Member, request: JsonRpcRequest): void;
  /** A member's notification (other than progress of a pending request). */
  notification(member: Member, notification: JsonRpcNotification): void;
  /** The client's answer to one of those requests: back to the member that asked. */
  answer(response: JsonRpcResponse): Promise<void>;
  /** Tells the client (once per coalescing window) that these lists changed. */
  listChanged(...features: ListFeature[]): void;
  /** Stops a pending coalesced notification (the session ended). */
  stop(): void;
  /** The gateway's own request to the client (a URL elicitation, url-consent.ts): its answer is read by nobody. */
  ask(method: string, params: JsonObject): void;
  /** The gateway's own notification to the client, on the standalone stream. */
  notify(method: string, params: JsonObject): void;
}

interface Asked {
  readonly member: Member;
  readonly upstreamId: RequestId;
  readonly stream: OutStream;
  readonly method: string;
  /** When it was asked (for its audit line); 0 without one. */
  readonly started: number;
}

/** Pass-through notifications that belong to no request: the standalone stream. */
const BROADCAST = new Set([...Object.values(LIST_CHANGED), 'notifications/resources/updated']);

export function createServerMessages({ streams, limits, logger, tables, live, namespaced, held, judge }: ServerMessagesOptions): ServerMessages {
  const asked = new Map<number, Asked>();
  // Per member (not per name: a reload may replace a member under the same name), upstream id -> ours.
  const askedIds = new WeakMap<Member, Map<string, number>>();
  let nextId = 1;
  const changed = new Set<ListFeature>();
  /** Ids of the gateway's own requests not yet answered (bounded: an answer that never comes is forgotten). */
  const own = new Set<number>();
  let timer: NodeJS.Timeout | undefined;

  /** Writes to `stream`; false when the standalone backlog is full. */
  const emit = (message: JsonRpcNotification | JsonRpcRequest, stream: OutStream): boolean => {
    if (stream.standalone && streams.backlog >= limits.pendingServerMessages) {
      logger.warn({ method: message.method }, 'standalone stream backlog full; server message dropped');
      return false;
    }
    streams.send(stream, message as unknown as JsonObject, false);
    return true;
  };

  const flush = () => {
    timer = undefined;
    for (const feature of changed) emit({ jsonrpc: '2.0', method: LIST_CHANGED[feature] }, streams.standalone);
    changed.clear();
  };

  const idsOf = (member: Member) => {
    let ids = askedIds.get(member);
    if (ids === undefined) askedIds.set(member, (ids = new Map()));
    return ids;
  };

  /** The member withdraws one of its own server->client requests: translate to our id. */
  const cancelled = (member: Member, notification: JsonRpcNotification) => {
    const params = notification.params;
    const upstreamRequestId = cancelledRequestId(params);
    if (upstreamRequestId === undefined || !isObject(params)) {
      // A single-target session's logger names its target already: a line carries each key once.
      logger.warn(namespaced ? { target: member.name } : {}, 'notifications/cancelled from the upstream without a usable requestId; dropped');
      return;
    }
    const ids = idsOf(member);
    const key = idKey(upstreamRequestId);
    const downstreamId = ids.get(key);
    const entry = downstreamId === undefined ? undefined : asked.get(downstreamId);
    if (downstreamId === undefined || entry === undefined) return;
    ids.delete(key);
    asked.delete(downstreamId);
    params.requestId = downstreamId;
    emit(notification, entry.stream.complete ? streams.pick(false) : entry.stream);
  };

  /** Relays a member's request to the client under a new id (the hooks, if any, have let it through). */
  const relay = (member: Member, request: JsonRpcRequest) => {
    const stream = streams.pick(false);
    const downstreamId = nextId++;
    const upstreamId = request.id;
    request.id = downstreamId;
    if (!held) withoutInputKey(request);
    const started = judge === undefined ? 0 : judge.asked(member, request);
    // Recorded before it goes out: a receiver may answer at once (a held session's bridge does).
    asked.set(downstreamId, { member, upstreamId, stream, method: request.method, started });
    const ids = idsOf(member);
    ids.set(idKey(upstreamId), downstreamId);
    if (!emit(request, stream)) {
      asked.delete(downstreamId);
      ids.delete(idKey(upstreamId));
      const error = new GatewayError('GW_DOWNSTREAM_UNAVAILABLE', undefined, { target: member.name });
      member.reply(toErrorResponse(upstreamId, error)).catch(() => undefined);
    }
  };

  const messages: ServerMessages = {
    request(member, request) {
      // The chain's request hooks first (chain/server-asked.ts); a refusal is the upstream's answer.
      const hooked = judge?.hooked(member, request);
      if (hooked === undefined) return relay(member, request);
      hooked.then(
        (next) => (live() ? relay(member, next) : undefined),
        (err: unknown) => member.reply(toErrorResponse(request.id, toGatewayError(err))).catch(() => undefined),
      );
    },

    notification(member, notification) {
      const params = notification.params;
      if (notification.method === 'notifications/cancelled') return cancelled(member, notification);
      if (!namespaced) {
        emit(notification, streams.pick(BROADCAST.has(notification.method)));
        return;
      }
      switch (notification.method) {
        case LIST_CHANGED.tools:
          tables.tools.forget(member.name);
          return messages.listChanged('tools');
        case LIST_CHANGED.prompts:
          tables.prompts.forget(member.name);
          return messages.listChanged('prompts');
        case LIST_CHANGED.resources:
          return messages.listChanged('resources');
        case 'notifications/resources/updated':
          if (isObject(params) && typeof params.uri === 'string') params.uri = encodeResourceUri(member.name, params.uri);
          emit(notification, streams.standalone);
          return;
        case 'notifications/message':
          // The target's name goes first in the logger name so the client can tell sources apart.
          if (isObject(params)) params.logger = typeof params.logger === 'string' ? `${member.name}/${params.logger}` : member.name;
          emit(notification, streams.pick(false));
          return;
        default:
          emit(notification, streams.pick(false));
      }
    },

    async answer(response) {
      const downstreamId = typeof response.id === 'number' ? response.id : NaN;
      if (own.delete(downstreamId)) return;
      const entry = asked.get(downstreamId);
      if (entry === undefined) {
        logger.debug({ id: response.id }, 'answer to no server->client request of ours; dropped');
        return;
      }
      asked.delete(downstreamId);
      idsOf(entry.member).delete(idKey(entry.upstreamId));
      response.id = entry.upstreamId;
      judge?.answered(entry.member, entry.method, entry.started, response, downstreamId);
      await entry.member.reply(response).catch(() => undefined);
    },

    listChanged(...features) {
      if (!live()) return;
      for (const f of features) changed.add(f);
      timer ??= setTimeout(flush, LIST_CHANGED_COALESCE_MS);
    },

    stop() {
      clearTimeout(timer);
      timer = undefined;
    },

    ask(method, params) {
      if (!live()) return;
      const id = nextId++;
      if (own.size >= 64) own.delete(own.values().next().value as number);
      own.add(id);
      emit({ jsonrpc: '2.0', id, method, params }, streams.pick(false));
    },

    notify(method, params) {
      if (live()) emit({ jsonrpc: '2.0', method, params }, streams.standalone);
    },
  };
  return messages;
}

/** Drops the gateway's carrier of an input request's name (input-requests.ts) from a request. */
function withoutInputKey(request: JsonRpcRequest): void {
  const meta = isObject(request.params) ? request.params._meta : undefined;
  if (!isObject(meta) || !(META_INPUT_KEY in meta)) return;
  delete meta[META_INPUT_KEY];
  if (Object.keys(meta).length === 0 && isObject(request.params)) delete request.params._meta;
  // Changed beyond its id: a kept line of a large request is no longer its text (wire-text.ts).
  dropRawText(request);
}
