/**
 * What the soak test reads about the gateway process from /proc (Linux only): RSS, open file
 * descriptors, living descendants; and the least-squares line through its readings.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** VmRSS of `pid` in KiB; 0 when it is gone. */
export function rssKiB(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Entries of /proc/<pid>/fd: every descriptor the process holds (sockets, pipes, files). */
export function fdCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

/** Living (not zombie) descendants of `pid`, through ppid links. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' || state === 'X') continue;
      children.set(Number(ppid), [...(children.get(Number(ppid)) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  let frontier = [pid];
  while (frontier.length > 0) {
    frontier = frontier.flatMap((p) => children.get(p) ?? []);
    found.push(...frontier);
  }
  return found;
}

/** Least squares y = a + b x; `at(x)` on the line. Flat (slope 0) with fewer than two points. */
export function linearFit(points: ReadonlyArray<readonly [number, number]>): { slope: number; at(x: number): number } {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / (n || 1);
  const my = points.reduce((s, [, y]) => s + y, 0) / (n || 1);
  let sxx = 0;
  let sxy = 0;
  for (const [x, y] of points) {
    sxx += (x - mx) ** 2;
    sxy += (x - mx) * (y - my);
  }
  const slope = n < 2 || sxx === 0 ? 0 : sxy / sxx;
  return { slope, at: (x) => my + slope * (x - mx) };
}
