/**
 * The shape of a supervised upstream (supervisor.ts): what a session gives it and what it offers.
 */
import type { GatewayError } from '../errors/gateway-error.ts';
import type { JsonObject, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { Observer } from '../log/observer.ts';
import type { UpstreamConnection } from './connection.ts';
import type { CircuitBreaker } from './circuit-breaker.ts';
import type { LiveAuthorization, UpstreamPrincipal } from './identity.ts';
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

export interface SupervisorOptions<M> {
  target: TargetConfig;
  logger: Logger;
  hooks: SupervisorHooks<M>;
  open: UpstreamFactory;
  /** Params of a composed initialize (protocolVersion already the negotiated one). */
  initParams: () => JsonObject;
  /** logging/setLevel the downstream asked for, replayed after each handshake. */
  logLevel?: () => string | undefined;
  /** The gateway's logger, for a shared child that outlives the session. */
  poolLogger: Logger;
  /** The downstream's Authorization, sent only to targets that opt in (forwardAuthorization). */
  authorization: string | undefined;
  /** Who the session serves: fills the target's per-principal headers or env. */
  principal?: UpstreamPrincipal | undefined;
  /** The session's live downstream record: its latest Authorization is what a token exchange presents. */
  downstream?: LiveAuthorization | undefined;
  /** Makes room under the child caps before a child starts; throws GW_SESSION_LIMIT. */
  reserveChild?: ((target: TargetConfig) => void) | undefined;
  /** The target's circuit breaker (the Runtime's): asked before every start, told how it went. */
  breaker?: CircuitBreaker | undefined;
  restart: 'backoff' | 'on-use';
  /** Hears starts, restarts, exits and failed starts (log/observer.ts); default: nobody. */
  observer?: Observer | undefined;
  /** Warm spares (spares.ts): a start takes one that fits instead of spawning; absent: none. */
  spares?: SpareSource | undefined;
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
  /** Why it is unavailable for good; undefined while it can still be used. */
  readonly failure: GatewayError | undefined;
  /** The client's own initialize opened it: the client's `initialized` must reach it too. */
  readonly transparent: boolean;
  /** Removed by a reload: finishes what is in flight, takes nothing new. */
  retired: boolean;
  /** The target's circuit breaker, if the gateway gave it one. */
  readonly breaker: CircuitBreaker | undefined;
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
