/**
 * The shapes of a supervised upstream (supervisor.ts): what the session hears from it, what the
 * gateway lends it, how it is opened, and what the session sees of it.
 */
import type { GatewayError } from '../errors/gateway-error.ts';
import type { JsonObject, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { Observer } from '../log/observer.ts';
import type { Breakers } from './breakers.ts';
import type { UpstreamConnection } from './connection.ts';
import type { CircuitBreaker } from './circuit-breaker.ts';
import type { Caller } from './caller.ts';
import type { UpstreamFactory } from './open.ts';
import type { SpareSource } from './spares.ts';

/** What the session hears from one of its upstreams. One object per session, not per message. */
export interface SupervisorHooks<M> {
  onrequest(member: M, request: JsonRpcRequest): void;
  onnotification(member: M, notification: JsonRpcNotification): void;
  /** The connection went away unexpectedly. `final`: no restart follows (see `failure`). */
  onexit(member: M, reason: GatewayError, final: boolean): void;
  /** Called once per successful handshake: capabilities and instructions are known. */
  onready(member: M): void;
}

/**
 * What the gateway lends every upstream its sessions open: built once by the Runtime and passed by
 * reference (session/services.ts adds what the sessions themselves use).
 */
export interface UpstreamServices {
  /** Opens the connections (the Runtime's factory over its agents and pools; a test's in-memory ones). */
  readonly open: UpstreamFactory;
  /** Hears starts, restarts, exits and failed starts (log/observer.ts). */
  readonly observer: Observer;
  /** One circuit breaker per target, asked before every start and told how it went; undefined: none. */
  readonly breakers: Breakers | undefined;
  /** Warm spares (spares.ts): a start takes one that fits instead of spawning; undefined: none. */
  readonly spares: SpareSource | undefined;
}

export interface SupervisorOptions<M> {
  target: TargetConfig;
  logger: Logger;
  hooks: SupervisorHooks<M>;
  /** The gateway's (by reference). */
  services: UpstreamServices;
  /** Params of a composed initialize (protocolVersion already the negotiated one). */
  initParams: () => JsonObject;
  /** logging/setLevel the downstream asked for, replayed after each handshake. */
  logLevel?: () => string | undefined;
  /** The gateway's logger, for a shared child that outlives the session. */
  poolLogger: Logger;
  /** Who the session serves (caller.ts), by reference: see OpenUpstreamOptions.caller. */
  caller?: Caller | undefined;
  /** Makes room under the child caps before a child starts; throws GW_SESSION_LIMIT. */
  reserveChild?: ((target: TargetConfig) => void) | undefined;
  restart: 'backoff' | 'on-use';
}

export interface SupervisedUpstream {
  readonly name: string;
  readonly target: TargetConfig;
  /** The ready connection, if open. */
  readonly connection: UpstreamConnection | undefined;
  /** A connection is open or starting (a child is alive, for stdio targets). */
  readonly live: boolean;
  /** From the handshake's answer; undefined until a handshake is done. */
  readonly capabilities: JsonObject | undefined;
  readonly instructions: string | undefined;
  /** The last handshake's initialize result (serverInfo, protocolVersion, ...); undefined until one is done. */
  readonly handshake: JsonObject | undefined;
  /** Why it is unavailable for good; undefined while it can still be used. */
  readonly failure: GatewayError | undefined;
  /** The client's own initialize opened it: the client's `initialized` must reach it too. */
  readonly transparent: boolean;
  /** Removed by a reload: finishes what is in flight, takes nothing new. */
  retired: boolean;
  /** The target's circuit breaker, if the gateway gave it one. */
  readonly breaker: CircuitBreaker | undefined;
  /** A request on it timed out (`caller`: principal id, else session id): see connection-health.ts. */
  timedOut(caller: string, probe: boolean): void;
  /** The ready connection, opening it (composed handshake) first if needed. Rejects naming the target. */
  connect(): Promise<UpstreamConnection>;
  /** Opens it with the client's own initialize; resolves with the upstream's answer as it is. */
  openWith(initialize: JsonRpcRequest): Promise<JsonRpcResponse>;
  /** Sends an answer to one of its server->client requests, also while it is still starting. */
  reply(response: JsonRpcResponse): Promise<void>;
  /** Closes the connection (pending requests fail). Idempotent. */
  close(reason: string): Promise<void>;
  /** Closes once nothing is in flight. */
  drain(reason: string): Promise<void>;
}
