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
import { GATEWAY_CLIENT_INFO } from '../gateway-info.ts';
import type { ResponseSink } from '../streams.ts';
import type { SessionStore } from '../store.ts';
import { createHostKeys, type HostCaller, type HostIdentity } from './host-keys.ts';
import { makeRoom, sweepIdle, sweepPeriod, type RoomState } from './host-room.ts';
import { HostSlots } from './host-slots.ts';
import type { Host } from './host.ts';

export type { HostCaller } from './host-keys.ts';
export { askerOf, type Host } from './host.ts';

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

/**
 * The receiver of the host's standalone stream: what belongs to no request (a server->client
 * request no single call's stream took, a broadcast notification) goes to `onmessage` as the
 * object the session has.
 */
function receiver(options: HostPoolOptions, host: () => Host | undefined, ended: () => void): ResponseSink {
  return {
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
  };
}

/** The pool's state and its steps; room and idleness are host-room.ts's, the counts host-slots.ts's. */
class Pool implements HostPool, RoomState {
  readonly ready = new Map<string, Host>();
  /** Each key's hosts and each owner's count (endpoint and principal), across capability sets and credentials. */
  private readonly owners = new HostSlots();
  private readonly keys = createHostKeys();
  private readonly store: SessionStore;
  private readonly options: HostPoolOptions;
  private readonly timer: NodeJS.Timeout;
  readonly logger: Logger;
  readonly perCaller: number;
  readonly idleMs: number;
  readonly scopeOf: (caller: HostCaller) => string;

  constructor(options: HostPoolOptions) {
    this.store = options.store;
    this.logger = options.logger;
    this.perCaller = options.perCaller;
    this.idleMs = options.idleMs;
    this.options = options;
    this.scopeOf = this.keys.scopeOf;
    this.timer = setInterval(() => sweepIdle(this, Date.now()), sweepPeriod(this.idleMs));
    this.timer.unref();
  }

  acquire(caller: HostCaller, mayAsk: boolean): Host | Promise<Host> {
    const identity = this.keys.identityOf(caller);
    const held = this.owners.held(identity.owner);
    const chosen = this.choose(identity.key, held, mayAsk);
    if (chosen !== undefined) return this.take(chosen, caller);
    return this.acquireNew(caller, mayAsk, identity, held);
  }

  release(host: Host): void {
    host.active = Math.max(0, host.active - 1);
    host.session.lastActivity = host.lastUsed = Date.now();
  }

  byId(id: string): Host | undefined {
    return this.ready.get(id);
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** Ends `host` now; its place is free at once. */
  retire(host: Host, why: string): void {
    const slot = this.owners.slotOf(host.id);
    if (slot !== undefined) this.forget(host, slot);
    this.ready.delete(host.id);
    void host.session.end(why);
  }

  private forget(host: Host, slot: Promise<Host>): void {
    this.ready.delete(host.id);
    this.owners.forget(host, slot);
  }

  private async open(caller: HostCaller, { key, scope, owner }: HostIdentity, slot: () => Promise<Host>): Promise<Host> {
    const session = this.store.create(caller.endpoint.factory, { authorization: caller.authorization, principal: caller.principal, held: true });
    // The session core's own handshake, composed from what the caller declared in its envelope. A
    // failure (no room for its child: GW_SESSION_LIMIT, 503 + Retry-After; an upstream that cannot
    // start or refuses initialize) ends the session and answers the request.
    const init = await session.open({ capabilities: caller.capabilities, clientInfo: caller.clientInfo ?? { ...GATEWAY_CLIENT_INFO } });
    const host: Host = { id: session.id, session, key, scope, owner, init, askers: new Set(), active: 0, lastUsed: Date.now(), nextCall: 1 };
    this.ready.set(host.id, host);
    this.owners.place(host.id, slot());
    session.openStream(
      receiver(
        this.options,
        () => this.ready.get(host.id),
        () => this.forget(host, slot()),
      ),
      undefined,
    );
    this.logger.debug({ session: session.id, endpoint: caller.endpoint.endpoint }, 'stateless host opened');
    return host;
  }

  private take(host: Host, caller: HostCaller): Host {
    // A caller's refreshed token is the one its held session's upstreams see next (token exchange).
    this.store.noteAuthorization(host.id, caller.principal, caller.authorization);
    host.active++;
    // A 2026 request is activity on the held session (the store reads it to decide what is idle).
    host.session.lastActivity = host.lastUsed = Date.now();
    return host;
  }

  /**
   * The host of `key` a request should use now, or undefined when a new one should open. `held`:
   * the caller's hosts, open or opening, of any key (one hot loop, no allocation).
   */
  private choose(key: string, held: number, mayAsk: boolean): Host | undefined {
    let best: Host | undefined;
    for (const host of this.ready.values()) {
      if (host.key !== key || host.session.ended) continue;
      const load = mayAsk ? host.askers.size : host.active;
      if (best === undefined || load < (mayAsk ? best.askers.size : best.active)) best = host;
    }
    if (best === undefined) return undefined;
    if (mayAsk && best.askers.size > 0 && held < this.perCaller) return undefined;
    return best;
  }

  /** No open host fits: wait for one of the key's that is opening, or open one. */
  private async acquireNew(caller: HostCaller, mayAsk: boolean, identity: HostIdentity, held: number): Promise<Host> {
    const { key, owner } = identity;
    const latest = this.owners.latest(key);
    // Wait for a host already opening rather than open one past the cap (or at all, when the
    // request cannot ask and so needs no host of its own).
    if (latest !== undefined && (held >= this.perCaller || !mayAsk)) return this.take(await latest, caller);
    if (held >= this.perCaller) makeRoom(this, owner, held);
    let slot: Promise<Host> | undefined;
    const opening = this.open(caller, identity, () => slot as Promise<Host>);
    slot = opening;
    this.owners.add(key, owner, opening);
    // A failed open leaves no slot behind; the caller sees the failure.
    opening.catch(() => this.owners.drop(key, owner, opening));
    return this.take(await opening, caller);
  }
}

export function createHostPool(options: HostPoolOptions): HostPool {
  return new Pool(options);
}
