/**
 * An aggregate session: one downstream peer, many targets behind one URL. The session core
 * (core.ts) with one member per target, opened when the session first needs it, and this flavour:
 * the gateway answers initialize itself, merges the lists, answers ping, fans logging/setLevel out,
 * and routes every other request to the target that owns the name or URI, with the original
 * restored; a member's answer gets its URIs encoded.
 *
 * Id spaces: a target's ids are rewritten by its own correlator; server->client requests of every
 * target get numbers from one session-wide counter (server-messages.ts), so two targets asking at
 * once cannot collide, and each answer goes back to the target that asked.
 */
import { GatewayError, toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import { isSupportedVersion, LATEST_PROTOCOL_VERSION } from '../jsonrpc/versions.ts';
import type { JsonObject, JsonRpcRequest } from '../jsonrpc/types.ts';
import { combineInstructions, mergeCapabilities, ASSUMED_CAPABILITIES } from '../router/capabilities.ts';
import type { PinGate } from '../governance/pin-gate.ts';
import type { CursorCodec } from '../router/cursor.ts';
import type { TaskIds } from '../router/task-ids.ts';
import { isListMethod } from '../router/list-merge.ts';
import { createNameTable } from '../router/name-table.ts';
import { encodeResultUris } from '../router/result-uris.ts';
import { dropRawText } from '../jsonrpc/wire-text.ts';
import type { PendingHandler } from '../upstream/correlator.ts';
import { listPage, type ListContext } from './aggregate-lists.ts';
import { resolveRoute } from './aggregate-routing.ts';
import { encodeSkillAnswer, listSkills } from './aggregate-skills.ts';
import { createTaskRouting, declaresTasks, isTaskMethod } from './aggregate-tasks.ts';
import { createDiscovery } from './aggregate-discovery.ts';
import { learn, learnerOf, learntOf, type AggregateView, type KnownTargets } from './aggregate-view.ts';
import { createSessionCore } from './core.ts';
import type { CoreParts, Flavour, LocalAnswer } from './flavour.ts';
import { createMember, type Member } from './member.ts';
import type { Session } from './session.ts';
import { coreOptionsOf, type SessionSeed } from './store.ts';

export interface AggregateSession extends Session {
  /** A config reload changed the endpoint's targets: add, drain and replace members. */
  reconfigure(view: AggregateView): void;
}

/** What the store gives every session (SessionSeed), and what the aggregate endpoint adds. */
export interface AggregateSessionOptions extends SessionSeed {
  endpoint: string;
  view: AggregateView;
  cursors: CursorCodec;
  /** Capabilities and instructions learnt from earlier handshakes (for lazy initialize answers). */
  known: KnownTargets;
  serverInfo: JsonObject;
  /** Seals the ids of tasks members create (SEP-2663), shared by the gateway's aggregate endpoints. */
  tasks: TaskIds;
}

const local = (result: JsonObject): LocalAnswer => ({ local: result });

export function createAggregateSession(options: AggregateSessionOptions): AggregateSession {
  const logger = options.logger.child({ session: options.id, endpoint: options.endpoint });
  const tables = { tools: createNameTable(options.view.separator), prompts: createNameTable(options.view.separator) };
  let reconfigure: (view: AggregateView) => void = () => undefined;
  const core = coreOptionsOf(options, logger);
  const session = createSessionCore({ ...core, namespaced: true, tables }, (parts) => {
    const built = aggregateFlavour(options, parts, tables);
    reconfigure = built.reconfigure;
    return built;
  });
  return Object.assign(session, { reconfigure: (view: AggregateView) => reconfigure(view) });
}

function aggregateFlavour(options: AggregateSessionOptions, parts: CoreParts, tables: ListContext['tables']): Flavour & { reconfigure(view: AggregateView): void } {
  const { cursors, known, serverInfo } = options;
  /** Whose session this is: what its upstreams taught is kept per caller where they may differ. */
  const learner = learnerOf(options.caller);
  const { logger, messages } = parts;
  let view = options.view;
  const members = new Map<string, Member>();
  /** Targets left out of an answered list while still starting (see memberReady). */
  const leftOut = new Set<string>();
  let initParams: JsonObject = {};
  let logLevel: string | undefined;
  const listChanged = messages.listChanged;
  const tasks = createTaskRouting(
    { ids: options.tasks, principal: options.caller.principal, gates: options.gates, member: (name) => members.get(name), declared: () => declaresTasks(initParams.capabilities) },
    tables.tools,
  );

  const addMember = (name: string): Member | undefined => {
    const entry = view.targets.get(name);
    if (entry === undefined) return undefined;
    const member = createMember({
      target: entry.target,
      exposure: entry.exposure,
      pins: options.pins?.(entry.target),
      eager: entry.eager,
      logger,
      hooks: parts.hooks,
      initParams: () => initParams,
      logLevel: () => logLevel,
      poolLogger: options.logger,
      caller: options.caller,
      reserveChild: options.reserveChild,
      services: options.services,
      restart: 'on-use',
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
      // A server left out for want of the caller's own account there: a client taking URL elicitation is asked (url-consent.ts).
      for (const name of targets) parts.consent?.leftOut(members.get(name)?.failure);
    },
    get separator() {
      return view.separator;
    },
    get bareNames() {
      return view.bareNames;
    },
    logger,
    observer: options.services.observer,
  };

  const discovery = createDiscovery(ctx, () => view.discovery);

  const setLevel = async (request: JsonRpcRequest): Promise<LocalAnswer> => {
    const level = request.params?.level;
    if (typeof level !== 'string') throw new GatewayError('GW_INVALID_PARAMS', 'Invalid params: level is required');
    logLevel = level;
    const open = [...members.values()].filter((m) => m.connection !== undefined && m.capabilities?.logging !== undefined);
    await Promise.all(
      open.map(
        (m) =>
          new Promise<void>((resolve) => {
            const note: JsonRpcRequest = { jsonrpc: '2.0', id: 0, method: 'logging/setLevel', params: { level } };
            m.connection?.correlator.request(note, doneHandler, resolve, m.target.timeouts);
          }),
      ),
    );
    return local({});
  };

  const serve = async (request: JsonRpcRequest): Promise<Member | LocalAnswer> => {
    const { method } = request;
    if (method === 'ping') return local({});
    if (view.discovery !== undefined && method === 'tools/list') return local(await discovery.list());
    if (isListMethod(method)) return local(await listPage(ctx, method, request.params));
    if (method === 'logging/setLevel') return setLevel(request);
    if (method === 'skills/list') return local(await listSkills(ctx, request.params));
    const meta = view.discovery !== undefined && method === 'tools/call' ? discovery.call(request) : undefined;
    if (meta !== undefined) return local(await meta);
    if (isTaskMethod(method)) {
      const routed = await tasks.route(request);
      return 'local' in routed ? local(routed.local) : routed;
    }
    return (await resolveRoute(ctx, request)).member;
  };

  /** Opens the session with `params` (a client's initialize, or a holder's composed one) and answers it. */
  const open = async (params: JsonObject): Promise<JsonObject> => {
    // 2025-11-25 basic/lifecycle "Version Negotiation": the client's version if we speak it, else our latest.
    const version = isSupportedVersion(params.protocolVersion) ? params.protocolVersion : LATEST_PROTOCOL_VERSION;
    initParams = { ...params, protocolVersion: version };
    for (const name of view.targets.keys()) addMember(name);
    parts.opening(true);
    try {
      const eager = [...members.values()].filter((m) => m.eager);
      await Promise.all(eager.map((m) => m.connect().catch(() => undefined)));
    } finally {
      parts.opening(false);
    }
    parts.negotiated(version);
    const learnt = [...members.values()].map((m) => {
      const seen = m.capabilities === undefined ? learntOf(known, m.target, learner) : { capabilities: m.capabilities, instructions: m.instructions };
      // An override of the target's instructions replaces what it said (router/overrides.ts).
      const instructions = m.exposure.overrides?.instructions ?? seen?.instructions;
      return { target: m.name, capabilities: seen?.capabilities ?? ASSUMED_CAPABILITIES, instructions };
    });
    const result: JsonObject = { protocolVersion: version, capabilities: mergeCapabilities(learnt.map((p) => p.capabilities)), serverInfo };
    const instructions = combineInstructions(learnt);
    if (instructions !== undefined) result.instructions = instructions;
    logger.info({ protocolVersion: version, targets: [...members.keys()] }, 'aggregate session initialized');
    return result;
  };

  return {
    members: () => members.values(),
    async initialize(request) {
      return { jsonrpc: '2.0', id: request.id, result: await open(isObject(request.params) ? request.params : {}) };
    },
    // The gateway answers the handshake itself either way: a client initialize is only its params.
    open: (params) => open(params),
    route: serve,
    unwrap: (request) => discovery.unwrap(request),
    answer(rec, response) {
      const result: unknown = 'result' in response ? response.result : undefined;
      if (rec.member !== undefined && isObject(result)) {
        encodeResultUris(rec.method, rec.member.name, result);
        try {
          // A skill the member's filters hide reads as an unknown one; a task the client did not negotiate fails the call.
          encodeSkillAnswer(rec.method, rec.member, result);
          tasks.shape(rec, rec.member, result);
        } catch (err) {
          return toErrorResponse(response.id, toGatewayError(err));
        }
      }
      // Its URIs may have changed: the kept wire text (if any) is no longer this answer.
      dropRawText(response);
      return response;
    },
    memberExit(member) {
      // Its items are gone from the lists (or will be those of a fresh start): say so once.
      tables.tools.forget(member.name);
      tables.prompts.forget(member.name);
      listChanged('tools', 'prompts', 'resources');
    },
    memberReady(member) {
      logger.info({ target: member.name, pid: member.connection?.pid }, 'aggregate member ready');
      learn(known, member.target, learner, { capabilities: member.capabilities ?? {}, instructions: member.instructions });
      // A slow starter was left out of a list the client already has: its items exist now.
      if (leftOut.delete(member.name)) listChanged('tools', 'prompts', 'resources');
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
  };
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
