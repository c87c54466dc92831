/**
 * Server-initiated messages of a session's upstreams (its members), on their way to the one
 * downstream: server->client requests get ids from one session-wide counter (two targets asking at
 * once cannot collide) and their answers go back to the member that asked, under its own id; a
 * member's cancel of its own request is translated to the id the client saw.
 *
 * Behind an aggregate (`namespaced`) notifications get their target's context (encoded URIs,
 * logger names) and list_changed is coalesced; a single-target session passes them as they are.
 */
import { toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { NameTable } from '../router/name-table.ts';
import { encodeResourceUri } from '../router/resource-uri.ts';
import type { Member } from './member.ts';
import type { StreamSet } from './streams.ts';
import type { ServerAsked } from './chain/server-asked.ts';
import { answered, cancelled, emit, relay, type AskState } from './server-requests.ts';

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

/** Pass-through notifications that belong to no request: the standalone stream. */
const BROADCAST = new Set([...Object.values(LIST_CHANGED), 'notifications/resources/updated']);

export function createServerMessages(options: ServerMessagesOptions): ServerMessages {
  return new Messages(options);
}

/**
 * The messages' state is the instance; the methods are on the class, one copy for every session.
 * Server->client requests, their answers and cancels are in server-requests.ts.
 */
class Messages implements ServerMessages, AskState {
  readonly streams: StreamSet;
  readonly limits: GatewayConfig['limits'];
  readonly logger: Logger;
  readonly tables: ServerMessagesOptions['tables'];
  readonly live: () => boolean;
  readonly namespaced: boolean;
  readonly held: boolean;
  readonly judge: ServerAsked | undefined;
  readonly asked: AskState['asked'] = new Map();
  readonly askedIds: AskState['askedIds'] = new WeakMap();
  readonly own = new Set<number>();
  nextId = 1;
  readonly changed = new Set<ListFeature>();
  timer: NodeJS.Timeout | undefined = undefined;

  constructor({ streams, limits, logger, tables, live, namespaced, held, judge }: ServerMessagesOptions) {
    this.streams = streams;
    this.limits = limits;
    this.logger = logger;
    this.tables = tables;
    this.live = live;
    this.namespaced = namespaced;
    this.held = held;
    this.judge = judge;
  }

  request(member: Member, request: JsonRpcRequest): void {
    // The chain's request hooks first (chain/server-asked.ts); a refusal is the upstream's answer.
    const hooked = this.judge?.hooked(member, request);
    if (hooked === undefined) return relay(this, member, request);
    hooked.then(
      (next) => (this.live() ? relay(this, member, next) : undefined),
      (err: unknown) => member.reply(toErrorResponse(request.id, toGatewayError(err))).catch(() => undefined),
    );
  }

  notification(member: Member, notification: JsonRpcNotification): void {
    const params = notification.params;
    const { streams } = this;
    if (notification.method === 'notifications/cancelled') return cancelled(this, member, notification);
    if (!this.namespaced) {
      emit(this, notification, streams.pick(BROADCAST.has(notification.method)));
      return;
    }
    switch (notification.method) {
      case LIST_CHANGED.tools:
        this.tables.tools.forget(member.name);
        return this.listChanged('tools');
      case LIST_CHANGED.prompts:
        this.tables.prompts.forget(member.name);
        return this.listChanged('prompts');
      case LIST_CHANGED.resources:
        return this.listChanged('resources');
      case 'notifications/resources/updated':
        if (isObject(params) && typeof params.uri === 'string') params.uri = encodeResourceUri(member.name, params.uri);
        emit(this, notification, streams.standalone);
        return;
      case 'notifications/message':
        // The target's name goes first in the logger name so the client can tell sources apart.
        if (isObject(params)) params.logger = typeof params.logger === 'string' ? `${member.name}/${params.logger}` : member.name;
        emit(this, notification, streams.pick(false));
        return;
      default:
        emit(this, notification, streams.pick(false));
    }
  }

  answer(response: JsonRpcResponse): Promise<void> {
    return answered(this, response);
  }

  listChanged(...features: ListFeature[]): void {
    if (!this.live()) return;
    for (const f of features) this.changed.add(f);
    this.timer ??= setTimeout(flush, LIST_CHANGED_COALESCE_MS, this);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  ask(method: string, params: JsonObject): void {
    if (!this.live()) return;
    const id = this.nextId++;
    const own = this.own;
    if (own.size >= 64) own.delete(own.values().next().value as number);
    own.add(id);
    emit(this, { jsonrpc: '2.0', id, method, params }, this.streams.pick(false));
  }

  notify(method: string, params: JsonObject): void {
    if (this.live()) emit(this, { jsonrpc: '2.0', method, params }, this.streams.standalone);
  }
}

/** The coalescing window closed: one list_changed per feature, on the standalone stream. */
function flush(m: Messages): void {
  m.timer = undefined;
  for (const feature of m.changed) emit(m, { jsonrpc: '2.0', method: LIST_CHANGED[feature] }, m.streams.standalone);
  m.changed.clear();
}
