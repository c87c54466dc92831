/**
 * Process groups of the stdio children this gateway spawned.
 *
 * Each child is spawned `detached`, which on POSIX makes it the leader of a new session and process
 * group (pgid = its pid). Signalling `-pid` then reaches everything it started that stayed in the
 * group (an `npx` wrapper and the real server, a shell and its pipeline), which is how grandchildren
 * die with their parent. POSIX only: on Windows `process.kill(-pid)` is not supported.
 */

const liveGroups = new Set<number>();

/**
 * Sends `signal` to the whole process group led by `pgid`. Returns false when the group no longer
 * exists (ESRCH) or may not be signalled (EPERM); anything else is a programming error and throws.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
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
}
