/**
 * Process groups of the stdio children this gateway spawned.
 *
 * Each child is spawned `detached`, which on POSIX makes it the leader of a new session and process
 * group (pgid = its pid). Signalling `-pid` then reaches everything it started that stayed in the
 * group (an `npx` wrapper and the real server, a shell and its pipeline), which is how grandchildren
 * die with their parent. POSIX only: on Windows `process.kill(-pid)` is not supported.
 */
import type { Logger } from '../log/logger.ts';
import { killAllEscapeesNow } from './escapees.ts';

const liveGroups = new Set<number>();

/**
 * Sends `signal` to the whole process group led by `pgid`. Returns false when the group no longer
 * exists (ESRCH) or may not be signalled (EPERM); anything else is a programming error and throws.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    // Windows has no process groups to signal; the leader alone is the best it offers (untested).
    process.kill(process.platform === 'win32' ? pgid : -pgid, signal);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH' || code === 'EPERM') return false;
    throw err;
  }
}

/** Records a group as live so `killAllChildrenNow` can reach it. */
export function registerGroup(pgid: number): void {
  liveGroups.add(pgid);
}

/**
 * Forgets a group. Call it as soon as its leader has exited and the group got its final SIGKILL:
 * once every member is gone the number may be reused by an unrelated process group.
 */
export function unregisterGroup(pgid: number): void {
  liveGroups.delete(pgid);
}

/** Process groups spawned by this process whose leader has not been seen to exit. */
export function liveGroupIds(): number[] {
  return [...liveGroups];
}

/**
 * Synchronously SIGKILLs every live process group this process spawned. Meant for
 * `process.on('exit')`, where nothing asynchronous runs any more: without it, children of a gateway
 * that exits abruptly would be orphaned, since they lead their own sessions and get no SIGHUP.
 */
export function killAllChildrenNow(): void {
  for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL');
  liveGroups.clear();
  killAllEscapeesNow();
}

export interface StopGroupOptions {
  /** Leader pid, which is also the process group id. */
  pgid: number;
  /** Settles when the leader has exited. */
  exited: Promise<void>;
  /** Wait after closing input, and again after SIGTERM, before escalating (ms). */
  graceMs: number;
  /** Asks politely: closes the child's stdin (MCP stdio servers exit on EOF). */
  closeInput: () => void;
  logger: Logger;
}

/**
 * The stdio shutdown sequence (PROTOCOL.md "stdio upstreams", as the MCP SDK does it): close
 * stdin and wait a grace, then SIGTERM the group and wait again, then SIGKILL the group. Resolves
 * true once the leader has exited, false if even SIGKILL did not make it exit within a grace (a
 * process stuck in the kernel); the caller then stops waiting but keeps the group registered.
 * Stragglers left in the group after the leader exits are the caller's to SIGKILL.
 */
export async function stopGroup(options: StopGroupOptions): Promise<boolean> {
  const { pgid, exited, graceMs, logger } = options;
  options.closeInput();
  if (await settlesWithin(exited, graceMs)) return true;
  logger.info({ graceMs }, 'upstream still running after stdin closed; sending SIGTERM to its group');
  signalGroup(pgid, 'SIGTERM');
  if (await settlesWithin(exited, graceMs)) return true;
  logger.warn({ graceMs }, 'upstream ignored SIGTERM; sending SIGKILL to its group');
  signalGroup(pgid, 'SIGKILL');
  if (await settlesWithin(exited, graceMs)) return true;
  logger.error({ graceMs }, 'upstream did not exit after SIGKILL');
  return false;
}

async function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([promise.then(() => true), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
