/**
 * An aggregate session: one downstream peer, many targets behind one URL. The gateway answers
 * initialize itself, opens each target's connection when the session first needs it, merges the
 * lists, and routes every other request to the target that owns the name or URI, with the original
 * restored. It implements `Session`, so every downstream route serves it unchanged.
 *
 * Id spaces: a target's ids are rewritten by its own correlator; server->client requests of every
 * target get numbers from one session-wide counter, so two targets asking at once cannot collide,
 * and each answer goes back to the target that asked.
 */
import { GatewayError, toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import { cancelledRequestId, idKey, isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcRequest, RequestId } from '../jsonrpc/types.ts';
import type { GatewayConfig, TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { combineInstructions, mergeCapabilities, ASSUMED_CAPABILITIES } from '../router/capabilities.ts';
import type { CursorCodec } from '../router/cursor.ts';
import { isListMethod } from '../router/list-merge.ts';
import { createNameTable } from '../router/name-table.ts';
import { encodeResultUris } from '../router/result-uris.ts';
import type { UpstreamConnection } from '../upstream/connection.ts';
import type { UpstreamFactory } from '../upstream/open.ts';
import type { PendingHandler } from '../upstream/correlator.ts';
import { createMember, type Member, type MemberHooks } from './aggregate-member.ts';
import { createServerMessages } from './aggregate-server-messages.ts';
import { listPage, type ListContext } from './aggregate-lists.ts';
import { resolveRoute } from './aggregate-routing.ts';
import type { AggregateView, KnownTargets } from './aggregate-view.ts';
import { createEventLog } from './event-log.ts';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../jsonrpc/versions.ts';
import type { Session } from './session.ts';
import { ownsChild } from './limits.ts';
import { createStreamSet, type OutStream } from './streams.ts';
import type { DownstreamInfo } from './store.ts';

export interface AggregateSession extends Session {
  /** A config reload changed the endpoint's targets: add, drain and replace members. */
  reconfigure(view: AggregateView): void;
}

export interface AggregateSessionOptions {
  id: string;
  endpoint: string;
  view: AggregateView;
  limits: GatewayConfig['limits'];
  logger: Logger;
  onended: (session: Session) => void;
  cursors: CursorCodec;
  /** Capabilities and instructions learnt from earlier handshakes (for lazy initialize answers). */
  known: KnownTargets;
  serverInfo: JsonObject;
  /** What the downstream said about itself (its Authorization, for targets that opt in). */
  downstream: DownstreamInfo;
  /** See SessionSeed.reserveChild. */
  reserveChild?: (target: TargetConfig) => void;
  /** Opens the members' upstream connections. */
  open: UpstreamFactory;
}

/** A downstream request being served: by the gateway itself, or forwarded to `member`. */
interface Pending {
  readonly key: string;
  readonly clientId: RequestId;
  readonly stream: OutStream;
  readonly method: string;
  member: Member | undefined;
  upstreamId: number;
  cancelled: boolean;
}

const LATEST = SUPPORTED_PROTOCOL_VERSIONS[SUPPORTED_PROTOCOL_VERSIONS.length - 1] as string;
const supported = new Set<string>(SUPPORTED_PROTOCOL_VERSIONS);
export function createAggregateSession(options: AggregateSessionOptions): AggregateSession {
  const { id, endpoint, limits, onended, cursors, known, serverInfo } = options;
  let view = options.view;
  const logger = options.logger.child({ session: id, endpoint });
  const log = createEventLog(limits.replayEvents, limits.replayBytes);
  let protocolVersion: string | undefined;
  const streams = createStreamSet({
    log,
    logger,
    priming: () => protocolVersion !== undefined && protocolVersion >= '2025-11-25',
    keepFinished: 64,
  });
  const members = new Map<string, Member>();
  /** Targets left out of an answered list while still starting (see hooks.onready). */
  const leftOut = new Set<string>();
  /** The client opened a standalone stream at least once (limits.ts: TTL class). */
  let streamed = false;
  const tables = { tools: createNameTable(view.separator), prompts: createNameTable(view.separator) };
  const inflight = new Map<string, Pending>();
  let initParams: JsonObject = {};
  let logLevel: string | undefined;
  let ended = false;
  let endPromise: Promise<void> | undefined;
  let opening = false;

  const deliverPending = (rec: Pending, message: unknown) => {
    inflight.delete(rec.key);
    if (rec.cancelled) return;
    streams.deliver(rec.stream, JSON.stringify(message), true);
  };
  const answer = (rec: Pending, result: JsonObject) => deliverPending(rec, { jsonrpc: '2.0', id: rec.clientId, result });
  const fail = (rec: Pending, err: unknown) => {
    const error = toGatewayError(err);
    if (error.code === 'GW_INTERNAL') logger.error({ err, correlationId: error.details.correlationId }, 'aggregate request failed');
    else logger.debug({ code: error.code, clientId: rec.clientId }, error.message);
    deliverPending(rec, toErrorResponse(rec.clientId, error));
  };

  const handler: PendingHandler<Pending> = {
    onresponse(response, rec) {
      const result: unknown = 'result' in response ? response.result : undefined;
      if (rec.member !== undefined && isObject(result)) encodeResultUris(rec.method, rec.member.name, result);
      deliverPending(rec, response);
    },
    onerror(error, rec) {
      fail(rec, error);
    },
    onprogress(notification, rec) {
      if (!rec.cancelled) streams.deliver(rec.stream, JSON.stringify(notification), false);
    },
  };

  const messages = createServerMessages({ streams, limits, logger, tables, live: () => !ended && protocolVersion !== undefined });
  const listChanged = messages.listChanged;

  const hooks: MemberHooks = {
    onrequest: messages.request,
    onnotification: messages.notification,
    onexit(member) {
      // Its items are gone from the lists (or will be those of a fresh start): say so once.
      tables.tools.forget(member.name);
      tables.prompts.forget(member.name);
      listChanged('tools', 'prompts', 'resources');
    },
    onready(member) {
      known.set(member.target, { capabilities: member.capabilities ?? {}, instructions: member.instructions });
      // A slow starter was left out of a list the client already has: its items exist now.
      if (leftOut.delete(member.name)) listChanged('tools', 'prompts', 'resources');
    },
  };

  const addMember = (name: string): Member | undefined => {
    const entry = view.targets.get(name);
    if (entry === undefined) return undefined;
    const member = createMember({
      target: entry.target,
      exposure: entry.exposure,
      eager: entry.eager,
      logger,
      hooks,
      initParams: () => initParams,
      logLevel: () => logLevel,
      poolLogger: options.logger,
      authorization: options.downstream.authorization,
      reserveChild: options.reserveChild,
      open: options.open,
    });
    members.set(name, member);
    return member;
  };

  const ctx: ListContext = {
    members: () => [...members.values()],
    member: (name) => members.get(name),
    tables,
    cursors,
    get listTimeoutMs() {
      return view.listTimeoutMs;
    },
    leftOut(targets) {
      for (const name of targets) if (members.get(name)?.live === true && members.get(name)?.connection === undefined) leftOut.add(name);
    },
    get separator() {
      return view.separator;
    },
    logger,
  };

  const send = (rec: Pending, member: Member, request: JsonRpcRequest, connection: UpstreamConnection) => {
    if (rec.cancelled) return;
    rec.member = member;
    rec.upstreamId = connection.correlator.request(request, handler, rec, member.target.timeouts);
  };

  const forward = (rec: Pending, member: Member, request: JsonRpcRequest) => {
    // Hot path: an open member takes the request at once; only a first use waits for the start.
    const open = member.connection;
    if (open !== undefined) return send(rec, member, request, open);
    member.connect().then(
      (connection) => send(rec, member, request, connection),
      (err: unknown) => fail(rec, err),
    );
  };

  const setLevel = async (rec: Pending, request: JsonRpcRequest) => {
    const level = request.params?.level;
    if (typeof level !== 'string') throw new GatewayError('GW_INVALID_PARAMS', 'Invalid params: level is required');
    logLevel = level;
    const open = [...members.values()].filter((m) => m.connection !== undefined && m.capabilities?.logging !== undefined);
    await Promise.all(
      open.map((m) =>
        new Promise<void>((resolve) => {
          const note: JsonRpcRequest = { jsonrpc: '2.0', id: 0, method: 'logging/setLevel', params: { level } };
          m.connection?.correlator.request(note, doneHandler, resolve, m.target.timeouts);
        }),
      ),
    );
    answer(rec, {});
  };

  const serve = async (rec: Pending, request: JsonRpcRequest) => {
    const { method } = request;
    if (method === 'ping') return answer(rec, {});
    if (isListMethod(method)) return answer(rec, await listPage(ctx, method, request.params));
    if (method === 'logging/setLevel') return setLevel(rec, request);
    const route = await resolveRoute(ctx, request);
    forward(rec, route.member, request);
  };

  const dispatch = (request: JsonRpcRequest, stream: OutStream) => {
    const key = idKey(request.id);
    const rec: Pending = { key, clientId: request.id, stream, method: request.method, member: undefined, upstreamId: 0, cancelled: false };
    if (inflight.has(key)) {
      const error = new GatewayError('GW_INVALID_REQUEST', 'A request with this id is already in flight in this session', {
        reason: 'duplicate id',
      });
      streams.deliver(stream, JSON.stringify(toErrorResponse(request.id, error)), true);
      return;
    }
    inflight.set(key, rec);
    serve(rec, request).catch((err: unknown) => fail(rec, err));
  };

  const session: AggregateSession = {
    id,
    endpoint,
    lastActivity: Date.now(),
    get protocolVersion() {
      return protocolVersion;
    },
    get ended() {
      return ended;
    },
    get busy() {
      if (opening || inflight.size > 0 || streams.busy) return true;
      for (const m of members.values()) if ((m.connection?.correlator.inflight ?? 0) > 0) return true;
      return false;
    },
    get usage() {
      const children: string[] = [];
      for (const m of members.values()) if (m.live && ownsChild(m.target)) children.push(m.name);
      return { initializing: opening, streamed, children };
    },

    async initialize(request) {
      const params = isObject(request.params) ? request.params : {};
      const requested = params.protocolVersion;
      // 2025-11-25 basic/lifecycle "Version Negotiation": the client's version if we speak it, else our latest.
      const version = typeof requested === 'string' && supported.has(requested) ? requested : LATEST;
      initParams = { ...params, protocolVersion: version };
      for (const name of view.targets.keys()) addMember(name);
      opening = true;
      try {
        const eager = [...members.values()].filter((m) => m.eager);
        await Promise.all(eager.map((m) => m.connect().catch(() => undefined)));
      } finally {
        opening = false;
      }
      protocolVersion = version;
      const parts = [...members.values()].map((m) => {
        const learnt = m.capabilities === undefined ? known.get(m.target) : { capabilities: m.capabilities, instructions: m.instructions };
        return { target: m.name, capabilities: learnt?.capabilities ?? ASSUMED_CAPABILITIES, instructions: learnt?.instructions };
      });
      const result: JsonObject = {
        protocolVersion: version,
        capabilities: mergeCapabilities(parts.map((p) => p.capabilities)),
        serverInfo,
      };
      const instructions = combineInstructions(parts);
      if (instructions !== undefined) result.instructions = instructions;
      logger.info({ protocolVersion: version, targets: [...members.keys()] }, 'aggregate session initialized');
      return { jsonrpc: '2.0', id: request.id, result };
    },

    handleRequests(requests, sink, batch) {
      const stream = streams.open(sink, requests.length, batch);
      for (const request of requests) dispatch(request, stream);
    },

    async handleNotification(notification) {
      const params = notification.params;
      if (notification.method === 'notifications/cancelled') {
        const requestId = cancelledRequestId(params);
        if (requestId === undefined || !isObject(params)) {
          logger.warn('notifications/cancelled from the client without a usable requestId; dropped');
          return;
        }
        const rec = inflight.get(idKey(requestId));
        if (rec === undefined) return;
        inflight.delete(rec.key);
        rec.cancelled = true;
        const reason = typeof params.reason === 'string' ? params.reason : undefined;
        if (rec.member !== undefined) rec.member.connection?.correlator.cancel(rec.upstreamId, reason);
        const error = new GatewayError('GW_REQUEST_CANCELLED', undefined, rec.member ? { target: rec.member.name } : {});
        streams.drop(rec.stream, JSON.stringify(toErrorResponse(rec.clientId, error)));
        return;
      }
      if (notification.method === 'notifications/initialized') return; // each target got its own
      // Anything else (roots/list_changed, ...) concerns every target the session has opened.
      const open = [...members.values()].filter((m) => m.connection !== undefined);
      await Promise.all(open.map((m) => m.connection?.correlator.send(structuredClone(notification)).catch(() => undefined)));
    },

    handleResponse(response) {
      return messages.answer(response);
    },

    openStream(sink, lastEventId) {
      streamed = true;
      if (lastEventId !== undefined && streams.resume(sink, lastEventId)) return true;
      return streams.attachStandalone(sink);
    },

    async idle() {
      await Promise.all([...members.values()].map((m) => m.connection?.correlator.idle()));
    },

    reconfigure(next) {
      const before = view;
      view = next;
      let touched = false;
      for (const [name, member] of [...members]) {
        const entry = next.targets.get(name);
        if (entry !== undefined && entry.fingerprint === before.targets.get(name)?.fingerprint) continue;
        // Removed or changed: finish what is in flight on the old connection, route nothing new to it.
        members.delete(name);
        tables.tools.forget(name);
        tables.prompts.forget(name);
        void member.drain('removed or changed by a config reload');
        touched = true;
      }
      for (const name of next.targets.keys()) {
        if (members.has(name)) continue;
        const member = addMember(name);
        if (member?.eager) member.connect().catch(() => undefined);
        touched = true;
      }
      // Keep config order (a Map keeps insertion order; re-insert in the new order).
      const ordered = [...next.targets.keys()].map((name) => [name, members.get(name)] as const);
      members.clear();
      for (const [name, member] of ordered) if (member !== undefined) members.set(name, member);
      if (touched) {
        logger.info({ targets: [...members.keys()] }, 'aggregate session reconfigured');
        listChanged('tools', 'prompts', 'resources');
      }
    },

    end(reason) {
      if (endPromise) return endPromise;
      ended = true;
      messages.stop();
      logger.info({ reason }, 'session ended');
      endPromise = (async () => {
        try {
          // The downstream went away with calls still running: tell each owning target, so it
          // stops work nobody will read (basic/utilities/cancellation), as a single-target
          // session does. Pending entries stay: closing the member still answers each one.
          await Promise.all(
            [...inflight.values()].map((rec) =>
              rec.member?.connection?.correlator
                .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: rec.upstreamId, reason: `Session ended: ${reason}` } })
                .catch(() => undefined),
            ),
          );
          await Promise.all([...members.values()].map((m) => m.close(reason)));
        } finally {
          streams.endAll();
          onended(session);
        }
      })();
      return endPromise;
    },
  };
  return session;
}

/** Settles a gateway-own fan-out request whatever the answer. */
const doneHandler: PendingHandler<() => void> = {
  onresponse(_response, resolve) {
    resolve();
  },
  onerror(_error, resolve) {
    resolve();
  },
};
