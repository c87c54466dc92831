/**
 * CPU time and memory of process trees, from /proc (Linux only). A system under test is a set of
 * root pids (the gateway, a separately started upstream); its cost is the sum over each root and
 * all its descendants, so per-session children count where a gateway spawns them.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();
const PAGE_KIB = (() => {
  try {
    return Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).trim()) / 1024 || 4;
  } catch {
    return 4;
  }
})();

interface Stat {
  ppid: number;
  /** utime + stime, ms. */
  cpuMs: number;
  rssKiB: number;
}

function statOf(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "(comm)": state is field 3, ppid 4, utime 14, stime 15, rss 24 (pages).
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return {
      ppid: Number(f[1]),
      cpuMs: ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK,
      rssKiB: Number(f[21]) * PAGE_KIB,
    };
  } catch {
    return undefined; // gone
  }
}

/** Every live pid with its parent (one scan of /proc). */
function snapshot(): Map<number, Stat> {
  const all = new Map<number, Stat>();
  for (const entry of readdirSync('/proc')) {
    const c = entry.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const pid = Number(entry);
    const stat = statOf(pid);
    if (stat !== undefined) all.set(pid, stat);
  }
  return all;
}

/** Roots and all their descendants. */
export function treeOf(roots: readonly number[], all = snapshot()): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, s] of all) {
    const list = children.get(s.ppid);
    if (list === undefined) children.set(s.ppid, [pid]);
    else list.push(pid);
  }
  const out: number[] = [];
  const queue = roots.filter((pid) => all.has(pid));
  while (queue.length > 0) {
    const pid = queue.pop() as number;
    out.push(pid);
    for (const child of children.get(pid) ?? []) queue.push(child);
  }
  return out;
}

export interface TreeUsage {
  /** CPU ms of the roots alone. */
  rootCpuMs: number;
  /** CPU ms of the roots and every descendant alive now. */
  treeCpuMs: number;
  rootRssKiB: number;
  treeRssKiB: number;
  processes: number;
}

/**
 * Usage now. CPU of descendants that exited between two readings is lost (a child's time moves
 * to its parent's cutime only when reaped): read before and after a phase in which none exits.
 */
export function usageOf(roots: readonly number[]): TreeUsage {
  const all = snapshot();
  const usage: TreeUsage = { rootCpuMs: 0, treeCpuMs: 0, rootRssKiB: 0, treeRssKiB: 0, processes: 0 };
  const rootSet = new Set(roots);
  for (const pid of treeOf(roots, all)) {
    const s = all.get(pid) as Stat;
    usage.treeCpuMs += s.cpuMs;
    usage.treeRssKiB += s.rssKiB;
    usage.processes++;
    if (rootSet.has(pid)) {
      usage.rootCpuMs += s.cpuMs;
      usage.rootRssKiB += s.rssKiB;
    }
  }
  return usage;
}

/** utime + stime of one process in ms (NaN once it is gone). */
export function cpuMsOf(pid: number): number {
  return statOf(pid)?.cpuMs ?? NaN;
}

/** Resident set of one process in KiB (NaN once it is gone). */
export function rssKiBOf(pid: number): number {
  return statOf(pid)?.rssKiB ?? NaN;
}

/** Live children of `ppid`. */
export function childrenOf(ppid: number): number[] {
  const out: number[] = [];
  for (const [pid, s] of snapshot()) if (s.ppid === ppid) out.push(pid);
  return out;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
