/**
 * Helpers for tests that must prove no process is left behind. Linux only: they read /proc.
 *
 * A killed process whose parent does not reap it stays a zombie (state Z) and still answers
 * `kill(pid, 0)`; in containers PID 1 often does not reap orphans. A zombie runs no code and holds
 * no resources beyond its table entry, so these helpers count it as gone.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ProcStat {
  pid: number;
  /** Single-letter state: R, S, D, Z (zombie), T, X (dead)... */
  state: string;
  ppid: number;
  pgrp: number;
}

/** Parses /proc/<pid>/stat; undefined when the process does not exist (any more). */
export function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may itself contain spaces and ')'.
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  const [state, ppid, pgrp] = fields;
  if (state === undefined || ppid === undefined || pgrp === undefined) return undefined;
  return { pid, state, ppid: Number(ppid), pgrp: Number(pgrp) };
}

function allStats(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat !== undefined) stats.push(stat);
  }
  return stats;
}

const isRunning = (stat: ProcStat): boolean => stat.state !== 'Z' && stat.state !== 'X';

/** Whether `pid` exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && isRunning(stat);
}

/** Every living descendant of `pid` (children, their children...), found through ppid links. */
export function descendantsOf(pid: number): number[] {
  const stats = allStats().filter(isRunning);
  const found: number[] = [];
  let frontier = [pid];
  while (frontier.length > 0) {
    const parents = new Set(frontier);
    frontier = stats.filter((s) => parents.has(s.ppid)).map((s) => s.pid);
    found.push(...frontier);
  }
  return found;
}

/** Every living process whose process group is `pgid`. */
export function processGroupMembers(pgid: number): number[] {
  return allStats()
    .filter((s) => s.pgrp === pgid && isRunning(s))
    .map((s) => s.pid);
}

/**
 * Polls until none of `pids` is alive or `timeoutMs` passes. Resolves with the ones still alive
 * (empty when all are gone), so `expect(await waitUntilGone(...)).toEqual([])` names the survivors.
 */
export async function waitUntilGone(pids: readonly number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alive = pids.filter(isAlive);
    if (alive.length === 0 || Date.now() >= deadline) return alive;
    await sleep(20);
  }
}

/**
 * SIGKILLs `pid` and every living descendant, all found before the first signal (a killed parent's
 * children are re-parented and no longer found through it). For cleanup paths: pass or fail, a
 * test leaves nothing of what it started. Returns the pids it signalled.
 */
export function killTree(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  const pids = [pid, ...descendantsOf(pid)].filter(isAlive);
  for (const p of pids) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // Gone between the scan and the signal.
    }
  }
  return pids;
}

/** Living processes (this user's) whose environment holds `entry` (`NAME=value`), with their descendants. */
export function processesWithEnv(entry: string): number[] {
  const marked: number[] = [];
  for (const stat of allStats()) {
    if (!isRunning(stat)) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${stat.pid}/environ`, 'utf8');
    } catch {
      continue; // another user's process, or gone
    }
    if (environ.split('\0').includes(entry)) marked.push(stat.pid);
  }
  return [...new Set(marked.flatMap((pid) => [pid, ...descendantsOf(pid)]))];
}

/** `ps`-like line for a report: pid and command line. */
export function describeProcess(pid: number): string {
  try {
    return `${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()}`;
  } catch {
    return `${pid} (gone)`;
  }
}
