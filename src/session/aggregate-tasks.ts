/**
 * Tasks (SEP-2663) through an aggregate session. A member may answer a `tools/call` with a task
 * (`resultType: "task"`); its `taskId` is replaced by a sealed id (router/task-ids.ts) naming the
 * member, its own id, the caller and the tool. `tasks/get`, `tasks/update` and `tasks/cancel` are
 * routed by opening that id: no table, so the id survives the session that made it (a 2026 client
 * has no session). `tasks/result` and `tasks/list` were removed by the SEP and get -32601 like any
 * unknown method. A client that did not declare the extension is never handed a task (a member
 * doing so breaks the SEP's MUST NOT: the call fails) and its `tasks/*` get -32601: for it the
 * methods do not exist.
 *
 * A task's later requests are judged again on the tool that created it (the chain's entrance:
 * filters, policy, virtual picks; step-up; pinning), so a tool denied, stepped up or changed since
 * the call does not hand out its result. A completed task's result gets the `tools/call` answer's
 * URI encoding, and its inlined result is judged by the chain as the `tools/call` that created it
 * (response hooks, redaction, the audit line). What is not done here: `notifications/tasks/status`
 * from a member keep the member's own ids. Tasks are per replica: a stdio member's task lives in that
 * replica's child.
 */
import { GatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcRequest } from '../jsonrpc/types.ts';
import { serverName } from '../router/overrides.ts';
import { encodeResultUris } from '../router/result-uris.ts';
import type { TaskIds } from '../router/task-ids.ts';
import type { Principal } from '../upstream/caller.ts';
import type { ChainGates } from './chain/gates.ts';
import { enter } from './chain/entrance.ts';
import { markSealedTask } from './chain/tasks.ts';
import type { NameTable } from '../router/name-table.ts';
import type { Pending } from './flavour.ts';
import type { Member } from './member.ts';
import { checkCall } from './pinning.ts';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const ROUTED: ReadonlySet<string> = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

export function isTaskMethod(method: string): boolean {
  return ROUTED.has(method);
}

/** Whether client capabilities (an initialize's, or a 2026 request's) declare the extension. */
export function declaresTasks(capabilities: unknown): boolean {
  return isObject(capabilities) && isObject(capabilities.extensions) && isObject(capabilities.extensions[TASKS_EXTENSION]);
}

export interface TaskContext {
  readonly ids: TaskIds;
  readonly principal: Principal | undefined;
  readonly gates: ChainGates | undefined;
  member(name: string): Member | undefined;
  /** The client declared the extension. */
  declared(): boolean;
}

const principalOf = (ctx: TaskContext) => ctx.principal?.id ?? '';

/**
 * The member a task request goes to, its `taskId` replaced by the member's own; `{ local }` for an
 * acknowledgement the gateway gives itself (the SEP: update and cancel are acknowledged even for an
 * id that is no task).
 */
export async function routeTask(ctx: TaskContext, request: JsonRpcRequest): Promise<Member | { local: JsonObject }> {
  if (!ctx.declared()) throw new GatewayError('GW_METHOD_NOT_FOUND', `Method not found: ${request.method}`);
  const params = request.params;
  const token = params?.taskId;
  if (typeof token !== 'string') throw new GatewayError('GW_INVALID_PARAMS', 'Invalid params: taskId must be a string');
  const owner = ctx.ids.open(token);
  const member = owner === undefined ? undefined : ctx.member(owner.target);
  // Another caller's task is as unknown as a forged one.
  if (owner === undefined || member === undefined || owner.principal !== principalOf(ctx)) {
    if (request.method === 'tasks/get') throw new GatewayError('GW_INVALID_PARAMS', 'Invalid params: unknown task');
    return { local: {} };
  }
  const original = await judgeTool(ctx, member, owner.tool);
  (params as JsonObject).taskId = owner.task;
  // Its answer carries the call's result: the chain judges it as that call (chain/task-stage.ts).
  markSealedTask(request, { target: member.name, tool: original, params: { name: original }, inlined: true });
  return member;
}

/** The judgments of a call to `tool` (the client's name before the prefix), run again for its task; the server's own name. */
async function judgeTool(ctx: TaskContext, member: Member, tool: string): Promise<string> {
  const original = serverName(member.exposure.overrides, 'tools', tool);
  if (original === undefined) throw new GatewayError('GW_INVALID_PARAMS', 'Invalid params: unknown task');
  const call: JsonRpcRequest = { jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: original } };
  try {
    enter(call, member.exposure, tool);
  } catch {
    // Hidden since the call: the task is as unknown as the tool now is.
    throw new GatewayError('GW_INVALID_PARAMS', 'Invalid params: unknown task');
  }
  const need = ctx.gates?.stepUp?.(member.name, call, ctx.principal);
  if (need !== undefined) throw new GatewayError('GW_STEP_UP_REQUIRED', undefined, { requiredScopes: [...need.required] });
  if (member.pins !== undefined) await checkCall(member, call);
  return original;
}

/**
 * A member's answer to a routed request, in place: a `tools/call` task gets a sealed id (`tool`: the
 * client's name of the called tool), a task request's answer the id the client knows and, once
 * completed, the call result's URI encoding. Throws when a task reaches a client that did not ask.
 */
export function shapeTaskAnswer(ctx: TaskContext, method: string, member: Member, result: JsonObject, tool: string | undefined, clientTaskId: string | undefined): void {
  if (method === 'tools/call') {
    if (result.resultType !== 'task') return;
    if (!ctx.declared() || typeof result.taskId !== 'string' || tool === undefined) {
      throw new GatewayError('GW_UPSTREAM_INVALID_ANSWER', 'Upstream answered with a task the client did not negotiate (SEP-2663)', { target: member.name });
    }
    result.taskId = ctx.ids.seal({ target: member.name, task: result.taskId, principal: principalOf(ctx), tool });
    return;
  }
  if (method !== 'tasks/get') return;
  if (clientTaskId !== undefined && typeof result.taskId === 'string') result.taskId = clientTaskId;
  if (isObject(result.result)) encodeResultUris('tools/call', member.name, result.result);
}

/** Task ids a session keeps to answer `tasks/get` with the client's own id: at most this many. */
const MAX_REMEMBERED = 1_000;

export interface TaskRouting {
  route(request: JsonRpcRequest): Promise<Member | { local: JsonObject }>;
  /** Shapes a member's answer to `rec` (see shapeTaskAnswer); throws as it does. */
  shape(rec: Pending, member: Member, result: JsonObject): void;
}

/** Task routing of one aggregate session; `tools` its name table (to tell which tool a call named). */
export function createTaskRouting(ctx: TaskContext, tools: NameTable): TaskRouting {
  /** `<target>\0<member's id>` -> the client's id, newest last. */
  const known = new Map<string, string>();
  const remember = (key: string, token: string) => {
    known.delete(key);
    if (known.size >= MAX_REMEMBERED) known.delete(known.keys().next().value as string);
    known.set(key, token);
  };
  /** The client's name (before the prefix) of the tool `asked` names on `member`. */
  const toolOf = (asked: string | undefined, member: Member): string | undefined => {
    if (asked === undefined) return undefined;
    const owner = tools.resolve(asked);
    if (owner !== undefined) return owner.target === member.name ? owner.name : undefined;
    return tools.bare(asked).some((o) => o.target === member.name) ? asked : undefined;
  };
  return {
    async route(request) {
      const token = request.params?.taskId;
      const routed = await routeTask(ctx, request);
      if (!('local' in routed) && typeof token === 'string') remember(`${routed.name}\u0000${String(request.params?.taskId)}`, token);
      return routed;
    },
    shape(rec, member, result) {
      const upstreamId = typeof result.taskId === 'string' ? result.taskId : undefined;
      const clientId = upstreamId === undefined ? undefined : known.get(`${member.name}\u0000${upstreamId}`);
      shapeTaskAnswer(ctx, rec.method, member, result, toolOf(rec.asked, member), clientId);
      if (rec.method === 'tools/call' && result.resultType === 'task' && upstreamId !== undefined && typeof result.taskId === 'string') {
        remember(`${member.name}\u0000${upstreamId}`, result.taskId);
      }
    },
  };
}
