/**
 * The chain's part in 2025-11-25 tasks (tasks.ts): at the entrance, a `tools/call` with
 * `params.task` is marked as creating one, and a request naming a task (`tasks/get|result|cancel`)
 * must name one this session created on this target (else GW_UNKNOWN_TASK); on the way back, the
 * CreateTaskResult is remembered, a `tasks/result` is judged as the result of the call that made
 * it, and `tasks/list` shows only this session's tasks.
 *
 * On an aggregate (`namespaced`) task requests are SEP-2663's, routed by a sealed id that names
 * their member, caller and tool and judged again on that tool (../aggregate-tasks.ts); a completed
 * task's `tasks/get` carries the call's result inlined, so this stage marks it to be judged as that
 * `tools/call` (response hooks, redaction, audit), as a 2025-11-25 `tasks/result` is.
 */
import { GatewayError } from '../../errors/gateway-error.ts';
import { isObject } from '../../jsonrpc/envelope.ts';
import { dropRawText } from '../../jsonrpc/wire-text.ts';
import type { JsonObject, JsonRpcRequest, JsonRpcResponse } from '../../jsonrpc/types.ts';
import type { Pending } from '../flavour.ts';
import type { Member } from '../member.ts';
import { createTaskRegistry, sealedTaskOf, TASK_METHODS, type TaskOrigin, type TaskRegistry } from './tasks.ts';

/** How an answer is judged: as this method with these params; `inlined`: its `result.result` is. */
export interface JudgedAs {
  readonly method: string;
  readonly params: JsonObject | undefined;
  readonly inlined?: true;
}

/** tasks/list: answered with this session's tasks only (its `task` marks it). */
const LISTING: TaskOrigin = Object.freeze({ target: '', tool: '', params: undefined });

export interface TaskStage {
  /** The entrance's check (see the file comment); throws GW_UNKNOWN_TASK. */
  enter(rec: Pending, member: Member, request: JsonRpcRequest): void;
  /**
   * A marked request's answer (`rec.task` set): remembers, or filters; returns how a `tasks/result`
   * (or a SEP-2663 `tasks/get` with its result inlined: `inlined`) is judged, if it is one.
   */
  answered(rec: Pending, response: JsonRpcResponse): JudgedAs | undefined;
}

/** The session's task stage; its registry is made on the first task. */
export function createTaskStage(namespaced: boolean): TaskStage {
  let tasks: TaskRegistry | undefined;
  return {
    enter(rec, member, request) {
      if (namespaced) {
        const sealed = request.method === 'tasks/get' ? sealedTaskOf(request) : undefined;
        if (sealed !== undefined) {
          rec.task = sealed;
          rec.audited ??= { name: sealed.tool, started: performance.now() };
        }
        return;
      }
      const params = request.params;
      if (request.method === 'tools/call') {
        if (isObject(params?.task) && typeof params.name === 'string') rec.task = { target: member.name, tool: params.name, params };
        return;
      }
      if (request.method === 'tasks/list') {
        rec.task = LISTING;
        return;
      }
      if (!TASK_METHODS.has(request.method)) return;
      const taskId = params?.taskId;
      const origin = typeof taskId === 'string' ? tasks?.origin(taskId) : undefined;
      if (origin === undefined || origin.target !== member.name) throw new GatewayError('GW_UNKNOWN_TASK', undefined, { taskId: typeof taskId === 'string' ? taskId : null });
      if (request.method !== 'tasks/result') return;
      rec.task = origin;
      // Its audit line is the call's: what tool, on which target, how it ended.
      rec.audited ??= { name: origin.tool, started: performance.now() };
    },
    answered(rec, response) {
      const origin = rec.task as TaskOrigin;
      const result = 'result' in response && isObject(response.result) ? response.result : undefined;
      if (result === undefined) return undefined;
      if (origin.inlined) return isObject(result.result) ? { method: 'tools/call', params: origin.params as JsonObject | undefined, inlined: true } : undefined;
      if (rec.method === 'tools/call') {
        const task = result.task;
        if (isObject(task) && typeof task.taskId === 'string') (tasks ??= createTaskRegistry()).remember(task.taskId, origin);
        return undefined;
      }
      if (origin === LISTING) {
        const listed = result.tasks;
        if (Array.isArray(listed)) {
          result.tasks = listed.filter((t) => isObject(t) && typeof t.taskId === 'string' && tasks?.origin(t.taskId) !== undefined);
          // The list changed beyond its id: the kept line (jsonrpc/wire-text.ts) would list them all.
          dropRawText(response);
        }
        return undefined;
      }
      return { method: 'tools/call', params: origin.params as JsonObject | undefined };
    },
  };
}
