/**
 * A cgroup per limited stdio child (docs/security.md "Containment"): memory.max and pids.max hold
 * for the child and everything it starts, however it forks. Each child's cgroup sits under a
 * folder this gateway process owns (`switchboard-<pid>`, a child of its own cgroup) and is removed
 * when the child has ended. Where a controller is not offered or not writable, the target is
 * refused (CgroupError): a limit that does not hold is never silently dropped.
 *
 * Synchronous file operations on cgroupfs: a handful of tiny writes per spawn, only for targets
 * with limits.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { posix } from 'node:path';
import type { LimitsConfig } from '../config/types.ts';
import { locate, parseKeyedCounts, parseMountinfo, parseProcCgroup, type Controller, type Located } from './cgroup-paths.ts';

/** A limit that cannot be made to hold; `code` is short and safe for clients, the message is for the log. */
export class CgroupError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export interface LimitHit {
  limit: 'memoryMiB' | 'processes' | 'cpuSeconds';
  value: number;
  /** How often the kernel enforced it (OOM kills; refused forks; 1 for CPU time). */
  events: number;
}

export interface ChildCgroup {
  /** cgroup.procs files the child's first process writes its pid into. */
  readonly procsFiles: string[];
  /** The limits the kernel enforced on this child so far. */
  hits(): LimitHit[];
  /** Kills what is left in the cgroup and removes it (and the gateway's folder once empty). */
  remove(): Promise<void>;
}

let located: Map<Controller, Located | string> | undefined;

function where(controller: Controller): Located | string {
  if (located === undefined) {
    located = new Map();
    try {
      const mounts = parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8'));
      const own = parseProcCgroup(readFileSync('/proc/self/cgroup', 'utf8'));
      const v2 = mounts.find((mount) => mount.version === 2);
      const offered = v2 === undefined ? [] : readFileSync(posix.join(v2.mountPoint, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
      for (const c of ['memory', 'pids'] as const) located.set(c, locate(c, mounts, own, offered));
    } catch (error) {
      for (const c of ['memory', 'pids'] as const) located.set(c, `cgroups are not readable here (${(error as Error).message})`);
    }
  }
  return located.get(controller) as Located | string;
}

const parentName = `switchboard-${process.pid}`;

/** v2: a controller reaches a cgroup's children only once its parent lists it in subtree_control. */
function enable(dir: string, controller: Controller): void {
  const control = posix.join(dir, 'cgroup.subtree_control');
  if (readFileSync(control, 'utf8').split(/\s+/).includes(controller)) return;
  try {
    writeFileSync(control, `+${controller}`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EBUSY' || !leaveOwnCgroup(dir)) throw error;
    writeFileSync(control, `+${controller}`);
  }
}

/**
 * v2's "no internal processes" rule: a cgroup holding processes cannot hand controllers to its
 * children. When the gateway is the only process in its own cgroup (a systemd service with
 * `Delegate=yes`, a container), it moves itself into a leaf `gateway` beside its children's
 * folder, as systemd's delegation guide describes; with other processes there, it does not.
 */
function leaveOwnCgroup(dir: string): boolean {
  const members = readFileSync(posix.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
  if (members.length !== 1 || members[0] !== String(process.pid)) return false;
  const leaf = posix.join(dir, 'gateway');
  mkdirSync(leaf, { recursive: true });
  writeFileSync(posix.join(leaf, 'cgroup.procs'), String(process.pid));
  return true;
}

function prepare(controller: Controller, name: string): { dir: string; version: 1 | 2 } {
  const place = where(controller);
  const limit = controller === 'memory' ? 'limits.memoryMiB' : 'limits.processes';
  if (typeof place === 'string') throw new CgroupError(`${limit} needs cgroups`, `${limit} needs the cgroup ${controller} controller: ${place}`);
  const parent = posix.join(place.ownDir, parentName);
  const dir = posix.join(parent, name);
  try {
    if (place.version === 2) {
      enable(place.ownDir, controller);
      mkdirSync(parent, { recursive: true });
      enable(parent, controller);
    }
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new CgroupError(
      `${limit} needs a writable cgroup`,
      `${limit} needs a writable cgroup ${controller} controller under ${place.ownDir} (cgroup v${place.version}): ${code}` +
        (place.version === 2 && code === 'EBUSY' ? ' (the gateway\'s own cgroup holds other processes too: see docs/security.md "Containment")' : ''),
    );
  }
  return { dir, version: place.version };
}

function write(dir: string, file: string, value: string, optional = false): void {
  try {
    writeFileSync(posix.join(dir, file), value);
  } catch (error) {
    if (optional) return;
    throw new CgroupError('limits could not be set', `cannot write ${file} in ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

function readCount(dir: string, file: string, key: string): number {
  try {
    return parseKeyedCounts(readFileSync(posix.join(dir, file), 'utf8')).get(key) ?? 0;
  } catch {
    return 0;
  }
}

/** Creates the cgroups `limits` need (none: undefined) for the child named `name`. Throws CgroupError. */
export function createChildCgroup(name: string, limits: LimitsConfig | undefined): ChildCgroup | undefined {
  const { memoryMiB, processes } = limits ?? {};
  if (memoryMiB === undefined && processes === undefined) return undefined;
  const dirs: string[] = [];
  const made: Array<() => LimitHit | undefined> = [];
  try {
    if (memoryMiB !== undefined) {
      const { dir, version } = prepare('memory', name);
      dirs.push(dir);
      const bytes = String(memoryMiB * 1024 * 1024);
      // No swap: a limit the child can swap past is no limit (the memsw file exists only with swap accounting).
      if (version === 2) write(dir, 'memory.max', bytes), write(dir, 'memory.swap.max', '0', true);
      else write(dir, 'memory.limit_in_bytes', bytes), write(dir, 'memory.memsw.limit_in_bytes', bytes, true);
      const [file, key] = version === 2 ? ['memory.events', 'oom_kill'] : ['memory.oom_control', 'oom_kill'];
      made.push(() => ({ limit: 'memoryMiB', value: memoryMiB, events: readCount(dir, file, key) }));
    }
    if (processes !== undefined) {
      const { dir } = prepare('pids', name);
      if (!dirs.includes(dir)) dirs.push(dir);
      write(dir, 'pids.max', String(processes));
      made.push(() => ({ limit: 'processes', value: processes, events: readCount(dir, 'pids.events', 'max') }));
    }
  } catch (error) {
    for (const dir of dirs) tryRmdir(dir);
    throw error;
  }
  return {
    procsFiles: dirs.map((dir) => posix.join(dir, 'cgroup.procs')),
    hits: () => made.map((read) => read()).filter((hit): hit is LimitHit => hit !== undefined && hit.events > 0),
    remove: () => removeAll(dirs),
  };
}

function tryRmdir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

function killMembers(dir: string): void {
  const kill = posix.join(dir, 'cgroup.kill');
  if (existsSync(kill)) write(dir, 'cgroup.kill', '1', true);
  let pids: string[] = [];
  try {
    pids = readFileSync(posix.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

/** 40 tries 25 ms apart: killed processes leave their cgroup within milliseconds, even on a loaded machine. */
async function removeAll(dirs: string[]): Promise<void> {
  for (const dir of dirs) {
    for (let attempt = 0; attempt < 40; attempt++) {
      killMembers(dir);
      if (tryRmdir(dir)) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    tryRmdir(posix.dirname(dir)); // the gateway's folder, once its last child is gone (busy otherwise)
  }
}
