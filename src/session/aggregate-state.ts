/**
 * The state of an aggregate session's flavour (aggregate-session.ts keeps the flavour's methods,
 * the per-request path) and the module functions over it for what happens once or rarely: adding
 * a member, opening the session, fanning logging/setLevel out, a config reload. They take the
 * state instead of closing over it, so a session allocates no function per request.
 */
import { GatewayError } from '../errors/gateway-error.ts';
import { isSupportedVersion, LATEST_PROTOCOL_VERSION } from '../jsonrpc/versions.ts';
import type { JsonObject, JsonRpcRequest } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { combineInstructions, mergeCapabilities, ASSUMED_CAPABILITIES } from '../router/capabilities.ts';
import type { CursorCodec } from '../router/cursor.ts';
import type { TaskIds } from '../router/task-ids.ts';
import type { PendingHandler } from '../upstream/correlator.ts';
import type { ListContext } from './aggregate-lists.ts';
import { learntOf, type AggregateView, type KnownTargets, type Learner } from './aggregate-view.ts';
import type { CoreParts, LocalAnswer } from './flavour.ts';
import { createMember, type Member } from './member.ts';
import type { SessionSeed } from './store.ts';

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

/** The mutable state of one aggregate flavour. */
export interface AggregateState {
  readonly options: AggregateSessionOptions;
  readonly parts: CoreParts;
  readonly logger: Logger;
  readonly tables: ListContext['tables'];
  /** Whose session this is: what its upstreams taught is kept per caller where they may differ. */
  readonly learner: Learner;
  view: AggregateView;
  /** Every member by target name, in config order. */
  readonly byName: Map<string, Member>;
  /** Targets left out of an answered list while still starting (see memberReady). */
  readonly leftOut: Set<string>;
  initParams: JsonObject;
  logLevel: string | undefined;
}

export const local = (result: JsonObject): LocalAnswer => ({ local: result });

/** The lists' view of the session (aggregate-lists.ts), made once per session. */
export function listContextOf(s: AggregateState): ListContext {
  const { byName: members, leftOut, parts } = s;
  return {
    members: () => [...members.values()],
    member: (name) => members.get(name),
    tables: s.tables,
    cursors: s.options.cursors,
    get listTimeoutMs() {
      return s.view.listTimeoutMs;
    },
    leftOut(targets) {
      for (const name of targets) if (members.get(name)?.live === true && members.get(name)?.connection === undefined) leftOut.add(name);
      // A server left out for want of the caller's own account there: a client taking URL elicitation is asked (url-consent.ts).
      for (const name of targets) parts.consent?.leftOut(members.get(name)?.failure);
    },
    get separator() {
      return s.view.separator;
    },
    get bareNames() {
      return s.view.bareNames;
    },
    logger: s.logger,
    observer: s.options.services.observer,
  };
}

export function addMember(s: AggregateState, name: string): Member | undefined {
  const entry = s.view.targets.get(name);
  if (entry === undefined) return undefined;
  const { options } = s;
  const member = createMember({
    target: entry.target,
    exposure: entry.exposure,
    pins: options.pins?.(entry.target),
    eager: entry.eager,
    logger: s.logger,
    hooks: s.parts.hooks,
    initParams: () => s.initParams,
    logLevel: () => s.logLevel,
    poolLogger: options.logger,
    caller: options.caller,
    reserveChild: options.reserveChild,
    services: options.services,
    restart: 'on-use',
  });
  s.byName.set(name, member);
  return member;
}

export async function setLevel(s: AggregateState, request: JsonRpcRequest): Promise<LocalAnswer> {
  const level = request.params?.level;
  if (typeof level !== 'string') throw new GatewayError('GW_INVALID_PARAMS', 'Invalid params: level is required');
  s.logLevel = level;
  const open = [...s.byName.values()].filter((m) => m.connection !== undefined && m.capabilities?.logging !== undefined);
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
}

/** Opens the session with `params` (a client's initialize, or a holder's composed one) and answers it. */
export async function openAggregate(s: AggregateState, params: JsonObject): Promise<JsonObject> {
  const { byName: members, parts } = s;
  // 2025-11-25 basic/lifecycle "Version Negotiation": the client's version if we speak it, else our latest.
  const version = isSupportedVersion(params.protocolVersion) ? params.protocolVersion : LATEST_PROTOCOL_VERSION;
  s.initParams = { ...params, protocolVersion: version };
  for (const name of s.view.targets.keys()) addMember(s, name);
  parts.opening(true);
  try {
    const eager = [...members.values()].filter((m) => m.eager);
    await Promise.all(eager.map((m) => m.connect().catch(() => undefined)));
  } finally {
    parts.opening(false);
  }
  parts.negotiated(version);
  const learnt = [...members.values()].map((m) => {
    const seen = m.capabilities === undefined ? learntOf(s.options.known, m.target, s.learner) : { capabilities: m.capabilities, instructions: m.instructions };
    // An override of the target's instructions replaces what it said (router/overrides.ts).
    const instructions = m.exposure.overrides?.instructions ?? seen?.instructions;
    return { target: m.name, capabilities: seen?.capabilities ?? ASSUMED_CAPABILITIES, instructions };
  });
  const result: JsonObject = { protocolVersion: version, capabilities: mergeCapabilities(learnt.map((p) => p.capabilities)), serverInfo: s.options.serverInfo };
  const instructions = combineInstructions(learnt);
  if (instructions !== undefined) result.instructions = instructions;
  s.logger.info({ protocolVersion: version, targets: [...members.keys()] }, 'aggregate session initialized');
  return result;
}

/** A config reload changed the endpoint's targets: add, drain and replace members. */
export function reconfigureAggregate(s: AggregateState, next: AggregateView): void {
  const { byName: members, tables } = s;
  const before = s.view;
  s.view = next;
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
    const member = addMember(s, name);
    if (member?.eager) member.connect().catch(() => undefined);
    touched = true;
  }
  // Keep config order (a Map keeps insertion order; re-insert in the new order).
  const ordered = [...next.targets.keys()].map((name) => [name, members.get(name)] as const);
  members.clear();
  for (const [name, member] of ordered) if (member !== undefined) members.set(name, member);
  if (touched) {
    s.logger.info({ targets: [...members.keys()] }, 'aggregate session reconfigured');
    s.parts.messages.listChanged('tools', 'prompts', 'resources');
  }
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
