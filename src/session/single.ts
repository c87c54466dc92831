/**
 * A single-target session: the session core (core.ts) with one member and no renaming. It stays
 * transparent: the client's initialize goes to the upstream as it is and the upstream's answer
 * (serverInfo, instructions, capabilities, negotiated version) comes back as it is; every request
 * is forwarded, answers keep their own text (wire-text.ts). Only the target's filters, when it has
 * any, are applied: a hidden name is refused like an unknown one and left out of lists.
 *
 * After an unexpected exit the upstream restarts at once with backoff (`onExit: restart`), the
 * client's initialize params replayed, while requests wait; when it cannot, the session ends.
 */
import { toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import { LATEST_PROTOCOL_VERSION } from '../jsonrpc/versions.ts';
import { dropRawText } from '../jsonrpc/wire-text.ts';
import type { JsonObject } from '../jsonrpc/types.ts';
import type { GatewayConfig, TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { filterList, filters, hiddenNamed } from '../router/exposure.ts';
import { PASS_ALL } from '../router/glob.ts';
import type { Exposure } from '../router/list-merge.ts';
import { createNameTable } from '../router/name-table.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import type { Breakers } from '../upstream/breakers.ts';
import type { UpstreamFactory } from '../upstream/open.ts';
import type { SpareSource } from '../upstream/spares.ts';
import type { InflightBudget } from './inflight.ts';
import { createSessionCore } from './core.ts';
import { createMember } from './member.ts';
import type { Observer } from '../log/observer.ts';
import { coreOptionsOf, type DownstreamInfo } from './store.ts';
import type { ToolLimit } from './flavour.ts';
import type { Session, SessionCore } from './session.ts';
import { GATEWAY_CLIENT_INFO } from './gateway-info.ts';

export interface SingleSessionOptions {
  id: string;
  /** Where audit lines go (logging.audit); undefined: none. */
  audit?: Logger | undefined;
  /** See Session.endpoint. */
  endpoint: string;
  target: TargetConfig;
  /** Its filters (no prefix on its own path); none by default. */
  exposure?: Exposure;
  limits: GatewayConfig['limits'];
  logger: Logger;
  /** Called once when the session has ended, whatever ended it. */
  onended: (session: SessionCore) => void;
  /** What the downstream said about itself (its Authorization reaches opted-in remote targets). */
  downstream?: DownstreamInfo;
  /** See SessionSeed.reserveChild. */
  reserveChild?: (target: TargetConfig) => void;
  /** Opens its upstream connection (default: the real transports). */
  open: UpstreamFactory;
  /** The gateway's tracer; undefined: tracing off. */
  tracing?: Tracing | undefined;
  /** See SessionSeed.inflight and SessionSeed.breakers. */
  inflight?: InflightBudget | undefined;
  breakers?: Breakers | undefined;
  /** See SessionSeed.limitTool. */
  limitTool?: ToolLimit | undefined;
  /** Who hears about its requests and upstream (log/observer.ts); default: nobody. */
  observer?: Observer | undefined;
  /** See SessionSeed.spares. */
  spares?: SpareSource | undefined;
}

const NO_FILTERS: Exposure = { prefix: '', tools: PASS_ALL, prompts: PASS_ALL, resources: PASS_ALL };

/** The handshake the gateway composes when no client initialize opened the upstream: its own, or the holder's (`open`). */
const composedInit = (params?: JsonObject): JsonObject => ({ capabilities: {}, clientInfo: { ...GATEWAY_CLIENT_INFO }, ...params, protocolVersion: LATEST_PROTOCOL_VERSION });

export function createSingleSession(options: SingleSessionOptions): Session {
  const { target } = options;
  const exposure = options.exposure ?? NO_FILTERS;
  const filtered = filters(exposure);
  const logger = options.logger.child({ session: options.id, target: target.name });
  const core = coreOptionsOf(options, logger);
  const tables = { tools: createNameTable('__'), prompts: createNameTable('__') };
  return createSessionCore({ ...core, namespaced: false, tables }, (parts) => {
    /** The params `open` composed the handshake from (replayed by a restart); undefined: the gateway's own. */
    let composed: JsonObject | undefined;
    const member = createMember({
      target,
      exposure,
      eager: true,
      // The supervisor names the target itself: from the session's logger it would twice.
      logger: options.logger.child({ session: options.id }),
      hooks: parts.hooks,
      open: options.open,
      initParams: () => composed ?? composedInit(),
      poolLogger: options.logger,
      authorization: options.downstream?.authorization,
      principal: options.downstream?.principal,
      downstream: options.downstream,
      reserveChild: options.reserveChild,
      breaker: options.breakers?.of(target),
      observer: options.observer,
      spares: options.spares,
      restart: 'backoff',
    });
    const members = [member];
    return {
      members: () => members,
      async initialize(request) {
        parts.opening(true);
        try {
          const answer = await member.openWith(request);
          const result = 'result' in answer ? answer.result : undefined;
          if (isObject(result) && typeof result.protocolVersion === 'string') {
            parts.negotiated(result.protocolVersion);
            logger.info({ protocolVersion: result.protocolVersion, pid: member.connection?.pid }, 'session initialized');
          } else {
            await parts.session.end('initialize failed');
          }
          return answer;
        } catch (err) {
          const error = toGatewayError(err);
          if (error.code === 'GW_INTERNAL') logger.error({ err, correlationId: error.details.correlationId }, 'initialize failed');
          await parts.session.end('initialize failed');
          return toErrorResponse(request.id, error);
        } finally {
          parts.opening(false);
        }
      },
      async open(params) {
        composed = composedInit(params);
        parts.opening(true);
        try {
          await member.connect();
        } catch (err) {
          await parts.session.end('opening its upstream failed');
          throw err;
        } finally {
          parts.opening(false);
        }
        const result = member.handshake ?? {};
        parts.negotiated(typeof result.protocolVersion === 'string' ? result.protocolVersion : LATEST_PROTOCOL_VERSION);
        logger.info({ protocolVersion: result.protocolVersion, pid: member.connection?.pid }, 'session opened (composed handshake)');
        return result;
      },
      route(request) {
        if (!filtered) return member;
        const refuse = hiddenNamed(request, exposure);
        return refuse === undefined ? member : Promise.resolve({ refuse });
      },
      answer(rec, response) {
        // Pass-through: only the id changed, so a large answer's own text is forwarded (wire-text.ts).
        if (filtered && 'result' in response && isObject(response.result) && filterList(rec.method, response.result, exposure)) dropRawText(response);
        return response;
      },
      memberExit(_member, reason, final) {
        // Not yet initialized, or no restart to come: the session ends (its next request gets 404).
        if (final || parts.session.protocolVersion === undefined) void parts.session.end(reason.message);
      },
      memberReady() {},
    };
  });
}
