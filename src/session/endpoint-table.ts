/**
 * The endpoint table: which sessions each MCP path serves, looked up per request from the config
 * in force, so a config reload adds and removes paths without touching the HTTP routes.
 *
 * Four families of paths: `/servers/<name>/...` (one target's pass-through), `/groups/<name>/...`
 * (an aggregate over a group), `/virtual/<name>/...` (an aggregate of picked items) and the root `/mcp` (the lone target's pass-through, or the aggregate
 * over every target when there are several). Entries are built once per config generation; a
 * request costs one Map lookup.
 */
import { aggregateOf, type GatewayConfig, type TargetConfig } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { CursorCodec } from '../router/cursor.ts';
import { compilePolicy, restrict, type Policy, type PolicySubject } from '../router/policy.ts';
import { createAggregateEndpoint, createAggregateShared, createVirtualEndpoint, type AggregateEndpoint } from './aggregate-endpoint.ts';
import type { Session } from './session.ts';
import { createSingleSession } from './single.ts';
import { exposureOf } from './aggregate-view.ts';
import type { SessionFactory } from './store.ts';

/** What a path serves in the current generation. */
export interface RouteEndpoint {
  /** The key of the sessions it builds (Session.endpoint). */
  readonly endpoint: string;
  /** False once its target or group was removed: new sessions are refused with 404, live ones go on. */
  readonly open: boolean;
  /** Builds a new session (throws GW_ROUTE_NOT_FOUND when not `open`). */
  readonly factory: SessionFactory;
  /** The sessions this path serves: those of its key; a session of another path is unknown here. */
  readonly owns: (session: Session) => boolean;
  /**
   * What a session the gateway holds here for 2026 callers (session/stateless/hosts.ts) was given
   * beyond its endpoint and principal: the config generation its filters and policy come from and
   * the policy rules that are for `caller`. Equal keys, equal grants; a caller whose token a rule
   * treats otherwise, or a reload, gets a session of its own, so every 2026 request is judged by its
   * own credential and the config in force.
   */
  readonly grantKey: (caller: PolicySubject | undefined) => string;
  /** A target behind it sends the caller's own Authorization upstream (`forwardAuthorization`). */
  readonly forwardsCredential: boolean;
  /** A target behind it is sent or exchanges the caller's own token (`forwardAuthorization`, `tokenExchange`): a replica hop carries it, sealed. */
  readonly needsCredential: boolean;
}

export interface EndpointTable {
  /** `/servers/<name>/...`: undefined for a name never configured, or one the policy denies `caller`. */
  server(name: string, caller?: PolicySubject): RouteEndpoint | undefined;
  /** `/groups/<name>/...`: undefined for a name never configured. */
  group(name: string): RouteEndpoint | undefined;
  /** `/virtual/<name>/...`: undefined for a name never configured. */
  virtual(name: string): RouteEndpoint | undefined;
  /** The servers configured now (removed ones left out), in config order. */
  serverNames(): string[];
  /** `/mcp`, `/ws`, `/sse`, `/messages`; undefined when it is one target the policy denies `caller`. */
  root(caller?: PolicySubject): RouteEndpoint | undefined;
  /** Applies a reloaded config: new sessions get the new table, live aggregate sessions are reconfigured. */
  update(config: GatewayConfig): void;
  /** The policy in force (the one `server`, `root` and the aggregates judge with); undefined: none. */
  policy(): Policy | undefined;
}

/** `grantKey` of endpoints whose sessions keep what they were given at creation (`generation`) or follow reloads of the filters. */
function grantKeyOf(generation: number, policy: Policy | undefined): (caller: PolicySubject | undefined) => string {
  const prefix = String(generation);
  if (policy === undefined) return () => prefix;
  const anonymous = `${prefix}:${policy.callerKey(undefined)}`;
  // The edge hands a keep-alive connection's requests one principal object: its key is worked out once.
  const known = new WeakMap<PolicySubject, string>();
  return (caller) => {
    if (caller === undefined) return anonymous;
    let key = known.get(caller);
    if (key === undefined) known.set(caller, (key = `${prefix}:${policy.callerKey(caller)}`));
    return key;
  };
}

const forwards = (target: TargetConfig | undefined) => target !== undefined && target.type !== 'stdio' && target.forwardAuthorization;
const needs = (target: TargetConfig | undefined) => forwards(target) || (target !== undefined && target.type !== 'stdio' && target.tokenExchange !== undefined);

/**
 * One target's pass-through sessions, known by the target's name on every path that serves it; its
 * filters apply. `generation`: the config's (a live session keeps its filters and grant).
 */
function passThrough(target: TargetConfig, config: GatewayConfig, policy: Policy | undefined, generation: number): RouteEndpoint {
  const endpoint = `target:${target.name}`;
  const exposure = exposureOf(config, target.name);
  const factory: SessionFactory = (seed) => {
    if (policy === undefined) return createSingleSession({ ...seed, endpoint, target, exposure });
    // The route already answered 404 for a denied target; this holds even if a caller skips it.
    const grant = policy.grant(seed.caller.principal, target.name);
    if (grant === undefined) throw new GatewayError('GW_ROUTE_NOT_FOUND', `Not Found: server "${target.name}"`);
    return createSingleSession({ ...seed, endpoint, target, exposure: restrict(exposure, grant) });
  };
  return { endpoint, open: true, factory, owns: (s) => s.endpoint === endpoint, grantKey: grantKeyOf(generation, policy), forwardsCredential: forwards(target), needsCredential: needs(target) };
}

function ownedBy(endpoint: string): (session: Session) => boolean {
  return (s) => s.endpoint === endpoint;
}

/** A removed target's or group's entry: its live sessions are still found, new ones get 404. */
function retired(previous: RouteEndpoint, what: string): RouteEndpoint {
  if (!previous.open) return previous;
  const factory: SessionFactory = () => {
    throw new GatewayError('GW_ROUTE_NOT_FOUND', `Not Found: ${what} was removed from the configuration`);
  };
  return { ...previous, open: false, factory };
}

/** `cursors`: the gateway's cursor codec (the Runtime's), shared by every aggregate endpoint. */
export function createEndpointTable(initial: GatewayConfig, cursors?: CursorCodec): EndpointTable {
  const shared = createAggregateShared(cursors);
  // Aggregate endpoints live as long as the gateway: their sessions outlive the config that made them.
  let all: AggregateEndpoint | undefined;
  const groups = new Map<string, AggregateEndpoint>();
  const virtuals = new Map<string, AggregateEndpoint>();
  // Sessions opened on the root path, whatever it served then: they stay reachable there when a
  // reload switches `/mcp` between a pass-through and the aggregate. Weak: ended sessions go.
  const rootSessions = new WeakSet<Session>();

  let policy: Policy | undefined;
  /** Counts configs (a server's own path: its live sessions keep theirs) and policies (live aggregate sessions follow filters, not a new policy's grant). */
  let generation = 0;
  let policyGeneration = 0;
  let only: string | undefined;
  let servers = new Map<string, RouteEndpoint>();
  let groupEntries = new Map<string, RouteEndpoint>();
  let virtualEntries = new Map<string, RouteEndpoint>();
  let root: RouteEndpoint;

  /** The policy of `config` in force; live aggregate sessions read it when they are reconfigured. */
  const adopt = (config: GatewayConfig) => {
    const previous = policy?.fingerprint;
    policy = compilePolicy(config.policy?.rules);
    if (generation === 0 || policy?.fingerprint !== previous) policyGeneration++;
  };

  const build = (config: GatewayConfig) => {
    generation++;
    const aggregateKey = grantKeyOf(-policyGeneration, policy);
    const aggregateEntry = (aggregate: AggregateEndpoint): RouteEndpoint => ({
      endpoint: aggregate.endpoint,
      open: true,
      factory: aggregate.factory,
      owns: ownedBy(aggregate.endpoint),
      grantKey: aggregateKey,
      forwardsCredential: aggregate.targets().some((name) => forwards(config.targets.get(name))),
      needsCredential: aggregate.targets().some((name) => needs(config.targets.get(name))),
    });
    const nextServers = new Map<string, RouteEndpoint>();
    for (const target of config.targets.values()) nextServers.set(target.name, passThrough(target, config, policy, generation));
    for (const [name, entry] of servers) if (!nextServers.has(name)) nextServers.set(name, retired(entry, `server "${name}"`));

    const nextGroups = new Map<string, RouteEndpoint>();
    for (const name of aggregateOf(config).groups.keys()) {
      let aggregate = groups.get(name);
      if (aggregate === undefined) groups.set(name, (aggregate = createAggregateEndpoint(name, config, shared, () => policy)));
      nextGroups.set(name, aggregateEntry(aggregate));
    }
    for (const [name, entry] of groupEntries) if (!nextGroups.has(name)) nextGroups.set(name, retired(entry, `group "${name}"`));

    const nextVirtuals = new Map<string, RouteEndpoint>();
    for (const name of aggregateOf(config).virtuals?.keys() ?? []) {
      let aggregate = virtuals.get(name);
      if (aggregate === undefined) virtuals.set(name, (aggregate = createVirtualEndpoint(name, config, shared, () => policy)));
      nextVirtuals.set(name, aggregateEntry(aggregate));
    }
    for (const [name, entry] of virtualEntries) if (!nextVirtuals.has(name)) nextVirtuals.set(name, retired(entry, `virtual server "${name}"`));

    let inner: RouteEndpoint;
    only = config.targets.size === 1 ? [...config.targets.keys()][0] : undefined;
    if (only !== undefined) {
      // The same sessions as /servers/<name>/mcp: one target's pass-through under the short path.
      inner = nextServers.get(only) as RouteEndpoint;
    } else {
      all ??= createAggregateEndpoint(undefined, config, shared, () => policy);
      inner = aggregateEntry(all);
    }
    const create = inner.factory;
    const key = inner.endpoint;
    const factory: SessionFactory = (seed) => {
      const session = create(seed);
      rootSessions.add(session);
      return session;
    };
    servers = nextServers;
    groupEntries = nextGroups;
    virtualEntries = nextVirtuals;
    root = { ...inner, factory, owns: (s) => s.endpoint === key || rootSessions.has(s) };
  };

  adopt(initial);
  build(initial);
  return {
    server: (name, caller) => (policy === undefined || policy.grant(caller, name) !== undefined ? servers.get(name) : undefined),
    group: (name) => groupEntries.get(name),
    virtual: (name) => virtualEntries.get(name),
    serverNames: () => [...servers].filter(([, entry]) => entry.open).map(([name]) => name),
    root: (caller) => (policy === undefined || only === undefined || policy.grant(caller, only) !== undefined ? root : undefined),
    policy: () => policy,
    update(config) {
      // Live sessions first see the new targets and policy (list_changed, removed ones drained),
      // then new sessions get the new table.
      adopt(config);
      all?.update(config);
      for (const aggregate of groups.values()) aggregate.update(config);
      for (const aggregate of virtuals.values()) aggregate.update(config);
      build(config);
    },
  };
}
