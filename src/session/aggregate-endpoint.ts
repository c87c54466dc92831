/**
 * Aggregate endpoints: `/mcp` over every target (when there are several) and one per named group.
 * Each has an endpoint key (its sessions are unknown on every other path) and a session factory
 * that reads the endpoint's current view, so a config reload reaches new sessions at once and live
 * ones through `reconfigure`.
 */
import { aggregateOf, type GatewayConfig } from '../config/types.ts';
import { createCursorCodec, type CursorCodec } from '../router/cursor.ts';
import { createTaskIds, type TaskIds } from '../router/task-ids.ts';
import type { Policy } from '../router/policy.ts';
import type { Principal } from '../upstream/caller.ts';
import { createAggregateSession, type AggregateSession } from './aggregate-session.ts';
import { restrictView, toAggregateView, toVirtualView, type AggregateView, type KnownTargets } from './aggregate-view.ts';
import type { SessionCore } from './session.ts';
import type { SessionFactory } from './store.ts';
import { GATEWAY_SERVER_INFO } from './gateway-info.ts';


/** Endpoint key of `/mcp` over every target. */
export const ALL_TARGETS_ENDPOINT = 'aggregate:*';

export interface AggregateEndpoint {
  /** URL path it is served at. */
  readonly path: string;
  /** Session key (see Session.endpoint). */
  readonly endpoint: string;
  readonly factory: SessionFactory;
  /** Group name; undefined for the endpoint over every target and for a virtual server. */
  readonly group: string | undefined;
  /** The targets it serves now, in config order. */
  readonly targets: () => readonly string[];
  /** Applies a reloaded config: new sessions see it, live sessions are reconfigured. */
  update(config: GatewayConfig): void;
}

interface EndpointOptions {
  path: string;
  endpoint: string;
  group: string | undefined;
  view: (config: GatewayConfig) => AggregateView;
  config: GatewayConfig;
  cursors: CursorCodec;
  known: KnownTargets;
  tasks: TaskIds;
  /** The policy in force (it follows reloads). */
  policy: () => Policy | undefined;
}

function createEndpoint(options: EndpointOptions): AggregateEndpoint {
  const { path, endpoint, group, cursors, known, tasks } = options;
  // The endpoint's own discovery settings ride on its view, so a reload reaches live sessions.
  const viewOf = (config: GatewayConfig): AggregateView => ({ ...options.view(config), discovery: aggregateOf(config).discovery?.get(endpoint) });
  let view = viewOf(options.config);
  /** Each live session with the caller it serves: its view is what the policy grants that caller. */
  const live = new Map<AggregateSession, Principal | undefined>();
  const viewFor = (caller: Principal | undefined) => {
    const policy = options.policy();
    return policy === undefined ? view : restrictView(view, policy, caller);
  };
  const factory: SessionFactory = (seed) => {
    const principal = seed.caller.principal;
    const session = createAggregateSession({
      ...seed,
      endpoint,
      view: viewFor(principal),
      cursors,
      known,
      tasks,
      serverInfo: GATEWAY_SERVER_INFO,
      onended: (ended: SessionCore) => {
        live.delete(session);
        seed.onended(ended);
      },
    });
    live.set(session, principal);
    return session;
  };
  return {
    path,
    endpoint,
    factory,
    group,
    targets: () => [...view.targets.keys()],
    update(config) {
      view = viewOf(config);
      for (const [session, caller] of live) session.reconfigure(viewFor(caller));
    },
  };
}

/** What every aggregate endpoint of one gateway shares: cursors decode on any of them. */
export interface AggregateShared {
  readonly cursors: CursorCodec;
  readonly known: KnownTargets;
  /** Task ids (SEP-2663) open on every aggregate endpoint of the gateway. */
  readonly tasks: TaskIds;
}

/** A fresh shared part, once per gateway (its cursor codec is the Runtime's). */
export function createAggregateShared(cursors: CursorCodec = createCursorCodec()): AggregateShared {
  return { cursors, known: new WeakMap(), tasks: createTaskIds() };
}

/**
 * One aggregate endpoint: `/mcp` over every target (`group` undefined) or `/groups/<group>/mcp`.
 * Built when a config first asks for it and kept for the life of the gateway, so its live sessions
 * follow every later reload (`update`) even after the config stopped asking for it.
 */
export function createAggregateEndpoint(
  group: string | undefined,
  config: GatewayConfig,
  shared: AggregateShared,
  policy: () => Policy | undefined = () => undefined,
): AggregateEndpoint {
  const { cursors, known, tasks } = shared;
  if (group === undefined) {
    return createEndpoint({ path: '/mcp', endpoint: ALL_TARGETS_ENDPOINT, group, view: (c) => toAggregateView(c), config, cursors, known, tasks, policy });
  }
  let members: readonly string[] = aggregateOf(config).groups.get(group) ?? [];
  return createEndpoint({
    path: `/groups/${group}/mcp`,
    endpoint: `group:${group}`,
    group,
    // A group removed by a reload takes no new sessions; its live ones keep its last members
    // (those still configured) until they end.
    view: (c) => toAggregateView(c, (members = aggregateOf(c).groups.get(group) ?? members)),
    config,
    cursors,
    known,
    tasks,
    policy,
  });
}

/**
 * A virtual server's endpoint, `/virtual/<name>/mcp`: an aggregate over the targets it picks from,
 * each narrowed to its picks and renamed as they say (no prefix). Kept for the life of the gateway
 * like a group's; a virtual server removed by a reload keeps its last picks for its live sessions.
 */
export function createVirtualEndpoint(name: string, config: GatewayConfig, shared: AggregateShared, policy: () => Policy | undefined = () => undefined): AggregateEndpoint {
  const empty: AggregateView = { separator: aggregateOf(config).separator, listTimeoutMs: aggregateOf(config).listTimeoutMs, bareNames: false, targets: new Map() };
  let last = toVirtualView(config, name) ?? empty;
  return createEndpoint({
    path: `/virtual/${name}/mcp`,
    endpoint: `virtual:${name}`,
    group: undefined,
    view: (c) => (last = toVirtualView(c, name) ?? last),
    config,
    cursors: shared.cursors,
    known: shared.known,
    tasks: shared.tasks,
    policy,
  });
}
