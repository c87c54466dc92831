/**
 * Containment of one stdio child at spawn (docs/security.md "Containment"): finds bwrap, checks
 * the sandbox's paths, creates the child's cgroups, and says what to spawn (sandbox-args.ts), or
 * spawns it (spawnContained).
 * Anything that would make the child run less contained than configured throws a
 * ContainmentError instead: the target is refused, never started unsandboxed or unlimited.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import { findExecutable } from './executables.ts';
import type { Readable, Writable } from 'node:stream';
import type { StdioTargetConfig } from '../config/types.ts';
import { CgroupError, createChildCgroup, type ChildCgroup, type LimitHit } from './cgroups.ts';
import { containedSpawn } from './sandbox-args.ts';

export class ContainmentError extends Error {
  /** Short and safe for clients (no paths); the message has the detail for the log. */
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export interface ContainedChild {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cgroup: ChildCgroup | undefined;
}

/**
 * The files the child needs to see itself: the command (as given and resolved) and its folder,
 * and each argument that names an existing file (relative ones from `workdir`), at its given and
 * its real path. Bound read-only in every sandbox mode (sandbox-args.ts).
 */
function ownPaths(target: StdioTargetConfig, resolved: string | undefined, workdir: string): { commandDir: string | undefined; own: string[] } {
  const own = new Set<string>();
  const addFile = (path: string) => {
    try {
      if (!statSync(path).isFile()) return;
      own.add(path);
      own.add(realpathSync(path));
    } catch {
      // not a file (an option, a word, a URL): nothing to bind
    }
  };
  if (resolved !== undefined) addFile(resolved);
  for (const arg of target.args) if (arg !== '' && !arg.startsWith('-') && !arg.includes('\0')) addFile(resolve(workdir, arg));
  if (target.package?.dir !== undefined) own.add(target.package.dir);
  return { commandDir: resolved === undefined ? undefined : dirname(realpathSync(resolved)), own: [...own] };
}

/**
 * Each writable path as listed, resolved now: one that resolves elsewhere (a symlink on the way,
 * perhaps planted by another target's child in a folder both can write) is refused (issue 30 item 8).
 */
function checkWritable(paths: readonly string[]): void {
  for (const path of paths) {
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      throw new ContainmentError('sandbox: a listed path does not exist', `sandbox: ${path} does not exist`);
    }
    if (real !== resolve(path)) {
      throw new ContainmentError('sandbox: a writable path passes through a symlink', `sandbox: writable path ${path} resolves to ${real} (a symlink on the way): refused`);
    }
  }
}

/** What to spawn for `target` with environment `env`; the command itself when nothing contains it. */
export function containChild(target: StdioTargetConfig, env: NodeJS.ProcessEnv, name: string): ContainedChild {
  const { sandbox, limits } = target;
  // A runner target whose package is not installed runs nothing, never the runner (which would download).
  if (target.package?.error !== undefined) throw new ContainmentError(target.package.error.slice(0, 1000), `package: ${target.package.error}`);
  if (sandbox === undefined && limits === undefined) return { command: target.command, args: [...target.args], env, cgroup: undefined };
  if (process.platform !== 'linux') throw new ContainmentError('sandbox and limits need Linux', `sandbox and limits need Linux (this is ${process.platform})`);
  let sandboxInput;
  if (sandbox !== undefined) {
    const bwrap = findExecutable('bwrap', process.env.PATH);
    if (bwrap === undefined) throw new ContainmentError('sandbox: bwrap not found', 'sandbox: bubblewrap (bwrap) is not installed or not on the gateway\'s PATH (Debian: apt-get install bubblewrap)');
    for (const path of [...(sandbox.readable ?? []), ...(target.cwd === undefined ? [] : [target.cwd])]) {
      if (!existsSync(path)) throw new ContainmentError('sandbox: a listed path does not exist', `sandbox: ${path} does not exist`);
    }
    checkWritable(sandbox.writable);
    const home = typeof env.HOME === 'string' && isAbsolute(env.HOME) ? env.HOME : homedir();
    env = { ...env, HOME: home };
    const workdir = target.cwd ?? process.cwd();
    const found = findExecutable(target.command, env.PATH);
    const own = ownPaths(target, found === undefined ? undefined : resolve(workdir, found), workdir);
    sandboxInput = { config: sandbox, bwrap, paths: { home, cwd: target.cwd, workdir, ...own } };
  }
  let cgroup: ChildCgroup | undefined;
  try {
    cgroup = createChildCgroup(name, limits);
  } catch (error) {
    if (error instanceof CgroupError) throw new ContainmentError(error.code, error.message);
    throw error;
  }
  const spawnAs = containedSpawn({ command: target.command, args: target.args, sandbox: sandboxInput, limits, cgroupProcs: cgroup?.procsFiles ?? [] });
  return { ...spawnAs, env, cgroup };
}

export type ChildProc = ChildProcessByStdio<Writable, Readable, Readable>;

/**
 * Spawns `target`'s child contained (containChild), without a shell and `detached`, so it leads
 * its own process group. Throws what containChild or spawn throws (spawn: synchronously for
 * invalid arguments, e.g. a NUL byte in the command), the child's cgroups removed first.
 */
export function spawnContained(target: StdioTargetConfig, env: NodeJS.ProcessEnv, tag: string): { proc: ChildProc; cgroup: ChildCgroup | undefined } {
  // Sandbox and limits refuse to start rather than run the child uncontained.
  const run = containChild(target, env, tag);
  try {
    const proc = spawn(run.command, run.args, {
      shell: false,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: run.env,
      ...(target.cwd === undefined ? {} : { cwd: target.cwd }),
      windowsHide: true,
    });
    return { proc, cgroup: run.cgroup };
  } catch (err) {
    void run.cgroup?.remove();
    throw err;
  }
}

/** SIGXCPU: the child itself, or bwrap passing on its child's death (128 + 24). */
const XCPU_EXIT_CODE = 152;

/** The limits a contained child that ended hit, by name (for the log). */
export function limitsHit(target: StdioTargetConfig, cgroup: ChildCgroup | undefined, code: number | null, signal: NodeJS.Signals | null): LimitHit[] {
  const hits = cgroup?.hits() ?? [];
  const cpu = target.limits?.cpuSeconds;
  if (cpu !== undefined && (signal === 'SIGXCPU' || code === XCPU_EXIT_CODE)) hits.push({ limit: 'cpuSeconds', value: cpu, events: 1 });
  return hits;
}
