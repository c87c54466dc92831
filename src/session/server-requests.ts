/**
 * Server->client requests of a session's members (server-messages.ts keeps the notifications and
 * the object the core holds): each gets an id from one session-wide counter, so two targets asking
 * at once cannot collide; the client's answer goes back to the member that asked, under its own
 * id; a member's cancel of its own request is translated to the id the client saw. Module
 * functions over the messages' state, so nothing allocates a function per message.
 */
import { GatewayError, toErrorResponse } from '../errors/gateway-error.ts';
import { cancelledRequestId, idKey, isObject } from '../jsonrpc/envelope.ts';
import { META_INPUT_KEY } from '../jsonrpc/modern.ts';
import { dropRawText } from '../jsonrpc/wire-text.ts';
import type { JsonObject, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, RequestId } from '../jsonrpc/types.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { ServerAsked } from './chain/server-asked.ts';
import type { Member } from './member.ts';
import type { OutStream, StreamSet } from './streams.ts';

interface Asked {
  readonly member: Member;
  readonly upstreamId: RequestId;
  readonly stream: OutStream;
  readonly method: string;
  /** When it was asked (for its audit line); 0 without one. */
  readonly started: number;
}

/** What the functions here read and keep of a session's server messages (server-messages.ts). */
export interface AskState {
  readonly streams: StreamSet;
  readonly limits: GatewayConfig['limits'];
  readonly logger: Logger;
  /** Several targets behind one endpoint: a log line names the target. */
  readonly namespaced: boolean;
  /** Held for 2026 clients: a request keeps its input name (ServerMessagesOptions.held). */
  readonly held: boolean;
  readonly judge: ServerAsked | undefined;
  /** Our id -> the member's request it stands for. */
  readonly asked: Map<number, Asked>;
  /** Per member (not per name: a reload may replace a member under the same name), upstream id -> ours. */
  readonly askedIds: WeakMap<Member, Map<string, number>>;
  /** Ids of the gateway's own requests not yet answered (bounded: an answer that never comes is forgotten). */
  readonly own: Set<number>;
  nextId: number;
}

/** Writes to `stream`; false when the standalone backlog is full. */
export function emit(s: AskState, message: JsonRpcNotification | JsonRpcRequest, stream: OutStream): boolean {
  if (stream.standalone && s.streams.backlog >= s.limits.pendingServerMessages) {
    s.logger.warn({ method: message.method }, 'standalone stream backlog full; server message dropped');
    return false;
  }
  s.streams.send(stream, message as unknown as JsonObject, false);
  return true;
}

function idsOf(s: AskState, member: Member): Map<string, number> {
  let ids = s.askedIds.get(member);
  if (ids === undefined) s.askedIds.set(member, (ids = new Map()));
  return ids;
}

/** The member withdraws one of its own server->client requests: translate to our id. */
export function cancelled(s: AskState, member: Member, notification: JsonRpcNotification): void {
  const params = notification.params;
  const upstreamRequestId = cancelledRequestId(params);
  if (upstreamRequestId === undefined || !isObject(params)) {
    // A single-target session's logger names its target already: a line carries each key once.
    s.logger.warn(s.namespaced ? { target: member.name } : {}, 'notifications/cancelled from the upstream without a usable requestId; dropped');
    return;
  }
  const ids = idsOf(s, member);
  const key = idKey(upstreamRequestId);
  const downstreamId = ids.get(key);
  const entry = downstreamId === undefined ? undefined : s.asked.get(downstreamId);
  if (downstreamId === undefined || entry === undefined) return;
  ids.delete(key);
  s.asked.delete(downstreamId);
  params.requestId = downstreamId;
  emit(s, notification, entry.stream.complete ? s.streams.pick(false) : entry.stream);
}

/** Relays a member's request to the client under a new id (the hooks, if any, have let it through). */
export function relay(s: AskState, member: Member, request: JsonRpcRequest): void {
  const stream = s.streams.pick(false);
  const downstreamId = s.nextId++;
  const upstreamId = request.id;
  request.id = downstreamId;
  if (!s.held) withoutInputKey(request);
  const started = s.judge === undefined ? 0 : s.judge.asked(member, request);
  // Recorded before it goes out: a receiver may answer at once (a held session's bridge does).
  s.asked.set(downstreamId, { member, upstreamId, stream, method: request.method, started });
  const ids = idsOf(s, member);
  ids.set(idKey(upstreamId), downstreamId);
  if (!emit(s, request, stream)) {
    s.asked.delete(downstreamId);
    ids.delete(idKey(upstreamId));
    const error = new GatewayError('GW_DOWNSTREAM_UNAVAILABLE', undefined, { target: member.name });
    member.reply(toErrorResponse(upstreamId, error)).catch(() => undefined);
  }
}

/** The client's answer to one of those requests: back to the member that asked (ServerMessages.answer). */
export async function answered(s: AskState, response: JsonRpcResponse): Promise<void> {
  const downstreamId = typeof response.id === 'number' ? response.id : NaN;
  if (s.own.delete(downstreamId)) return;
  const entry = s.asked.get(downstreamId);
  if (entry === undefined) {
    s.logger.debug({ id: response.id }, 'answer to no server->client request of ours; dropped');
    return;
  }
  s.asked.delete(downstreamId);
  idsOf(s, entry.member).delete(idKey(entry.upstreamId));
  response.id = entry.upstreamId;
  s.judge?.answered(entry.member, entry.method, entry.started, response, downstreamId);
  await entry.member.reply(response).catch(() => undefined);
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
