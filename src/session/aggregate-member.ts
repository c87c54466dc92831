/**
 * One target inside an aggregate session: its connection, opened lazily on first need (or at
 * initialize when eager), with its own initialize handshake carrying the downstream's clientInfo
 * and capabilities. A target that fails to start, or that goes away, fails only itself: every
 * later use gets GW_TARGET_UNAVAILABLE naming it, unless its restart policy allows a fresh start.
 */
import { GatewayError, toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, RequestId } from '../jsonrpc/types.ts';
import type { TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { Exposure } from '../router/list-merge.ts';
import type { PendingHandler } from '../upstream/correlator.ts';
import type { UpstreamConnection } from '../upstream/connection.ts';
import type { UpstreamFactory } from '../upstream/open.ts';
import { createRootsSettle, type RootsSettle } from './roots-settle.ts';
import { explainStartupFailure, handshakeTimeouts as startupTimeouts } from '../upstream/startup-deadline.ts';

/** What the aggregate session hears from a member. One object per session, not per message. */
export interface MemberHooks {
  onrequest(member: Member, request: JsonRpcRequest): void;
  onnotification(member: Member, notification: JsonRpcNotification): void;
  /** The connection went away unexpectedly (after a successful handshake). */
  onexit(member: Member, reason: GatewayError): void;
  /** Called once per successful handshake: the session learns capabilities and instructions. */
  onready(member: Member): void;
}

export interface MemberOptions {
  target: TargetConfig;
  exposure: Exposure;
  eager: boolean;
  logger: Logger;
  hooks: MemberHooks;
  /** The downstream's initialize params (protocolVersion already the negotiated one). */
  initParams: () => JsonObject;
  /** logging/setLevel the downstream asked for, replayed to a member opened later. */
  logLevel: () => string | undefined;
  /** The gateway's logger, for a shared child that outlives this session. */
  poolLogger: Logger;
  /** The downstream's Authorization, sent only to targets that opt in (forwardAuthorization). */
  authorization: string | undefined;
  /** See SessionSeed.reserveChild. */
  reserveChild?: ((target: TargetConfig) => void) | undefined;
  /** Opens its upstream connection. */
  open: UpstreamFactory;
}

export interface Member {
  readonly name: string;
  readonly target: TargetConfig;
  readonly exposure: Exposure;
  readonly eager: boolean;
  /** The ready connection, if open. */
  readonly connection: UpstreamConnection | undefined;
  /** A connection is open or starting (a child is alive, for stdio targets). */
  readonly live: boolean;
  /** From the target's initialize answer; undefined until its handshake is done. */
  readonly capabilities: JsonObject | undefined;
  readonly instructions: string | undefined;
  /** Why the target is unavailable; undefined while it can still be used. */
  readonly failure: GatewayError | undefined;
  /** Removed by a reload: finishes what is in flight, takes nothing new. */
  retired: boolean;
  /** The ready connection, opening it first if needed. Rejects with a GatewayError naming the target. */
  connect(): Promise<UpstreamConnection>;
  /**
   * Sends an answer to one of the member's own requests (roots, sampling...), also while it is
   * still starting: a server may ask for roots before its start is complete (roots-settle.ts).
   */
  reply(response: JsonRpcResponse): Promise<void>;
  /** Closes the connection (pending requests fail). Idempotent. */
  close(reason: string): Promise<void>;
  /** Closes once nothing is in flight. */
  drain(reason: string): Promise<void>;
}

const ownHandler: PendingHandler<{ resolve: (r: JsonRpcResponse) => void; clientId: RequestId; explain?: (e: GatewayError) => GatewayError }> = {
  onresponse(response, ctx) {
    ctx.resolve(response);
  },
  onerror(error, ctx) {
    ctx.resolve(toErrorResponse(ctx.clientId, ctx.explain?.(error) ?? error));
  },
};

function ignore(): void {}

/** GW_TARGET_UNAVAILABLE naming the target and why. */
export function unavailable(name: string, reason: string): GatewayError {
  return new GatewayError('GW_TARGET_UNAVAILABLE', `Target "${name}" is not available: ${reason}`, { target: name, reason });
}

export function createMember(options: MemberOptions): Member {
  const { target, exposure, eager, hooks } = options;
  const name = target.name;
  const logger = options.logger.child({ target: name });
  let connection: UpstreamConnection | undefined;
  let opening: Promise<UpstreamConnection> | undefined;
  let starting: UpstreamConnection | undefined;
  let failure: GatewayError | undefined;
  let capabilities: JsonObject | undefined;
  let instructions: string | undefined;
  let closed = false;
  let starts = 0;
  /** The roots exchange of the start under way, if any. */
  let settle: RootsSettle | undefined;

  /** The target's restart policy (`onExit: restart`, within `maxRestarts`) allows a fresh start. */
  const mayStartAgain = (): boolean => {
    // Not every kind of target has a restart policy (remote ones may not); none means no restart.
    const policy = 'restart' in target ? target.restart : undefined;
    return policy !== undefined && policy.onExit === 'restart' && starts <= policy.maxRestarts;
  };

  const handshakeTimeouts = startupTimeouts(target);

  const open = async (): Promise<UpstreamConnection> => {
    starts++;
    const next = options.open({ target, logger, poolLogger: options.poolLogger, authorization: options.authorization });
    const roots = createRootsSettle(options.initParams());
    settle = roots;
    next.correlator.onrequest = (request) => {
      if (settle === roots) roots.asked(request);
      hooks.onrequest(member, request);
    };
    next.correlator.onnotification = (notification) => hooks.onnotification(member, notification);
    next.onexit = (reason) => onexit(next, reason);
    starting = next;
    try {
      await next.start();
      const request: JsonRpcRequest = { jsonrpc: '2.0', id: 0, method: 'initialize', params: options.initParams() };
      const answer = await new Promise<JsonRpcResponse>((resolve) =>
        next.correlator.request(request, ownHandler, { resolve, clientId: 0, explain: (e) => explainStartupFailure(e, next, logger) }, handshakeTimeouts),
      );
      const result: unknown = 'result' in answer ? answer.result : undefined;
      if (!isObject(result)) throw unavailable(name, `initialize refused: ${JSON.stringify(answer.error ?? answer)}`);
      await next.correlator.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      await roots.settled();
      settle = undefined;
      if (closed) throw unavailable(name, 'the session ended');
      const caps: JsonObject = isObject(result.capabilities) ? result.capabilities : {};
      capabilities = caps;
      instructions = typeof result.instructions === 'string' ? result.instructions : undefined;
      // Only now may requests reach it: nothing goes to a server before its handshake.
      connection = next;
      starting = undefined;
      const level = options.logLevel();
      if (level !== undefined && caps.logging !== undefined) {
        const setLevel: JsonRpcRequest = { jsonrpc: '2.0', id: 0, method: 'logging/setLevel', params: { level } };
        next.correlator.request(setLevel, ownHandler, { resolve: ignore, clientId: 0 }, target.timeouts);
      }
      logger.info({ pid: next.pid }, 'aggregate member ready');
      hooks.onready(member);
      return next;
    } catch (err) {
      starting = undefined;
      await next.close('start failed');
      const error = toGatewayError(err);
      if (error.code === 'GW_INTERNAL') logger.error({ err, correlationId: error.details.correlationId }, 'member start failed');
      throw error.code === 'GW_TARGET_UNAVAILABLE' ? error : unavailable(name, error.message);
    }
  };

  const onexit = (which: UpstreamConnection, reason: GatewayError) => {
    if (which !== connection || closed) return;
    connection = undefined;
    opening = undefined;
    if (mayStartAgain()) {
      logger.warn({ reason: reason.message }, 'aggregate member exited; it restarts on next use');
    } else {
      failure = unavailable(name, reason.message);
      logger.warn({ reason: reason.message }, 'aggregate member exited; unavailable for the rest of the session');
    }
    hooks.onexit(member, reason);
  };

  const member: Member = {
    name,
    target,
    exposure,
    eager,
    retired: false,
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
    connect() {
      if (connection !== undefined) return Promise.resolve(connection);
      if (closed || member.retired) return Promise.reject(unavailable(name, 'it was removed from the configuration'));
      if (failure !== undefined) return Promise.reject(failure);
      if (opening === undefined) {
        // No room for its child (the store's child caps): this use fails, a later one may start it.
        try {
          options.reserveChild?.(target);
        } catch (err) {
          return Promise.reject(toGatewayError(err));
        }
      }
      opening ??= open().catch((err: unknown) => {
        opening = undefined;
        const error = toGatewayError(err);
        // A failed start is final unless the restart policy allows another attempt.
        if (!mayStartAgain()) failure = error;
        throw error;
      });
      return opening;
    },
    reply(response) {
      const target = connection ?? starting;
      if (target === undefined) return Promise.resolve();
      const sent = target.correlator.send(response);
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
