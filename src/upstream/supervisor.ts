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
 */
import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { NOOP_OBSERVER, type Observer } from '../log/observer.ts';
import type { UpstreamConnection } from './connection.ts';
import type { CircuitBreaker } from './circuit-breaker.ts';
import { askUpstream, composedHandshake, replayLogLevel, unavailable } from './handshake.ts';
import type { LiveAuthorization, UpstreamPrincipal } from './identity.ts';
import type { UpstreamFactory } from './open.ts';
import { createRootsSettle, type RootsSettle } from './roots-settle.ts';
import type { SpareSource, WarmChild } from './spares.ts';
import { backoffMs, createStartAttempt, type StartAttempt } from './start-attempt.ts';
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
  const { target, hooks, breaker } = options;
  const name = target.name;
  const logger = options.logger.child({ target: name });
  const handshakeTimeouts = startupTimeouts(target);
  const observer = options.observer ?? NOOP_OBSERVER;
  let connection: UpstreamConnection | undefined;
  let opening: Promise<UpstreamConnection> | undefined;
  let starting: UpstreamConnection | undefined;
  let failure: GatewayError | undefined;
  let capabilities: JsonObject | undefined;
  let instructions: string | undefined;
  let clientInit: JsonObject | undefined;
  /** The client's initialize was answered from a warm spare: it never went upstream. */
  let warmed = false;
  let closed = false;
  let starts = 0;
  /** The roots exchange of the start under way, if any. */
  let settle: RootsSettle | undefined;
  const health = createConnectionHealth(target, breaker);

  const policy = 'restart' in target ? target.restart : undefined;
  /** The target's restart policy (`onExit: restart`, within `maxRestarts`) allows a fresh start. */
  const mayStartAgain = () => policy !== undefined && policy.onExit === 'restart' && starts <= policy.maxRestarts;

  /** A new connection wired to the hooks, started (spawned or dialled), not yet handshaken. */
  const begin = async (roots: RootsSettle | undefined, attempt: StartAttempt): Promise<UpstreamConnection> => {
    starts++;
    const next = options.open({ target, logger, poolLogger: options.poolLogger, authorization: options.authorization, principal: options.principal, downstream: options.downstream });
    next.correlator.onrequest = (request) => {
      if (roots !== undefined && settle === roots) roots.asked(request);
      hooks.onrequest(member, request);
    };
    next.correlator.onnotification = (notification) => hooks.onnotification(member, notification);
    next.onexit = (reason) => {
      attempt.exited(reason);
      onexit(next, reason);
    };
    starting = next;
    try {
      await next.start();
    } catch (err) {
      starting = undefined;
      await next.close('start failed');
      throw err;
    }
    return next;
  };

  /** Learns what the handshake said and lets requests through. */
  const ready = (next: UpstreamConnection, result: JsonObject) => {
    const caps: JsonObject = isObject(result.capabilities) ? result.capabilities : {};
    capabilities = caps;
    instructions = typeof result.instructions === 'string' ? result.instructions : undefined;
    connection = next;
    starting = undefined;
    health.reset();
    replayLogLevel(next, options.logLevel?.(), caps, target.timeouts);
    observer.upstream(name, starts > 1 ? 'restart' : 'start');
    hooks.onready(member);
  };

  /**
   * A warm spare that fits `params`, wired in as if this start had made it (its handshake is done,
   * the breaker heard it); undefined when none fits. Synchronous: it counts as this session's child at once.
   */
  const adopt = (params: JsonObject): WarmChild | undefined => {
    const warm = closed ? undefined : options.spares?.take(target, params);
    if (warm === undefined) return undefined;
    const next = warm.connection;
    starts++;
    next.correlator.onrequest = (request) => hooks.onrequest(member, request);
    next.correlator.onnotification = (notification) => hooks.onnotification(member, notification);
    next.onexit = (reason) => onexit(next, reason);
    logger.debug({ pid: next.pid }, 'took a warm spare');
    ready(next, warm.result);
    return warm;
  };

  /** The composed handshake: a first open, or a restart (replaying the client's params if it had its own). */
  const open = async (admitted = false): Promise<UpstreamConnection> => {
    const params = clientInit ?? options.initParams();
    const warm = adopt(params);
    if (warm !== undefined) return warm.connection;
    // An open circuit refuses before anything is spawned or dialled (GW_CIRCUIT_OPEN, as it is).
    if (!admitted) breaker?.admit('start');
    const roots = createRootsSettle(params);
    settle = roots;
    let next: UpstreamConnection | undefined;
    const attempt = createStartAttempt(breaker, () => closed);
    try {
      next = await begin(roots, attempt);
      const result = await composedHandshake(next, params, roots, handshakeTimeouts, logger, attempt.failed);
      settle = undefined;
      if (closed) throw unavailable(name, 'the session ended');
      // Only now may requests reach it: nothing goes to a server before its handshake.
      ready(next, result);
      attempt.succeeded();
      return next;
    } catch (err) {
      starting = undefined;
      await next?.close('start failed');
      observer.upstream(name, 'start-failed');
      const error = toGatewayError(err);
      attempt.ended(error);
      if (error.code === 'GW_INTERNAL') logger.error({ err, correlationId: error.details.correlationId }, 'upstream start failed');
      throw error.code === 'GW_TARGET_UNAVAILABLE' ? error : unavailable(name, error.message);
    }
  };

  /** Restarts with exponential backoff while the policy allows; uses wait on `opening`. */
  const restartWithBackoff = async (reason: GatewayError): Promise<UpstreamConnection> => {
    const limit = policy?.maxRestarts ?? 0;
    for (let restarts = starts - 1; !closed && restarts < limit; restarts = starts - 1) {
      const delay = backoffMs(policy, restarts);
      logger.warn({ restarts: restarts + 1, delayMs: delay, reason: reason.message }, 'restarting upstream');
      await new Promise((r) => setTimeout(r, delay));
      if (closed) break;
      try {
        return await open();
      } catch (err) {
        logger.warn({ err }, 'upstream restart failed');
      }
    }
    throw unavailable(name, `it could not be restarted: ${reason.message}`);
  };

  const onexit = (which: UpstreamConnection, reason: GatewayError) => {
    if (which !== connection || closed) return;
    connection = undefined;
    opening = undefined;
    observer.upstream(name, 'exit');
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
      const which = connection;
      const hung = health.timedOut(caller, probe);
      if (hung === undefined || which === undefined) return;
      logger.warn({ reason: hung.details.reason }, 'upstream stopped answering; its child is ended');
      onexit(which, hung);
      void which.close('it stopped answering');
    },
    get connection() {
      return connection;
    },
    get live() {
      return (connection ?? starting) !== undefined;
    },
    get capabilities() {
      return capabilities;
    },
    get instructions() {
      return instructions;
    },
    get failure() {
      return failure;
    },
    get transparent() {
      return clientInit !== undefined && !warmed;
    },
    connect() {
      if (connection !== undefined) return Promise.resolve(connection);
      if (closed || member.retired) return Promise.reject(unavailable(name, 'it was removed from the configuration'));
      if (failure !== undefined) return Promise.reject(failure);
      if (opening === undefined) {
        const warm = adopt(clientInit ?? options.initParams());
        if (warm !== undefined) return Promise.resolve(warm.connection);
        // No room for its child (the store's child caps), or its circuit is open: this use fails,
        // a later one may start it.
        try {
          breaker?.admit('start');
          options.reserveChild?.(target);
        } catch (err) {
          return Promise.reject(toGatewayError(err));
        }
      }
      opening ??= open(true).catch((err: unknown) => {
        opening = undefined;
        const error = toGatewayError(err);
        // A failed start is final unless the restart policy allows another attempt.
        if (!mayStartAgain()) failure = error;
        throw error;
      });
      return opening;
    },
    async openWith(request) {
      clientInit = isObject(request.params) ? structuredClone(request.params) : {};
      const warm = adopt(clientInit);
      if (warm !== undefined) {
        // Answered from the spare's own handshake; the client's `initialized` is not sent again.
        warmed = true;
        return { jsonrpc: '2.0', id: request.id, result: structuredClone(warm.result) };
      }
      breaker?.admit('start');
      options.reserveChild?.(target);
      const attempt = createStartAttempt(breaker, () => closed);
      let next: UpstreamConnection;
      try {
        next = await begin(undefined, attempt);
      } catch (err) {
        attempt.ended(toGatewayError(err));
        observer.upstream(name, 'start-failed');
        throw err;
      }
      // The client's initialize goes first and nothing else can arrive before its answer (the
      // session id is not out yet), so the connection is published at once.
      connection = next;
      starting = undefined;
      const answer = await askUpstream(next, request, handshakeTimeouts, logger, attempt.failed);
      const result = 'result' in answer ? answer.result : undefined;
      if (isObject(result) && !closed) {
        ready(next, result);
        attempt.succeeded();
      } else {
        attempt.ended();
      }
      return answer;
    },
    reply(response) {
      const to = connection ?? starting;
      if (to === undefined) return Promise.resolve();
      const sent = to.correlator.send(response);
      settle?.answered();
      return sent;
    },
    close(reason) {
      closed = true;
      const which = connection ?? starting;
      connection = undefined;
      starting = undefined;
      return which?.close(reason) ?? Promise.resolve();
    },
    async drain(reason) {
      member.retired = true;
      await connection?.correlator.idle();
      await member.close(reason);
    },
  };
  return member;
}
