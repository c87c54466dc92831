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
import { toErrorResponse, toGatewayError, type GatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import { LATEST_PROTOCOL_VERSION } from '../jsonrpc/versions.ts';
import { dropRawText } from '../jsonrpc/wire-text.ts';
import type { JsonObject, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { TargetConfig } from '../config/types.ts';
import { filterList, filters, restoreNames } from '../router/exposure.ts';
import { PASS_ALL } from '../router/glob.ts';
import type { PinGate } from '../governance/pin-gate.ts';
import type { Exposure } from '../router/list-merge.ts';
import type { Logger } from '../log/logger.ts';
import { createNameTable } from '../router/name-table.ts';
import { overrideInitialize } from '../router/overrides.ts';
import { createSessionCore } from './core.ts';
import type { CoreParts, Flavour, LocalAnswer, Pending } from './flavour.ts';
import { createMember, type Member } from './member.ts';
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
  const pins = options.pins?.(target);
  const logger = options.logger.child({ session: options.id, target: target.name });
  const core = coreOptionsOf(options, logger);
  const tables = { tools: createNameTable('__'), prompts: createNameTable('__') };
  return createSessionCore({ ...core, namespaced: false, tables }, (parts) => new SingleFlavour(options, parts, { exposure, pins, logger }));
}

/** The flavour: its state is the instance, its methods on the class (one copy for every session). */
class SingleFlavour implements Flavour {
  readonly parts: CoreParts;
  readonly logger: Logger;
  readonly exposure: Exposure;
  readonly pins: PinGate | undefined;
  readonly filtered: boolean;
  /** Anything to judge per request: filters, or pinning (off: the pass-through does no work for either). */
  readonly guarded: boolean;
  readonly member: Member;
  readonly list: readonly Member[];
  /** The params `open` composed the handshake from (replayed by a restart); undefined: the gateway's own. */
  composed: JsonObject | undefined = undefined;

  constructor(options: SingleSessionOptions, parts: CoreParts, { exposure, pins, logger }: { exposure: Exposure; pins: PinGate | undefined; logger: Logger }) {
    this.parts = parts;
    this.logger = logger;
    this.exposure = exposure;
    this.pins = pins;
    this.filtered = filters(exposure);
    this.guarded = this.filtered || pins !== undefined;
    this.member = createMember({
      target: options.target,
      exposure,
      pins,
      eager: true,
      // The supervisor names the target itself: from the session's logger it would twice.
      logger: options.logger.child({ session: options.id }),
      hooks: parts.hooks,
      services: options.services,
      initParams: () => this.composed ?? composedInit(),
      poolLogger: options.logger,
      caller: options.caller,
      reserveChild: options.reserveChild,
      restart: 'backoff',
    });
    this.list = [this.member];
  }

  members(): Iterable<Member> {
    return this.list;
  }

  async initialize(request: JsonRpcRequest): Promise<JsonRpcResponse> {
    const { parts, member, logger } = this;
    parts.opening(true);
    try {
      const answer = await member.openWith(request);
      const result = 'result' in answer ? answer.result : undefined;
      if (isObject(result) && typeof result.protocolVersion === 'string') {
        overrideInitialize(this.exposure.overrides, result);
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
  }

  async open(params: JsonObject): Promise<JsonObject> {
    const { parts, member } = this;
    this.composed = composedInit(params);
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
    overrideInitialize(this.exposure.overrides, result);
    parts.negotiated(typeof result.protocolVersion === 'string' ? result.protocolVersion : LATEST_PROTOCOL_VERSION);
    this.logger.info({ protocolVersion: result.protocolVersion, pid: member.connection?.pid }, 'session opened (composed handshake)');
    return result;
  }

  route(request: JsonRpcRequest): Member | Promise<LocalAnswer> {
    // Only resolution here (an override's name to the server's); the chain judges (chain/chain.ts).
    const exposure = this.exposure;
    const refuse = exposure.overrides === undefined ? undefined : restoreNames(request, exposure);
    return refuse === undefined ? this.member : Promise.resolve({ refuse });
  }

  answer(rec: Pending, response: JsonRpcResponse): JsonRpcResponse {
    // Pass-through: only the id changed, so a large answer's own text is forwarded (wire-text.ts).
    if (!this.guarded || !('result' in response) || !isObject(response.result)) return response;
    const hidden = this.filtered && filterList(rec.method, response.result, this.exposure);
    const withheld = this.pins !== undefined && withholdChanged(this.member, rec.method, response.result);
    if (hidden || withheld) dropRawText(response);
    return response;
  }

  memberExit(_member: Member, reason: GatewayError, final: boolean): void {
    // Not yet initialized, or no restart to come: the session ends (its next request gets 404).
    const { session } = this.parts;
    if (final || session.protocolVersion === undefined) void session.end(reason.message);
  }

  memberReady(): void {}
}
