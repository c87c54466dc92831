/**
 * Hosts: the 2025 sessions the gateway holds on behalf of 2026 clients. A 2026 request carries no
 * session, but a 2025 upstream needs one (initialize, then requests on that connection), so the
 * gateway opens one itself, with the handshake composed from the request's envelope (clientInfo,
 * clientCapabilities), and serves later requests of the same caller on it.
 *
 * Keyed by endpoint, principal and the client capabilities an upstream may act on (sampling,
 * elicitation, roots): one principal's upstream identity never serves another, and an upstream
 * only asks a client for what that client declared. A call that may ask the client for input
 * (tools/call, prompts/get, resources/read) holds its host alone until it ends, so every
 * server->client request of that host belongs to exactly one client request; other requests share.
 *
 * Bounded: at most `perCaller` hosts per key (past it a call that needs a host alone gets
 * GW_HOSTS_BUSY, never a queue); hosts are sessions of the store, so its caps on sessions and
 * children apply; a host idle for `idleMs` ends (its child with it).
 */
import { GatewayError } from '../../errors/gateway-error.ts';
import { isObject } from '../../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcErrorObject } from '../../jsonrpc/types.ts';
import { LATEST_PROTOCOL_VERSION } from '../../jsonrpc/versions.ts';
import type { Logger } from '../../log/logger.ts';
import type { Caller } from '../../router/policy.ts';
import type { RouteEndpoint } from '../endpoint-table.ts';
import { GATEWAY_CLIENT_INFO } from '../gateway-info.ts';
import type { Session } from '../session.ts';
import type { ResponseSink } from '../streams.ts';
import type { SessionStore } from '../store.ts';
import type { Relay } from './relay.ts';

export interface Host {
  readonly id: string;
  readonly session: Session;
  readonly key: string;
  /** Endpoint and principal: who may resume its calls and hear its notifications. */
  readonly scope: string;
  /** The upstream side's initialize result (serverInfo, capabilities, instructions). */
  readonly init: JsonObject;
  /** Taken by a call that may ask for input; `holder` is its relay once it exists. */
  held: boolean;
  holder: Relay | undefined;
  /** Requests in flight on it. */
  active: number;
  lastUsed: number;
  /** Ids the host knows requests by: unique in the host, whatever ids clients chose. */
  nextCall: number;
}

/** Who asks, and what they declared, for a host. */
export interface HostCaller {
  readonly endpoint: RouteEndpoint;
  readonly principal: Caller | undefined;
  readonly authorization: string | undefined;
  readonly capabilities: JsonObject;
  readonly clientInfo: JsonObject | undefined;
}

/** An initialize the upstream side refused: answered to the client as it is. */
export class HostOpenError extends Error {
  readonly error: JsonRpcErrorObject;
  constructor(error: JsonRpcErrorObject) {
    super(error.message);
    this.error = error;
  }
}

export interface HostPoolOptions {
  store: SessionStore;
  logger: Logger;
  perCaller: number;
  idleMs: number;
  /** A message the host routed to no request: a server->client request or a broadcast notification. */
  onmessage(host: Host, message: JsonObject): void;
  /** Frees a host whose call waits for input nobody gave (the oldest first): cancels that call. */
  evict(host: Host): void;
}

export interface HostPool {
  /** A host for `caller`; `alone`: taken until `release` (GW_HOSTS_BUSY when none can be). */
  acquire(caller: HostCaller, alone: boolean): Promise<Host>;
  release(host: Host): void;
  byId(id: string): Host | undefined;
  scopeOf(caller: HostCaller): string;
  /** Stops the idle timer (the store ends the hosts with every other session). */
  close(): void;
}

/** The capabilities an upstream acts on when it asks the client something. */
function askingCapabilities(capabilities: JsonObject): string {
  const { sampling, elicitation, roots } = capabilities;
  return JSON.stringify([sampling ?? null, elicitation ?? null, roots ?? null]);
}

export function createHostPool(options: HostPoolOptions): HostPool {
  const { store, logger, perCaller, idleMs } = options;
  const byKey = new Map<string, Array<Promise<Host>>>();
  const ready = new Map<string, Host>();

  const forget = (host: Host, slot: Promise<Host>) => {
    ready.delete(host.id);
    const list = byKey.get(host.key);
    if (list === undefined) return;
    const at = list.indexOf(slot);
    if (at >= 0) list.splice(at, 1);
    if (list.length === 0) byKey.delete(host.key);
  };

  /** The sink of the host's standalone stream: what belongs to no request goes to `onmessage`. */
  const standaloneSink = (host: () => Host | undefined, ended: () => void): ResponseSink => ({
    onclose: undefined,
    closed: false,
    json() {},
    sse() {},
    event(_id, data) {
      const h = host();
      if (data === '' || h === undefined) return;
      const message: unknown = JSON.parse(data);
      if (isObject(message)) options.onmessage(h, message);
    },
    end: ended,
  });

  const open = async (caller: HostCaller, key: string, scope: string, alone: boolean, slot: () => Promise<Host>): Promise<Host> => {
    const session = store.create(caller.endpoint.factory, { authorization: caller.authorization, principal: caller.principal, held: true });
    const params: JsonObject = { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: caller.capabilities, clientInfo: caller.clientInfo ?? { ...GATEWAY_CLIENT_INFO } };
    const answer = await session.initialize({ jsonrpc: '2.0', id: 0, method: 'initialize', params });
    if ('error' in answer) throw new HostOpenError(answer.error as JsonRpcErrorObject);
    await session.handleNotification({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const host: Host = { id: session.id, session, key, scope, init: isObject(answer.result) ? answer.result : {}, held: alone, holder: undefined, active: 0, lastUsed: Date.now(), nextCall: 1 };
    ready.set(host.id, host);
    session.openStream(
      standaloneSink(
        () => ready.get(host.id),
        () => forget(host, slot()),
      ),
      undefined,
    );
    logger.debug({ session: session.id, endpoint: caller.endpoint.endpoint }, 'stateless host opened');
    return host;
  };

  const take = (host: Host, alone: boolean): Host => {
    host.active++;
    host.lastUsed = Date.now();
    if (alone) host.held = true;
    return host;
  };

  const pool: HostPool = {
    scopeOf(caller) {
      return `${caller.endpoint.endpoint}\u0000${caller.principal?.id ?? ''}`;
    },

    async acquire(caller, alone) {
      const scope = pool.scopeOf(caller);
      const key = `${scope}\u0000${askingCapabilities(caller.capabilities)}`;
      const list = byKey.get(key) ?? [];
      for (const host of ready.values()) {
        if (host.key === key && !host.session.ended && !(alone && host.held)) return take(host, alone);
      }
      // A request that shares waits for a host already opening rather than opening another.
      if (!alone && list.length > 0) return take(await (list[list.length - 1] as Promise<Host>), false);
      if (list.length >= perCaller) {
        // Every host is held. One whose call waits for input (a client that may never come back)
        // gives way, oldest first; a call still running upstream never does.
        const waiting = [...ready.values()].filter((h) => h.key === key && h.holder?.parked === true);
        const oldest = waiting.sort((a, b) => (a.holder?.parkedAt ?? 0) - (b.holder?.parkedAt ?? 0))[0];
        if (oldest === undefined) throw new GatewayError('GW_HOSTS_BUSY', undefined, { limit: perCaller, retryAfterSec: 1 });
        options.evict(oldest);
        return take(oldest, true);
      }
      let slot: Promise<Host> | undefined;
      const opening = open(caller, key, scope, alone, () => slot as Promise<Host>);
      slot = opening;
      list.push(opening);
      byKey.set(key, list);
      // A failed open leaves no slot behind; the caller sees the failure.
      opening.catch(() => {
        const at = list.indexOf(opening);
        if (at >= 0) list.splice(at, 1);
        if (list.length === 0 && byKey.get(key) === list) byKey.delete(key);
      });
      return take(await opening, alone);
    },

    release(host) {
      host.active = Math.max(0, host.active - 1);
      host.lastUsed = Date.now();
    },

    byId: (id) => ready.get(id),

    close() {
      clearInterval(timer);
    },
  };

  const timer = setInterval(() => {
    const now = Date.now();
    for (const host of ready.values()) {
      if (host.active === 0 && !host.held && now - host.lastUsed > idleMs) {
        ready.delete(host.id);
        void host.session.end('stateless host idle');
      }
    }
  }, Math.max(250, Math.min(idleMs / 4, 30_000)));
  timer.unref();
  return pool;
}
