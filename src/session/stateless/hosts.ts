/**
 * Hosts: the 2025 sessions the gateway holds on behalf of 2026 clients. A 2026 request carries no
 * session, but a 2025 upstream needs one (initialize, then requests on that connection), so the
 * gateway opens one itself, with the handshake composed from the request's envelope (clientInfo,
 * clientCapabilities), and serves later requests of the same caller on it. Who shares a host is
 * its key (host-keys.ts): one caller's upstream identity never serves another.
 *
 * stdio carries no "related request" on a server->client request, so a question is attributed to
 * the one call that may ask (tools/call, prompts/get, resources/read) in flight on its host, and
 * refused upstream when there are several (`askerOf`). To keep that rare, such a call goes to a
 * host where no other may ask, opening one while the caller has fewer than `perCaller`; past that,
 * calls share the least busy host of their key (never a queue). A host idle for `idleMs` ends,
 * its child with it; hosts are sessions of the store, so its caps on sessions and children apply.
 *
 * What one caller may hold: `perCaller` hosts per endpoint and principal in all, whatever
 * capabilities it declares (a caller that varies them must not multiply children). A request with
 * a capability set that has no host yet, when its caller is at that bound, takes the place of the
 * caller's least recently used idle host; when all of them are at work it is refused
 * (GW_SESSION_LIMIT, `held-sessions`). A held session is in use while a request or a listen stream
 * of its caller runs on it; its own standalone stream does not count, so once idle past
 * `session.evictIdleMs` the store may end it for room like any other session (limits.ts).
 */
import type { JsonObject } from '../../jsonrpc/types.ts';
import type { Logger } from '../../log/logger.ts';
import { heldSessionsRefusal } from '../room.ts';
import { GATEWAY_CLIENT_INFO } from '../gateway-info.ts';
import type { Session } from '../session.ts';
import type { ResponseSink } from '../streams.ts';
import type { SessionStore } from '../store.ts';
import { createHostKeys, type HostCaller, type HostIdentity } from './host-keys.ts';
import type { Relay } from './relay.ts';

export type { HostCaller } from './host-keys.ts';

export interface Host {
  readonly id: string;
  readonly session: Session;
  readonly key: string;
  /** Endpoint, principal and credential: who may resume its calls and hear its notifications. */
  readonly scope: string;
  /** Endpoint and principal (HostIdentity.owner): whose `perCaller` it counts toward. */
  readonly owner: string;
  /** The upstream side's initialize result (serverInfo, capabilities, instructions). */
  readonly init: JsonObject;
  /** Calls in flight on it that may ask the client for input. */
  readonly askers: Set<Relay>;
  /** Requests in flight on it. */
  active: number;
  lastUsed: number;
  /** Ids the host knows requests by: unique in the host, whatever ids clients chose. */
  nextCall: number;
}

/** The one call a question of `host` belongs to; undefined when none or several could have asked. */
export function askerOf(host: Host): Relay | undefined {
  let running: Relay | undefined;
  let parked: Relay | undefined;
  let runs = 0;
  let parks = 0;
  for (const relay of host.askers) {
    if (relay.finished) continue;
    if (relay.parked) {
      parks++;
      parked = relay;
    } else {
      runs++;
      running = relay;
    }
  }
  // A call waiting for its answers is blocked upstream: a new question is the running one's.
  if (runs === 1) return running;
  return runs === 0 && parks === 1 ? parked : undefined;
}

/** Every request in flight on `host` is a call parked for input (and there is one at least). */
function holdsOnlyParked(host: Host): boolean {
  let parked = 0;
  for (const relay of host.askers) if (!relay.finished && relay.parked) parked++;
  return parked > 0 && host.active <= parked;
}

export interface HostPoolOptions {
  store: SessionStore;
  logger: Logger;
  perCaller: number;
  idleMs: number;
  /** A message the host routed to no request: a server->client request or a broadcast notification. */
  onmessage(host: Host, message: JsonObject): void;
}

export interface HostPool {
  /**
   * A host for `caller`; `mayAsk`: the request may ask the client for input (prefer a host no other
   * such call uses). A host that is open already comes at once (no promise on the hot path).
   */
  acquire(caller: HostCaller, mayAsk: boolean): Host | Promise<Host>;
  release(host: Host): void;
  byId(id: string): Host | undefined;
  scopeOf(caller: HostCaller): string;
  /** Stops the idle timer (the store ends the hosts with every other session). */
  close(): void;
}

export function createHostPool(options: HostPoolOptions): HostPool {
  const { store, logger, perCaller, idleMs } = options;
  const keys = createHostKeys();
  const byKey = new Map<string, Array<Promise<Host>>>();
  const ready = new Map<string, Host>();
  /** Hosts open or opening per owner (endpoint and principal), across capability sets and credentials. */
  const perOwner = new Map<string, number>();
  /** The slot each open host fills in its key's list. */
  const slots = new Map<string, Promise<Host>>();

  const count = (owner: string, delta: number) => {
    const n = (perOwner.get(owner) ?? 0) + delta;
    if (n > 0) perOwner.set(owner, n);
    else perOwner.delete(owner);
  };

  /** Removes `slot` from its key's list (and the owner's count) once, whichever way the host went. */
  const drop = (key: string, owner: string, slot: Promise<Host>) => {
    const list = byKey.get(key);
    const at = list === undefined ? -1 : list.indexOf(slot);
    if (list === undefined || at < 0) return;
    list.splice(at, 1);
    count(owner, -1);
    if (list.length === 0) byKey.delete(key);
  };

  const forget = (host: Host, slot: Promise<Host>) => {
    ready.delete(host.id);
    slots.delete(host.id);
    drop(host.key, host.owner, slot);
  };

  /** Ends `host` now; its place is free at once. */
  const retire = (host: Host, why: string) => {
    const slot = slots.get(host.id);
    if (slot !== undefined) forget(host, slot);
    ready.delete(host.id);
    void host.session.end(why);
  };

  /**
   * Room in `owner`'s hosts for a capability set or credential that has none: its least recently used
   * idle host ends; none idle: a host that only holds calls parked for input (a person's answer
   * awaited, or a caller that never comes back) does not count against `perCaller`, so such calls
   * never lock the owner's other requests out (their number has its own bound, mrtr.ts); else
   * GW_SESSION_LIMIT.
   */
  const makeRoom = (owner: string, held: number) => {
    let lru: Host | undefined;
    let parkedOnly = 0;
    for (const host of ready.values()) {
      if (host.owner !== owner) continue;
      if (holdsOnlyParked(host)) parkedOnly++;
      if (host.active > 0 || host.askers.size > 0) continue;
      if (lru === undefined || host.lastUsed < lru.lastUsed) lru = host;
    }
    if (lru === undefined && held < perCaller + parkedOnly) return;
    if (lru === undefined) throw heldSessionsRefusal(perCaller);
    logger.debug({ session: lru.id }, 'held session replaced by one for other client capabilities');
    retire(lru, 'replaced by a held session for other client capabilities');
  };

  /**
   * The receiver of the host's standalone stream: what belongs to no request (a server->client
   * request no single call's stream took, a broadcast notification) goes to `onmessage` as the
   * object the session has.
   */
  const receiver = (host: () => Host | undefined, ended: () => void): ResponseSink => ({
    onclose: undefined,
    closed: false,
    json() {},
    sse() {},
    event() {},
    take(message) {
      const h = host();
      if (h !== undefined) options.onmessage(h, message);
    },
    end: ended,
  });

  const open = async (caller: HostCaller, { key, scope, owner }: HostIdentity, slot: () => Promise<Host>): Promise<Host> => {
    const session = store.create(caller.endpoint.factory, { authorization: caller.authorization, principal: caller.principal, held: true });
    // The session core's own handshake, composed from what the caller declared in its envelope. A
    // failure (no room for its child: GW_SESSION_LIMIT, 503 + Retry-After; an upstream that cannot
    // start or refuses initialize) ends the session and answers the request.
    const init = await session.open({ capabilities: caller.capabilities, clientInfo: caller.clientInfo ?? { ...GATEWAY_CLIENT_INFO } });
    const host: Host = { id: session.id, session, key, scope, owner, init, askers: new Set(), active: 0, lastUsed: Date.now(), nextCall: 1 };
    ready.set(host.id, host);
    slots.set(host.id, slot());
    session.openStream(
      receiver(
        () => ready.get(host.id),
        () => forget(host, slot()),
      ),
      undefined,
    );
    logger.debug({ session: session.id, endpoint: caller.endpoint.endpoint }, 'stateless host opened');
    return host;
  };

  const take = (host: Host, caller: HostCaller): Host => {
    // A caller's refreshed token is the one its held session's upstreams see next (token exchange).
    store.noteAuthorization(host.id, caller.principal, caller.authorization);
    host.active++;
    // A 2026 request is activity on the held session (the store reads it to decide what is idle).
    host.session.lastActivity = host.lastUsed = Date.now();
    return host;
  };

  /**
   * The host of `key` a request should use now, or undefined when a new one should open. `held`:
   * the caller's hosts, open or opening, of any key (one hot loop, no allocation).
   */
  const choose = (key: string, held: number, mayAsk: boolean): Host | undefined => {
    let best: Host | undefined;
    for (const host of ready.values()) {
      if (host.key !== key || host.session.ended) continue;
      const load = mayAsk ? host.askers.size : host.active;
      if (best === undefined || load < (mayAsk ? best.askers.size : best.active)) best = host;
    }
    if (best === undefined) return undefined;
    if (mayAsk && best.askers.size > 0 && held < perCaller) return undefined;
    return best;
  };

  /** No open host fits: wait for one of the key's that is opening, or open one. */
  const acquireNew = async (caller: HostCaller, mayAsk: boolean, identity: HostIdentity, held: number): Promise<Host> => {
    const { key, owner } = identity;
    const list = byKey.get(key) ?? [];
    // Wait for a host already opening rather than open one past the cap (or at all, when the
    // request cannot ask and so needs no host of its own).
    if (list.length > 0 && (held >= perCaller || !mayAsk)) return take(await (list[list.length - 1] as Promise<Host>), caller);
    if (held >= perCaller) makeRoom(owner, held);
    let slot: Promise<Host> | undefined;
    const opening = open(caller, identity, () => slot as Promise<Host>);
    slot = opening;
    list.push(opening);
    byKey.set(key, list);
    count(owner, 1);
    // A failed open leaves no slot behind; the caller sees the failure.
    opening.catch(() => drop(key, owner, opening));
    return take(await opening, caller);
  };

  const pool: HostPool = {
    scopeOf: keys.scopeOf,

    acquire(caller, mayAsk) {
      const identity = keys.identityOf(caller);
      const held = perOwner.get(identity.owner) ?? 0;
      const chosen = choose(identity.key, held, mayAsk);
      if (chosen !== undefined) return take(chosen, caller);
      return acquireNew(caller, mayAsk, identity, held);
    },

    release(host) {
      host.active = Math.max(0, host.active - 1);
      host.session.lastActivity = host.lastUsed = Date.now();
    },

    byId: (id) => ready.get(id),

    close() {
      clearInterval(timer);
    },
  };

  const timer = setInterval(() => {
    const now = Date.now();
    for (const host of ready.values()) {
      // A listen stream holds its host (active) with no request in flight: still in use.
      if (host.active > 0) host.session.lastActivity = now;
      else if (host.askers.size === 0 && now - host.lastUsed > idleMs) retire(host, 'stateless host idle');
    }
  }, Math.max(250, Math.min(idleMs / 4, 30_000)));
  timer.unref();
  return pool;
}
