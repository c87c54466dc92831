/**
 * The tasks a session created (2025-11-25 task-augmented requests, SEP-1686): a `tools/call` with
 * `params.task` answers a CreateTaskResult, and the call's real result comes later through
 * `tasks/result`. That result is the call's: it passes the same response judgments (hooks,
 * redaction, audit) as the call would have (chain.ts). A `tasks/get`, `tasks/result` or
 * `tasks/cancel` naming a task this session did not create (unknown, another session's, another
 * principal's on a shared upstream, or forgotten) is refused: GW_UNKNOWN_TASK.
 *
 * Small and reusable on purpose: a registry per session, bounded (the oldest forgotten first),
 * keyed by the upstream's task id, remembering the target and the tool that created it.
 */

/** What created a task: its target and the call (the server's own tool name and the params it was sent with). */
export interface TaskOrigin {
  readonly target: string;
  readonly tool: string;
  readonly params: Readonly<Record<string, unknown>> | undefined;
  /** SEP-2663 (an aggregate's sealed task ids): the call's result comes inlined in `tasks/get`'s `result`. */
  readonly inlined?: true;
}

/**
 * What created the SEP-2663 task a routed `tasks/get` names: the aggregate's task routing opens the
 * sealed id (../aggregate-tasks.ts) and marks the request; the chain's task stage reads the mark.
 * Keyed by the request object, so nothing outlives it.
 */
const sealedOrigins = new WeakMap<object, TaskOrigin>();

export function markSealedTask(request: object, origin: TaskOrigin): void {
  sealedOrigins.set(request, origin);
}

export function sealedTaskOf(request: object): TaskOrigin | undefined {
  return sealedOrigins.get(request);
}

export interface TaskRegistry {
  /** Remembers `taskId` as created by `origin` (the oldest is forgotten past the bound). */
  remember(taskId: string, origin: TaskOrigin): void;
  /** What created `taskId` in this session; undefined: none of this session's tasks. */
  origin(taskId: string): TaskOrigin | undefined;
  readonly size: number;
}

/** Tasks remembered per session: far more than a client keeps running at once. */
export const MAX_TASKS_PER_SESSION = 1024;

export function createTaskRegistry(max = MAX_TASKS_PER_SESSION): TaskRegistry {
  const tasks = new Map<string, TaskOrigin>();
  return {
    remember(taskId, origin) {
      tasks.delete(taskId);
      tasks.set(taskId, origin);
      if (tasks.size > max) tasks.delete(tasks.keys().next().value as string);
    },
    origin: (taskId) => tasks.get(taskId),
    get size() {
      return tasks.size;
    },
  };
}

/** The task methods that name one task by `params.taskId`. */
export const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/result', 'tasks/cancel']);
