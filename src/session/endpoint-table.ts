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
import { createAggregateEndpoint, createAggregateShared, createVirtualEndpoint, type AggregateEndpoint, type AggregateShared } from './aggregate-endpoint.ts';
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
  return new Table(initial, cursors);
}

/** The table's state: the entries of the config in force, and the aggregates that outlive it. */
class Table implements EndpointTable {
  readonly shared: AggregateShared;
  // Aggregate endpoints live as long as the gateway: their sessions outlive the config that made them.
  all: AggregateEndpoint | undefined = undefined;
  readonly groups = new Map<string, AggregateEndpoint>();
  readonly virtuals = new Map<string, AggregateEndpoint>();
  // Sessions opened on the root path, whatever it served then: they stay reachable there when a
  // reload switches `/mcp` between a pass-through and the aggregate. Weak: ended sessions go.
  readonly rootSessions = new WeakSet<Session>();

  current: Policy | undefined = undefined;
  /** Counts configs (a server's own path: its live sessions keep theirs) and policies (live aggregate sessions follow filters, not a new policy's grant). */
  generation = 0;
  policyGeneration = 0;
  only: string | undefined = undefined;
  servers = new Map<string, RouteEndpoint>();
  groupEntries = new Map<string, RouteEndpoint>();
  virtualEntries = new Map<string, RouteEndpoint>();
  rootEntry: RouteEndpoint;

  constructor(initial: GatewayConfig, cursors: CursorCodec | undefined) {
    this.shared = createAggregateShared(cursors);
    adopt(this, initial);
    this.rootEntry = build(this, initial);
  }

  server(name: string, caller?: PolicySubject): RouteEndpoint | undefined {
    const policy = this.current;
    return policy === undefined || policy.grant(caller, name) !== undefined ? this.servers.get(name) : undefined;
  }

  group(name: string): RouteEndpoint | undefined {
    return this.groupEntries.get(name);
  }

  virtual(name: string): RouteEndpoint | undefined {
    return this.virtualEntries.get(name);
  }

  serverNames(): string[] {
    return [...this.servers].filter(([, entry]) => entry.open).map(([name]) => name);
  }

  root(caller?: PolicySubject): RouteEndpoint | undefined {
    const { current: policy, only } = this;
    return policy === undefined || only === undefined || policy.grant(caller, only) !== undefined ? this.rootEntry : undefined;
  }

  policy(): Policy | undefined {
    return this.current;
  }

  update(config: GatewayConfig): void {
    // Live sessions first see the new targets and policy (list_changed, removed ones drained),
    // then new sessions get the new table.
    adopt(this, config);
    this.all?.update(config);
    for (const aggregate of this.groups.values()) aggregate.update(config);
    for (const aggregate of this.virtuals.values()) aggregate.update(config);
    this.rootEntry = build(this, config);
  }
}

/** The policy of `config` in force; live aggregate sessions read it when they are reconfigured. */
function adopt(t: Table, config: GatewayConfig): void {
  const previous = t.current?.fingerprint;
  t.current = compilePolicy(config.policy?.rules);
  if (t.generation === 0 || t.current?.fingerprint !== previous) t.policyGeneration++;
}

function aggregateEntry(config: GatewayConfig, aggregate: AggregateEndpoint, grantKey: RouteEndpoint['grantKey']): RouteEndpoint {
  return {
    endpoint: aggregate.endpoint,
    open: true,
    factory: aggregate.factory,
    owns: ownedBy(aggregate.endpoint),
    grantKey,
    forwardsCredential: aggregate.targets().some((name) => forwards(config.targets.get(name))),
    needsCredential: aggregate.targets().some((name) => needs(config.targets.get(name))),
  };
}

/**
 * The entries of one family of aggregates (groups, virtual servers) for `names`: each made once and
 * kept; a name no longer configured keeps a retired entry.
 */
function aggregateEntries(
  config: GatewayConfig,
  names: Iterable<string>,
  made: Map<string, AggregateEndpoint>,
  make: (name: string) => AggregateEndpoint,
  previous: Map<string, RouteEndpoint>,
  grantKey: RouteEndpoint['grantKey'],
  what: string,
): Map<string, RouteEndpoint> {
  const next = new Map<string, RouteEndpoint>();
  for (const name of names) {
    let aggregate = made.get(name);
    if (aggregate === undefined) made.set(name, (aggregate = make(name)));
    next.set(name, aggregateEntry(config, aggregate, grantKey));
  }
  for (const [name, entry] of previous) if (!next.has(name)) next.set(name, retired(entry, `${what} "${name}"`));
  return next;
}

/** Makes the entries of `config` and returns the root's (the caller sets it). */
function build(t: Table, config: GatewayConfig): RouteEndpoint {
  const generation = ++t.generation;
  const policy = t.current;
  const policyOf = () => t.current;
  const aggregateKey = grantKeyOf(-t.policyGeneration, policy);
  const nextServers = new Map<string, RouteEndpoint>();
  for (const target of config.targets.values()) nextServers.set(target.name, passThrough(target, config, policy, generation));
  for (const [name, entry] of t.servers) if (!nextServers.has(name)) nextServers.set(name, retired(entry, `server "${name}"`));

  const { groups, virtuals } = aggregateOf(config);
  const make = (name: string) => createAggregateEndpoint(name, config, t.shared, policyOf);
  const nextGroups = aggregateEntries(config, groups.keys(), t.groups, make, t.groupEntries, aggregateKey, 'group');
  const makeVirtual = (name: string) => createVirtualEndpoint(name, config, t.shared, policyOf);
  const nextVirtuals = aggregateEntries(config, virtuals?.keys() ?? [], t.virtuals, makeVirtual, t.virtualEntries, aggregateKey, 'virtual server');

  let inner: RouteEndpoint;
  t.only = config.targets.size === 1 ? [...config.targets.keys()][0] : undefined;
  if (t.only !== undefined) {
    // The same sessions as /servers/<name>/mcp: one target's pass-through under the short path.
    inner = nextServers.get(t.only) as RouteEndpoint;
  } else {
    t.all ??= createAggregateEndpoint(undefined, config, t.shared, policyOf);
    inner = aggregateEntry(config, t.all, aggregateKey);
  }
  const create = inner.factory;
  const key = inner.endpoint;
  const rootSessions = t.rootSessions;
  const factory: SessionFactory = (seed) => {
    const session = create(seed);
    rootSessions.add(session);
    return session;
  };
  t.servers = nextServers;
  t.groupEntries = nextGroups;
  t.virtualEntries = nextVirtuals;
  return { ...inner, factory, owns: (s) => s.endpoint === key || rootSessions.has(s) };
}
