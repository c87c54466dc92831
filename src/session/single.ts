/**
 * A single-target session: the session core (core.ts) with one member and no renaming. It stays
 * transparent: the client's initialize goes to the upstream as it is and the upstream's answer
 * (serverInfo, instructions, capabilities, negotiated version) comes back as it is; every request
 * is forwarded, answers keep their own text (wire-text.ts). Only the target's filters and overrides,
 * when it has any, are applied: a hidden name is refused like an unknown one and left out of lists,
 * an overridden item is listed as the override says and its new name routed to the original.
 *
 * After an unexpected exit the upstream restarts at once with backoff (`onExit: restart`), the
 * client's initialize params replayed, while requests wait; when it cannot, the session ends.
 */
import { toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import { LATEST_PROTOCOL_VERSION } from '../jsonrpc/versions.ts';
import { dropRawText } from '../jsonrpc/wire-text.ts';
import type { JsonObject } from '../jsonrpc/types.ts';
import type { TargetConfig } from '../config/types.ts';
import { filterList, filters, restoreNames } from '../router/exposure.ts';
import { PASS_ALL } from '../router/glob.ts';
import type { PinGate } from '../governance/pin-gate.ts';
import type { Exposure } from '../router/list-merge.ts';
import { createNameTable } from '../router/name-table.ts';
import { overrideInitialize } from '../router/overrides.ts';
import { createSessionCore } from './core.ts';
import { createMember } from './member.ts';
import { coreOptionsOf, type SessionSeed } from './store.ts';
import type { Session } from './session.ts';
import { withholdChanged } from './pinning.ts';
import { GATEWAY_CLIENT_INFO } from './gateway-info.ts';

/** What the store gives every session (SessionSeed), and which target it passes through to. */
export interface SingleSessionOptions extends SessionSeed {
  /** See Session.endpoint. */
  endpoint: string;
  target: TargetConfig;
  /** Its filters (no prefix on its own path); none by default. */
  exposure?: Exposure;
}

const NO_FILTERS: Exposure = { prefix: '', tools: PASS_ALL, prompts: PASS_ALL, resources: PASS_ALL };

/** The handshake the gateway composes when no client initialize opened the upstream: its own, or the holder's (`open`). */
const composedInit = (params?: JsonObject): JsonObject => ({ capabilities: {}, clientInfo: { ...GATEWAY_CLIENT_INFO }, ...params, protocolVersion: LATEST_PROTOCOL_VERSION });

export function createSingleSession(options: SingleSessionOptions): Session {
  const { target } = options;
  const exposure = options.exposure ?? NO_FILTERS;
  const filtered = filters(exposure);
  const pins = options.pins?.(target);
  /** Anything to judge per request: filters, or pinning (off: the pass-through does no work for either). */
  const guarded = filtered || pins !== undefined;
  const logger = options.logger.child({ session: options.id, target: target.name });
  const core = coreOptionsOf(options, logger);
  const tables = { tools: createNameTable('__'), prompts: createNameTable('__') };
  return createSessionCore({ ...core, namespaced: false, tables }, (parts) => {
    /** The params `open` composed the handshake from (replayed by a restart); undefined: the gateway's own. */
    let composed: JsonObject | undefined;
    const member = createMember({
      target,
      exposure,
      pins,
      eager: true,
      // The supervisor names the target itself: from the session's logger it would twice.
      logger: options.logger.child({ session: options.id }),
      hooks: parts.hooks,
      services: options.services,
      initParams: () => composed ?? composedInit(),
      poolLogger: options.logger,
      caller: options.caller,
      reserveChild: options.reserveChild,
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
            overrideInitialize(exposure.overrides, result);
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
        // A copy: overrides of serverInfo and instructions are what the holder's clients see, not the member's record.
        const result: JsonObject = { ...(member.handshake ?? {}) };
        overrideInitialize(exposure.overrides, result);
        parts.negotiated(typeof result.protocolVersion === 'string' ? result.protocolVersion : LATEST_PROTOCOL_VERSION);
        logger.info({ protocolVersion: result.protocolVersion, pid: member.connection?.pid }, 'session opened (composed handshake)');
        return result;
      },
      route(request) {
        // Only resolution here (an override's name to the server's); the chain judges (chain/chain.ts).
        const refuse = exposure.overrides === undefined ? undefined : restoreNames(request, exposure);
        return refuse === undefined ? member : Promise.resolve({ refuse });
      },
      answer(rec, response) {
        // Pass-through: only the id changed, so a large answer's own text is forwarded (wire-text.ts).
        if (!guarded || !('result' in response) || !isObject(response.result)) return response;
        const hidden = filtered && filterList(rec.method, response.result, exposure);
        const withheld = pins !== undefined && withholdChanged(member, rec.method, response.result);
        if (hidden || withheld) dropRawText(response);
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
