/**
 * An aggregate session: one downstream peer, many targets behind one URL. The session core
 * (core.ts) with one member per target, opened when the session first needs it, and this flavour:
 * the gateway answers initialize itself, merges the lists, answers ping, fans logging/setLevel out,
 * and routes every other request to the target that owns the name or URI, with the original
 * restored; a member's answer gets its URIs encoded.
 *
 * Id spaces: a target's ids are rewritten by its own correlator; server->client requests of every
 * target get numbers from one session-wide counter (server-messages.ts), so two targets asking at
 * once cannot collide, and each answer goes back to the target that asked.
 */
import { toErrorResponse, toGatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { isListMethod } from '../router/list-merge.ts';
import { createNameTable } from '../router/name-table.ts';
import { encodeResultUris } from '../router/result-uris.ts';
import { dropRawText } from '../jsonrpc/wire-text.ts';
import { listPage, type ListContext } from './aggregate-lists.ts';
import { resolveRoute } from './aggregate-routing.ts';
import { encodeSkillAnswer, listSkills } from './aggregate-skills.ts';
import { listContextOf, local, openAggregate, reconfigureAggregate, setLevel, type AggregateSessionOptions, type AggregateState } from './aggregate-state.ts';
import { createTaskRouting, declaresTasks, isTaskMethod, type TaskRouting } from './aggregate-tasks.ts';
import { createDiscovery, type Discovery } from './aggregate-discovery.ts';
import { learn, learnerOf, type AggregateView, type Learner } from './aggregate-view.ts';
import { createSessionCore } from './core.ts';
import type { CoreParts, Flavour, LocalAnswer, Pending } from './flavour.ts';
import type { Member } from './member.ts';
import type { Session } from './session.ts';
import { coreOptionsOf } from './store.ts';

export type { AggregateSessionOptions } from './aggregate-state.ts';

export interface AggregateSession extends Session {
  /** A config reload changed the endpoint's targets: add, drain and replace members. */
  reconfigure(view: AggregateView): void;
}

export function createAggregateSession(options: AggregateSessionOptions): AggregateSession {
  const logger = options.logger.child({ session: options.id, endpoint: options.endpoint });
  const tables = { tools: createNameTable(options.view.separator), prompts: createNameTable(options.view.separator) };
  let flavour: AggregateFlavour | undefined;
  const core = coreOptionsOf(options, logger);
  const session = createSessionCore({ ...core, namespaced: true, tables }, (parts) => (flavour = new AggregateFlavour(options, parts, tables)));
  return Object.assign(session, { reconfigure: (view: AggregateView) => flavour?.reconfigure(view) });
}

/**
 * The aggregate flavour. Its state is the instance (AggregateState); its methods are on the class,
 * one copy for every session; opening, setLevel and a reload are in aggregate-state.ts.
 */
class AggregateFlavour implements Flavour, AggregateState {
  readonly options: AggregateSessionOptions;
  readonly parts: CoreParts;
  readonly logger: Logger;
  readonly tables: ListContext['tables'];
  readonly learner: Learner;
  view: AggregateView;
  readonly byName = new Map<string, Member>();
  readonly leftOut = new Set<string>();
  initParams: JsonObject = {};
  logLevel: string | undefined = undefined;
  readonly ctx: ListContext;
  readonly discovery: Discovery;
  readonly tasks: TaskRouting;

  constructor(options: AggregateSessionOptions, parts: CoreParts, tables: ListContext['tables']) {
    this.options = options;
    this.parts = parts;
    this.logger = parts.logger;
    this.tables = tables;
    this.learner = learnerOf(options.caller);
    this.view = options.view;
    const { byName } = this;
    this.tasks = createTaskRouting(
      { ids: options.tasks, principal: options.caller.principal, gates: options.gates, member: (name) => byName.get(name), declared: () => declaresTasks(this.initParams.capabilities) },
      tables.tools,
    );
    this.ctx = listContextOf(this);
    this.discovery = createDiscovery(this.ctx, () => this.view.discovery);
  }

  members(): Iterable<Member> {
    return this.byName.values();
  }

  async initialize(request: JsonRpcRequest): Promise<JsonRpcResponse> {
    return { jsonrpc: '2.0', id: request.id, result: await openAggregate(this, isObject(request.params) ? request.params : {}) };
  }

  // The gateway answers the handshake itself either way: a client initialize is only its params.
  open(params: JsonObject): Promise<JsonObject> {
    return openAggregate(this, params);
  }

  async route(request: JsonRpcRequest): Promise<Member | LocalAnswer> {
    const { method } = request;
    const { view, discovery, ctx } = this;
    if (method === 'ping') return local({});
    if (view.discovery !== undefined && method === 'tools/list') return local(await discovery.list());
    if (isListMethod(method)) return local(await listPage(ctx, method, request.params));
    if (method === 'logging/setLevel') return setLevel(this, request);
    if (method === 'skills/list') return local(await listSkills(ctx, request.params));
    const meta = view.discovery !== undefined && method === 'tools/call' ? discovery.call(request) : undefined;
    if (meta !== undefined) return local(await meta);
    if (isTaskMethod(method)) {
      const routed = await this.tasks.route(request);
      return 'local' in routed ? local(routed.local) : routed;
    }
    return (await resolveRoute(ctx, request)).member;
  }

  unwrap(request: JsonRpcRequest): void {
    this.discovery.unwrap(request);
  }

  answer(rec: Pending, response: JsonRpcResponse): JsonRpcResponse {
    const result: unknown = 'result' in response ? response.result : undefined;
    if (rec.member !== undefined && isObject(result)) {
      encodeResultUris(rec.method, rec.member.name, result);
      try {
        // A skill the member's filters hide reads as an unknown one; a task the client did not negotiate fails the call.
        encodeSkillAnswer(rec.method, rec.member, result);
        this.tasks.shape(rec, rec.member, result);
      } catch (err) {
        return toErrorResponse(response.id, toGatewayError(err));
      }
    }
    // Its URIs may have changed: the kept wire text (if any) is no longer this answer.
    dropRawText(response);
    return response;
  }

  memberExit(member: Member): void {
    // Its items are gone from the lists (or will be those of a fresh start): say so once.
    this.tables.tools.forget(member.name);
    this.tables.prompts.forget(member.name);
    this.parts.messages.listChanged('tools', 'prompts', 'resources');
  }

  memberReady(member: Member): void {
    this.logger.info({ target: member.name, pid: member.connection?.pid }, 'aggregate member ready');
    learn(this.options.known, member.target, this.learner, { capabilities: member.capabilities ?? {}, instructions: member.instructions });
    // A slow starter was left out of a list the client already has: its items exist now.
    if (this.leftOut.delete(member.name)) this.parts.messages.listChanged('tools', 'prompts', 'resources');
  }

  reconfigure(next: AggregateView): void {
    reconfigureAggregate(this, next);
  }
}
