/**
 * One target's upstream inside one downstream session, supervised: opened on first need with its
 * handshake, restarted after an unexpected exit as its target's policy allows, and given up on
 * (every later use fails with the cause) when it does not.
 *
 * Two ways to open it:
 * - `connect()`: the gateway composes the handshake (`initialize` with the params it knows, then
 *   `notifications/initialized`) and waits for the roots exchange (roots-settle.ts). Needs no
 *   client initialize: an aggregate member, and what a stateless client will use.
 * - `openWith(initialize)`: the client's own initialize goes upstream as it is and the answer comes
 *   back as it is (a transparent single-target endpoint); the client sends `initialized` itself.
 *   A restart replays those params through the composed handshake.
 *
 * After an exit, `restart: 'backoff'` starts again at once, with exponential backoff, while uses
 * wait for it; `'on-use'` starts again on the next use. Either way within `maxRestarts`.
 * How a start goes (spawn or warm spare, handshake, backoff) is supervisor-start.ts.
 */
import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { stderrOf, type Observer } from '../log/observer.ts';
import type { Breakers } from './breakers.ts';
import type { UpstreamConnection } from './connection.ts';
import type { CircuitBreaker } from './circuit-breaker.ts';
import { askUpstream, unavailable } from './handshake.ts';
import type { Caller } from './caller.ts';
import type { UpstreamFactory } from './open.ts';
import type { SpareSource } from './spares.ts';
import { countsForTarget, createStartAttempt } from './start-attempt.ts';
import { createStarter, type SupervisedState } from './supervisor-start.ts';
import { createConnectionHealth } from './connection-health.ts';
import { handshakeTimeouts as startupTimeouts } from './startup-deadline.ts';

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

/** `extra`'s fields (the session's view of this upstream: exposure, ...) are part of the object the hooks get. */
export function createSupervisedUpstream<X extends object>(options: SupervisorOptions<SupervisedUpstream & X>, extra: X): SupervisedUpstream & X {
  const { target, hooks, services } = options;
  const breaker = services.breakers?.of(target);
  const name = target.name;
  const logger = options.logger.child({ target: name });
  const handshakeTimeouts = startupTimeouts(target);
  const { observer } = services;
  const s: SupervisedState = { connection: undefined, starting: undefined, capabilities: undefined, instructions: undefined, handshake: undefined, clientInit: undefined, closed: false, starts: 0, settle: undefined };
  let opening: Promise<UpstreamConnection> | undefined;
  let failure: GatewayError | undefined;
  /** The caller has yet to connect their own account here (oauth.perUser): shown as the failure, but the next use tries again. */
  let accountNeeded: GatewayError | undefined;
  /** The client's initialize was answered from a warm spare: it never went upstream. */
  let warmed = false;
  const health = createConnectionHealth(target, breaker);
  const { mayStartAgain, begin, ready, adopt, admitOrDrop, open, restartWithBackoff } = createStarter(
    {
      target,
      logger,
      observer,
      breaker,
      health,
      spares: services.spares,
      make: () => services.open({ target, logger, poolLogger: options.poolLogger, caller: options.caller }),
      initParams: options.initParams,
      logLevel: () => options.logLevel?.(),
      onrequest: (request) => hooks.onrequest(member, request),
      onnotification: (notification) => hooks.onnotification(member, notification),
      onready: () => hooks.onready(member),
      onexit: (which, reason) => onexit(which, reason),
    },
    s,
  );

  const onexit = (which: UpstreamConnection, reason: GatewayError) => {
    if (which !== s.connection || s.closed) return;
    s.connection = undefined;
    opening = undefined;
    observer.upstream(name, 'exit', stderrOf(reason));
    if (!mayStartAgain()) {
      failure = unavailable(name, reason.message);
      logger.warn({ reason: reason.message }, 'upstream exited; unavailable for the rest of the session');
      hooks.onexit(member, reason, true);
      return;
    }
    if (options.restart === 'backoff') {
      opening = restartWithBackoff(reason);
      opening.catch((err: unknown) => {
        opening = undefined;
        failure = toGatewayError(err);
        hooks.onexit(member, failure, true);
      });
    } else {
      logger.warn({ reason: reason.message }, 'upstream exited; it restarts on next use');
    }
    hooks.onexit(member, reason, false);
  };

  const member: SupervisedUpstream & X = {
    ...extra,
    name,
    target,
    retired: false,
    breaker,
    timedOut(caller, probe) {
      // Its own child keeps timing out: ended as if it had exited (restarted or not, per policy).
      const which = s.connection;
      const hung = health.timedOut(caller, probe);
      if (hung === undefined || which === undefined) return;
      logger.warn({ reason: hung.details.reason }, 'upstream stopped answering; its child is ended');
      onexit(which, hung);
      void which.close('it stopped answering');
    },
    get connection() {
      return s.connection;
    },
    get live() {
      return (s.connection ?? s.starting) !== undefined;
    },
    get capabilities() {
      return s.capabilities;
    },
    get instructions() {
      return s.instructions;
    },
    get handshake() {
      return s.handshake;
    },
    get failure() {
      return failure ?? accountNeeded;
    },
    get transparent() {
      return s.clientInit !== undefined && !warmed;
    },
    connect() {
      if (s.connection !== undefined) return Promise.resolve(s.connection);
      if (s.closed || member.retired) return Promise.reject(unavailable(name, 'it was removed from the configuration'));
      if (failure !== undefined) return Promise.reject(failure);
      let warm: ReturnType<typeof adopt>;
      if (opening === undefined) {
        warm = adopt(s.clientInit ?? options.initParams());
        if (warm?.result !== undefined) return Promise.resolve(warm.connection);
        // No room for its child (the store's child caps), or its circuit is open: this use fails,
        // a later one may start it. A spawned spare taken is already counted: it needs no room.
        try {
          admitOrDrop(warm);
          if (warm === undefined) options.reserveChild?.(target);
        } catch (err) {
          return Promise.reject(toGatewayError(err));
        }
      }
      opening ??= open(true, warm).catch((err: unknown) => {
        opening = undefined;
        const error = toGatewayError(err);
        // A failed start is final unless the restart policy allows another attempt; a caller who has
        // not connected their own account yet (oauth.perUser) may do so and call again.
        if (error.code === 'GW_UPSTREAM_AUTH_REQUIRED') accountNeeded = error;
        else if (!mayStartAgain()) failure = error;
        throw error;
      });
      return opening.then((connection) => {
        accountNeeded = undefined;
        return connection;
      });
    },
    async openWith(request) {
      s.clientInit = isObject(request.params) ? structuredClone(request.params) : {};
      const warm = adopt(s.clientInit);
      if (warm?.result !== undefined) {
        // Answered from the spare's own handshake; the client's `initialized` is not sent again.
        warmed = true;
        return { jsonrpc: '2.0', id: request.id, result: structuredClone(warm.result) };
      }
      // A spawned spare (or a new child) hears the client's own initialize, as without spares.
      admitOrDrop(warm);
      if (warm === undefined) options.reserveChild?.(target);
      const attempt = createStartAttempt(breaker, () => s.closed, countsForTarget(target));
      let next: UpstreamConnection;
      try {
        next = await begin(undefined, attempt, warm?.connection);
      } catch (err) {
        attempt.ended(toGatewayError(err));
        observer.upstream(name, 'start-failed', stderrOf(err));
        throw err;
      }
      // The client's initialize goes first and nothing else can arrive before its answer (the
      // session id is not out yet), so the connection is published at once.
      s.connection = next;
      s.starting = undefined;
      const answer = await askUpstream(next, request, handshakeTimeouts, logger, attempt.failed);
      const result = 'result' in answer ? answer.result : undefined;
      if (isObject(result) && !s.closed) {
        ready(next, result);
        attempt.succeeded();
      } else {
        attempt.ended();
      }
      return answer;
    },
    reply(response) {
      const to = s.connection ?? s.starting;
      if (to === undefined) return Promise.resolve();
      const sent = to.correlator.send(response);
      s.settle?.answered();
      return sent;
    },
    close(reason) {
      s.closed = true;
      const which = s.connection ?? s.starting;
      s.connection = undefined;
      s.starting = undefined;
      return which?.close(reason) ?? Promise.resolve();
    },
    async drain(reason) {
      member.retired = true;
      await s.connection?.correlator.idle();
      await member.close(reason);
    },
  };
  return member;
}
