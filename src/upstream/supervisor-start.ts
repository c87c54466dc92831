/**
 * How a supervised upstream (supervisor.ts) starts: a new connection spawned or dialled and wired
 * to the session's hooks, or a warm spare taken instead; the composed handshake; the restart with
 * exponential backoff after an exit. The supervisor keeps the state (`SupervisedState`) and the
 * member the session sees; this module moves that state through a start.
 */
import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcNotification, JsonRpcRequest } from '../jsonrpc/types.ts';
import type { RestartPolicy, TargetConfig, TimeoutPolicy } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { stderrOf, type Observer } from '../log/observer.ts';
import type { UpstreamConnection } from './connection.ts';
import type { CircuitBreaker } from './circuit-breaker.ts';
import type { ConnectionHealth } from './connection-health.ts';
import { composedHandshake, replayLogLevel, unavailable } from './handshake.ts';
import { createRootsSettle, type RootsSettle } from './roots-settle.ts';
import type { SpareSource, WarmChild } from './spares.ts';
import { backoffMs, countsForTarget, createStartAttempt, type StartAttempt } from './start-attempt.ts';
import { handshakeTimeouts as startupTimeouts } from './startup-deadline.ts';

/** Start failures a client acts on itself: not folded into GW_TARGET_UNAVAILABLE. */
const KEPT_AS_THEY_ARE: ReadonlySet<string> = new Set(['GW_TARGET_UNAVAILABLE', 'GW_CREDENTIAL_NOT_EXCHANGEABLE', 'GW_UPSTREAM_AUTH_REQUIRED', 'GW_UPSTREAM_AUTH_FAILED']);

/** A supervised upstream's state, shared by its supervisor and its starts. */
export interface SupervisedState {
  /** The ready connection, if open. */
  connection: UpstreamConnection | undefined;
  /** The connection being started (before its handshake is done), if any. */
  starting: UpstreamConnection | undefined;
  capabilities: JsonObject | undefined;
  instructions: string | undefined;
  /** The last handshake's initialize result as the upstream gave it (serverInfo, protocolVersion, ...). */
  handshake: JsonObject | undefined;
  /** The client's own initialize params (openWith), replayed by a restart. */
  clientInit: JsonObject | undefined;
  closed: boolean;
  starts: number;
  /** The roots exchange of the start under way, if any. */
  settle: RootsSettle | undefined;
}

/** What a start needs from its supervisor; the hooks are already bound to the member. */
export interface StartContext {
  target: TargetConfig;
  logger: Logger;
  observer: Observer;
  breaker: CircuitBreaker | undefined;
  health: ConnectionHealth;
  spares: SpareSource | undefined;
  /** A new, unstarted connection to the target with the session's identity (the upstream factory). */
  make(): UpstreamConnection;
  /** Params of a composed initialize (protocolVersion already the negotiated one). */
  initParams(): JsonObject;
  /** logging/setLevel the downstream asked for, replayed after each handshake. */
  logLevel(): string | undefined;
  onrequest(request: JsonRpcRequest): void;
  onnotification(notification: JsonRpcNotification): void;
  onready(): void;
  /** The supervisor's exit handling for `which` (supervisor.ts). */
  onexit(which: UpstreamConnection, reason: GatewayError): void;
}

export interface Starter {
  /** The target's restart policy (`onExit: restart`, within `maxRestarts`) allows a fresh start. */
  mayStartAgain(): boolean;
  begin(roots: RootsSettle | undefined, attempt: StartAttempt, spawned?: UpstreamConnection): Promise<UpstreamConnection>;
  ready(next: UpstreamConnection, result: JsonObject): void;
  adopt(params: JsonObject): WarmChild | undefined;
  /** The breaker admits a start, or refuses it (GW_CIRCUIT_OPEN) and ends `spawned`, a spare taken for it. */
  admitOrDrop(spawned: WarmChild | undefined): void;
  open(admitted?: boolean, taken?: WarmChild): Promise<UpstreamConnection>;
  restartWithBackoff(reason: GatewayError): Promise<UpstreamConnection>;
}

export function createStarter(ctx: StartContext, s: SupervisedState): Starter {
  return new Starting(ctx, s);
}

/** The starts of one supervised upstream; the state they move is the supervisor's `s`. */
class Starting implements Starter {
  readonly ctx: StartContext;
  readonly s: SupervisedState;
  readonly name: string;
  readonly handshakeTimeouts: TimeoutPolicy;
  readonly policy: RestartPolicy | undefined;

  constructor(ctx: StartContext, s: SupervisedState) {
    this.ctx = ctx;
    this.s = s;
    this.name = ctx.target.name;
    this.handshakeTimeouts = startupTimeouts(ctx.target);
    this.policy = 'restart' in ctx.target ? ctx.target.restart : undefined;
  }

  mayStartAgain(): boolean {
    const policy = this.policy;
    return policy !== undefined && policy.onExit === 'restart' && this.s.starts <= policy.maxRestarts;
  }

  /**
   * A new connection wired to the hooks, started (spawned or dialled), not yet handshaken; or
   * `spawned`, a spare taken uninitialized (spares.ts), wired the same way.
   */
  async begin(roots: RootsSettle | undefined, attempt: StartAttempt, spawned?: UpstreamConnection): Promise<UpstreamConnection> {
    const { ctx, s } = this;
    s.starts++;
    const next = spawned ?? ctx.make();
    if (spawned !== undefined) ctx.logger.debug({ pid: spawned.pid }, 'took a spawned spare');
    next.correlator.onrequest = (request) => {
      if (roots !== undefined && s.settle === roots) roots.asked(request);
      ctx.onrequest(request);
    };
    next.correlator.onnotification = (notification) => ctx.onnotification(notification);
    next.onexit = (reason) => {
      attempt.exited(reason);
      ctx.onexit(next, reason);
    };
    s.starting = next;
    try {
      if (spawned === undefined) await next.start();
    } catch (err) {
      s.starting = undefined;
      await next.close('start failed');
      throw err;
    }
    return next;
  }

  /** Learns what the handshake said and lets requests through. */
  ready(next: UpstreamConnection, result: JsonObject): void {
    const { ctx, s } = this;
    const caps: JsonObject = isObject(result.capabilities) ? result.capabilities : {};
    s.capabilities = caps;
    s.instructions = typeof result.instructions === 'string' ? result.instructions : undefined;
    s.handshake = result;
    s.connection = next;
    s.starting = undefined;
    ctx.health.reset();
    replayLogLevel(next, ctx.logLevel(), caps, ctx.target.timeouts);
    ctx.observer.upstream(this.name, s.starts > 1 ? 'restart' : 'start');
    ctx.onready();
  }

  /**
   * A warm spare for `params`: an initialized one that fits is wired in as if this start had made
   * it (its handshake is done, the breaker heard it); a spawned one is returned as it is, for the
   * caller to `begin` with (in the same turn: its exit is the spares' until then); undefined when
   * there is none. Synchronous: it counts as this session's child at once.
   */
  adopt(params: JsonObject): WarmChild | undefined {
    const { ctx, s } = this;
    const warm = s.closed ? undefined : ctx.spares?.take(ctx.target, params);
    if (warm === undefined) return undefined;
    if (warm.result === undefined) {
      ctx.logger.debug({ pid: warm.connection.pid, kind: 'spawned' }, 'took a warm spare');
      return warm;
    }
    const next = warm.connection;
    s.starts++;
    next.correlator.onrequest = (request) => ctx.onrequest(request);
    next.correlator.onnotification = (notification) => ctx.onnotification(notification);
    next.onexit = (reason) => ctx.onexit(next, reason);
    ctx.logger.debug({ pid: next.pid }, 'took a warm spare');
    this.ready(next, warm.result);
    return warm;
  }

  /** The composed handshake: a first open, or a restart (replaying the client's params if it had its own). */
  async open(admitted = false, taken?: WarmChild): Promise<UpstreamConnection> {
    const { ctx, s, name } = this;
    const params = s.clientInit ?? ctx.initParams();
    const warm = taken ?? this.adopt(params);
    if (warm?.result !== undefined) return warm.connection;
    // An open circuit refuses before anything is spawned or dialled (GW_CIRCUIT_OPEN, as it is).
    if (!admitted) this.admitOrDrop(warm);
    const roots = createRootsSettle(params);
    s.settle = roots;
    let next: UpstreamConnection | undefined;
    const attempt = createStartAttempt(ctx.breaker, () => s.closed, countsForTarget(ctx.target));
    try {
      next = await this.begin(roots, attempt, warm?.connection);
      const result = await composedHandshake(next, params, roots, this.handshakeTimeouts, ctx.logger, attempt.failed);
      s.settle = undefined;
      if (s.closed) throw unavailable(name, 'the session ended');
      // Only now may requests reach it: nothing goes to a server before its handshake.
      this.ready(next, result);
      attempt.succeeded();
      return next;
    } catch (err) {
      s.starting = undefined;
      await next?.close('start failed');
      ctx.observer.upstream(name, 'start-failed', stderrOf(err));
      const error = toGatewayError(err);
      attempt.ended(error);
      if (error.code === 'GW_INTERNAL') ctx.logger.error({ err, correlationId: error.details.correlationId }, 'upstream start failed');
      // The caller's own credential, or an account the caller must connect first (oauth.perUser), is not the target's failure: said as it is.
      throw KEPT_AS_THEY_ARE.has(error.code) ? error : unavailable(name, error.message, error);
    }
  }

  /** The breaker admits a start, or refuses it (GW_CIRCUIT_OPEN) and a spawned spare taken for it is ended. */
  admitOrDrop(spawned: WarmChild | undefined): void {
    try {
      this.ctx.breaker?.admit('start');
    } catch (err) {
      void spawned?.connection.close('its circuit is open');
      throw err;
    }
  }

  /** Restarts with exponential backoff while the policy allows; uses wait on the supervisor's `opening`. */
  async restartWithBackoff(reason: GatewayError): Promise<UpstreamConnection> {
    const { s, policy } = this;
    const logger = this.ctx.logger;
    const limit = policy?.maxRestarts ?? 0;
    for (let restarts = s.starts - 1; !s.closed && restarts < limit; restarts = s.starts - 1) {
      const delay = backoffMs(policy, restarts);
      logger.warn({ restarts: restarts + 1, delayMs: delay, reason: reason.message }, 'restarting upstream');
      await new Promise((r) => setTimeout(r, delay));
      if (s.closed) break;
      try {
        return await this.open();
      } catch (err) {
        logger.warn({ err }, 'upstream restart failed');
      }
    }
    throw unavailable(this.name, `it could not be restarted: ${reason.message}`);
  }
}
