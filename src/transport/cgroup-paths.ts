/**
 * Where this process's cgroups are, for the controllers limits need (memory, pids). Pure: parses
 * /proc/self/mountinfo and /proc/self/cgroup text. cgroup v2 is preferred; a controller still
 * bound to a v1 hierarchy (a "hybrid" host) is used there.
 */
import { posix } from 'node:path';

export type Controller = 'memory' | 'pids';

export interface CgroupMount {
  mountPoint: string;
  /** The cgroup path the mount shows at its top (not "/" inside some cgroup namespaces). */
  root: string;
  version: 1 | 2;
  /** v1: the controllers bound to this hierarchy. */
  controllers: string[];
}

/** mountinfo unescapes spaces and the like as octal (`\040`). */
const unescape = (field: string): string => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));

export function parseMountinfo(text: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of text.split('\n')) {
    const [head, tail] = line.split(' - ');
    if (head === undefined || tail === undefined) continue;
    const fields = head.split(' ');
    const [fstype, , superOptions = ''] = tail.split(' ');
    const root = fields[3];
    const mountPoint = fields[4];
    if (root === undefined || mountPoint === undefined) continue;
    if (fstype === 'cgroup2') mounts.push({ mountPoint: unescape(mountPoint), root: unescape(root), version: 2, controllers: [] });
    else if (fstype === 'cgroup') mounts.push({ mountPoint: unescape(mountPoint), root: unescape(root), version: 1, controllers: superOptions.split(',') });
  }
  return mounts;
}

export interface ProcCgroup {
  /** The `0::` line's path. */
  v2: string | undefined;
  /** v1 controller -> path. */
  v1: Map<string, string>;
}

export function parseProcCgroup(text: string): ProcCgroup {
  const result: ProcCgroup = { v2: undefined, v1: new Map() };
  for (const line of text.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (match === null) continue;
    const [, id, controllers = '', path = ''] = match;
    if (id === '0' && controllers === '') result.v2 = path;
    else for (const controller of controllers.split(',')) result.v1.set(controller, path);
  }
  return result;
}

export interface Located {
  version: 1 | 2;
  /** This process's own cgroup folder in that hierarchy. */
  ownDir: string;
  /** The v2 mount's top folder (where cgroup.controllers lists what the kernel offers). */
  mountPoint: string;
}

function ownDir(mount: CgroupMount, path: string): string {
  const relative = mount.root !== '/' && (path === mount.root || path.startsWith(`${mount.root}/`)) ? path.slice(mount.root.length) : path;
  return posix.join(mount.mountPoint, relative).replace(/(.)\/$/, '$1');
}

/**
 * The hierarchy that has `controller`: v2 when `v2Controllers` (the v2 mount's cgroup.controllers)
 * lists it, else the v1 hierarchy it is bound to. A string says why there is none.
 */
export function locate(controller: Controller, mounts: CgroupMount[], own: ProcCgroup, v2Controllers: readonly string[]): Located | string {
  const v2 = mounts.find((mount) => mount.version === 2);
  if (v2 !== undefined && own.v2 !== undefined && v2Controllers.includes(controller)) {
    return { version: 2, ownDir: ownDir(v2, own.v2), mountPoint: v2.mountPoint };
  }
  const v1 = mounts.find((mount) => mount.version === 1 && mount.controllers.includes(controller));
  const path = own.v1.get(controller);
  if (v1 !== undefined && path !== undefined) return { version: 1, ownDir: ownDir(v1, path), mountPoint: v1.mountPoint };
  return `no cgroup hierarchy offers the ${controller} controller`;
}

/** "oom_kill 2" style lines (memory.events, memory.oom_control, pids.events) to a map. */
export function parseKeyedCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [key, value] = line.trim().split(/\s+/);
    if (key !== undefined && value !== undefined && /^\d+$/.test(value)) counts.set(key, Number(value));
  }
  return counts;
}
