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
import type { JsonObject, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { TargetConfig, TimeoutPolicy } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { stderrOf, type Observer } from '../log/observer.ts';
import type { UpstreamConnection } from './connection.ts';
import type { CircuitBreaker } from './circuit-breaker.ts';
import { createConnectionHealth, type ConnectionHealth } from './connection-health.ts';
import { askUpstream, unavailable } from './handshake.ts';
import { countsForTarget, createStartAttempt } from './start-attempt.ts';
import { createStarter, type Starter, type SupervisedState } from './supervisor-start.ts';
import type { SupervisedUpstream, SupervisorOptions } from './supervisor-types.ts';
import { handshakeTimeouts as startupTimeouts } from './startup-deadline.ts';

export type { SupervisedUpstream, SupervisorHooks, SupervisorOptions, UpstreamServices } from './supervisor-types.ts';

/** `extra`'s fields (the session's view of this upstream: exposure, ...) are part of the object the hooks get. */
export function createSupervisedUpstream<X extends object>(options: SupervisorOptions<SupervisedUpstream & X>, extra: X): SupervisedUpstream & X {
  return new Supervised(options, extra).self;
}

/**
 * The supervised upstream is its own state: the start's (SupervisedState, moved by
 * supervisor-start.ts) and whether it is opening, failed for good, or waiting for the caller's
 * account; its methods are on the class, one copy for every member of every session.
 */
class Supervised<X extends object> implements SupervisedUpstream {
  readonly name: string;
  readonly target: TargetConfig;
  retired = false;
  readonly breaker: CircuitBreaker | undefined;
  /** This object with `extra`'s fields: what the hooks get and the factory returns. */
  readonly self: SupervisedUpstream & X;
  private readonly options: SupervisorOptions<SupervisedUpstream & X>;
  private readonly logger: Logger;
  private readonly observer: Observer;
  private readonly handshakeTimeouts: TimeoutPolicy;
  private readonly s: SupervisedState = { connection: undefined, starting: undefined, capabilities: undefined, instructions: undefined, handshake: undefined, clientInit: undefined, closed: false, starts: 0, settle: undefined };
  private opening: Promise<UpstreamConnection> | undefined = undefined;
  private lost: GatewayError | undefined = undefined;
  /** The caller has yet to connect their own account here (oauth.perUser): shown as the failure, but the next use tries again. */
  private accountNeeded: GatewayError | undefined = undefined;
  /** The client's initialize was answered from a warm spare: it never went upstream. */
  private warmed = false;
  private readonly health: ConnectionHealth;
  private readonly starter: Starter;

  constructor(options: SupervisorOptions<SupervisedUpstream & X>, extra: X) {
    const { target, hooks, services } = options;
    this.options = options;
    this.target = target;
    this.name = target.name;
    this.breaker = services.breakers?.of(target);
    const logger = options.logger.child({ target: this.name });
    this.logger = logger;
    this.handshakeTimeouts = startupTimeouts(target);
    this.observer = services.observer;
    this.health = createConnectionHealth(target, this.breaker);
    const self = Object.assign(this, extra);
    this.self = self;
    this.starter = createStarter(
      {
        target,
        logger,
        observer: this.observer,
        breaker: this.breaker,
        health: this.health,
        spares: services.spares,
        make: () => services.open({ target, logger, poolLogger: options.poolLogger, caller: options.caller }),
        initParams: options.initParams,
        logLevel: () => options.logLevel?.(),
        onrequest: (request) => hooks.onrequest(self, request),
        onnotification: (notification) => hooks.onnotification(self, notification),
        onready: () => hooks.onready(self),
        onexit: (which, reason) => this.onexit(which, reason),
      },
      this.s,
    );
  }

  private onexit(which: UpstreamConnection, reason: GatewayError): void {
    const { s, name, logger, options, self } = this;
    const { hooks } = options;
    if (which !== s.connection || s.closed) return;
    s.connection = undefined;
    this.opening = undefined;
    this.observer.upstream(name, 'exit', stderrOf(reason));
    if (!this.starter.mayStartAgain()) {
      this.lost = unavailable(name, reason.message);
      logger.warn({ reason: reason.message }, 'upstream exited; unavailable for the rest of the session');
      hooks.onexit(self, reason, true);
      return;
    }
    if (options.restart === 'backoff') {
      const opening = this.starter.restartWithBackoff(reason);
      this.opening = opening;
      opening.catch((err: unknown) => {
        this.opening = undefined;
        const failure = toGatewayError(err);
        this.lost = failure;
        hooks.onexit(self, failure, true);
      });
    } else {
      logger.warn({ reason: reason.message }, 'upstream exited; it restarts on next use');
    }
    hooks.onexit(self, reason, false);
  }

  timedOut(caller: string, probe: boolean): void {
    // Its own child keeps timing out: ended as if it had exited (restarted or not, per policy).
    const which = this.s.connection;
    const hung = this.health.timedOut(caller, probe);
    if (hung === undefined || which === undefined) return;
    this.logger.warn({ reason: hung.details.reason }, 'upstream stopped answering; its child is ended');
    this.onexit(which, hung);
    void which.close('it stopped answering');
  }

  get connection(): UpstreamConnection | undefined {
    return this.s.connection;
  }
  get live(): boolean {
    return (this.s.connection ?? this.s.starting) !== undefined;
  }
  get capabilities(): JsonObject | undefined {
    return this.s.capabilities;
  }
  get instructions(): string | undefined {
    return this.s.instructions;
  }
  get handshake(): JsonObject | undefined {
    return this.s.handshake;
  }
  get failure(): GatewayError | undefined {
    return this.lost ?? this.accountNeeded;
  }
  get transparent(): boolean {
    return this.s.clientInit !== undefined && !this.warmed;
  }

  connect(): Promise<UpstreamConnection> {
    const { s, name, options, starter } = this;
    if (s.connection !== undefined) return Promise.resolve(s.connection);
    if (s.closed || this.retired) return Promise.reject(unavailable(name, 'it was removed from the configuration'));
    if (this.lost !== undefined) return Promise.reject(this.lost);
    let warm: ReturnType<Starter['adopt']>;
    if (this.opening === undefined) {
      warm = starter.adopt(s.clientInit ?? options.initParams());
      if (warm?.result !== undefined) return Promise.resolve(warm.connection);
      // No room for its child (the store's child caps), or its circuit is open: this use fails,
      // a later one may start it. A spawned spare taken is already counted: it needs no room.
      try {
        starter.admitOrDrop(warm);
        if (warm === undefined) options.reserveChild?.(this.target);
      } catch (err) {
        return Promise.reject(toGatewayError(err));
      }
    }
    this.opening ??= starter.open(true, warm).catch((err: unknown) => {
      this.opening = undefined;
      const error = toGatewayError(err);
      // A failed start is final unless the restart policy allows another attempt; a caller who has
      // not connected their own account yet (oauth.perUser) may do so and call again.
      if (error.code === 'GW_UPSTREAM_AUTH_REQUIRED') this.accountNeeded = error;
      else if (!starter.mayStartAgain()) this.lost = error;
      throw error;
    });
    return this.opening.then((connection) => {
      this.accountNeeded = undefined;
      return connection;
    });
  }

  async openWith(request: JsonRpcRequest): Promise<JsonRpcResponse> {
    const { s, starter, target } = this;
    s.clientInit = isObject(request.params) ? structuredClone(request.params) : {};
    const warm = starter.adopt(s.clientInit);
    if (warm?.result !== undefined) {
      // Answered from the spare's own handshake; the client's `initialized` is not sent again.
      this.warmed = true;
      return { jsonrpc: '2.0', id: request.id, result: structuredClone(warm.result) };
    }
    // A spawned spare (or a new child) hears the client's own initialize, as without spares.
    starter.admitOrDrop(warm);
    if (warm === undefined) this.options.reserveChild?.(target);
    const attempt = createStartAttempt(this.breaker, () => s.closed, countsForTarget(target));
    let next: UpstreamConnection;
    try {
      next = await starter.begin(undefined, attempt, warm?.connection);
    } catch (err) {
      attempt.ended(toGatewayError(err));
      this.observer.upstream(this.name, 'start-failed', stderrOf(err));
      throw err;
    }
    // The client's initialize goes first and nothing else can arrive before its answer (the
    // session id is not out yet), so the connection is published at once.
    s.connection = next;
    s.starting = undefined;
    const answer = await askUpstream(next, request, this.handshakeTimeouts, this.logger, attempt.failed);
    const result = 'result' in answer ? answer.result : undefined;
    if (isObject(result) && !s.closed) {
      starter.ready(next, result);
      attempt.succeeded();
    } else {
      attempt.ended();
    }
    return answer;
  }

  reply(response: JsonRpcResponse): Promise<void> {
    const to = this.s.connection ?? this.s.starting;
    if (to === undefined) return Promise.resolve();
    const sent = to.correlator.send(response);
    this.s.settle?.answered();
    return sent;
  }

  close(reason: string): Promise<void> {
    const { s } = this;
    s.closed = true;
    const which = s.connection ?? s.starting;
    s.connection = undefined;
    s.starting = undefined;
    return which?.close(reason) ?? Promise.resolve();
  }

  async drain(reason: string): Promise<void> {
    this.retired = true;
    await this.s.connection?.correlator.idle();
    await this.close(reason);
  }
}
