/**
 * The argument list that contains a stdio child (docs/security.md "Containment"). Pure: the
 * caller resolves paths and creates cgroups; this module only says what to run.
 *
 * The spawned process is `/bin/sh` when the child has limits: it joins the child's cgroups (its
 * own pid, before anything else runs, so nothing escapes the count), sets the rlimits, and
 * `exec`s the rest, keeping its pid (the process group leader the transport signals). With a
 * sandbox, the rest is `bwrap` and its mounts, then the command.
 */
import type { LimitsConfig, SandboxConfig } from '../config/types.ts';

/** System folders visible in a sandbox with a `readable` list; missing ones are skipped. */
export const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt'] as const;
/** Files of /etc that programs need to start and are no secret (no shadow, no keys). */
export const SYSTEM_ETC = [
  '/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/alternatives', '/etc/localtime',
  '/etc/nsswitch.conf', '/etc/passwd', '/etc/group', '/etc/ssl/openssl.cnf',
] as const;
/** Name resolution, only with the network. */
const NETWORK_ETC = ['/etc/resolv.conf', '/etc/hosts', '/etc/gai.conf', '/run/systemd/resolve'] as const;

export interface SandboxPaths {
  /** The child's home folder, replaced by an empty private one. */
  home: string;
  /** The child's working folder, if the target sets one: bound read-only. */
  cwd?: string | undefined;
  /** Where the child starts when the target sets no `cwd`: the gateway's own (created empty if hidden). */
  workdir?: string | undefined;
  /** The folder of the command (symlinks resolved). */
  commandDir?: string | undefined;
  /**
   * The child's own files, bound read-only where they are in every mode (issue 31): the command
   * as given, its script arguments that are files (as given and resolved), its package folder.
   */
  own?: readonly string[] | undefined;
}

/** Binding one of these (or a folder above them) would undo the private /tmp or home. */
function coversPrivate(path: string, home: string): boolean {
  const inside = (dir: string) => dir === path || dir.startsWith(path === '/' ? '/' : `${path}/`);
  return inside('/tmp') || (home !== '/' && inside(home));
}

/** bwrap's options for one child, before `--` and the command. */
export function bwrapArgs(sandbox: SandboxConfig, paths: SandboxPaths): string[] {
  // --cap-drop ALL: run as root, bwrap keeps every capability inside its user namespace, enough
  // to remount the read-only view writable (`mount -o remount,bind,rw /`) and write to the host.
  const args = ['--unshare-all', ...(sandbox.network ? ['--share-net'] : []), '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  if (sandbox.readable === undefined) {
    // Everything read-only; /run holds sockets (docker, dbus) that a read-only mount does not close.
    args.push('--ro-bind', '/', '/', '--tmpfs', '/run');
    if (sandbox.network) args.push('--ro-bind-try', '/run/systemd/resolve', '/run/systemd/resolve');
  } else {
    for (const dir of SYSTEM_DIRS) args.push('--ro-bind-try', dir, dir);
    for (const file of SYSTEM_ETC) args.push('--ro-bind-try', file, file);
    if (sandbox.network) for (const file of NETWORK_ETC) args.push('--ro-bind-try', file, file);
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  if (paths.home !== '/' && paths.home !== '/tmp') args.push('--tmpfs', paths.home);
  // Later mounts cover earlier ones: listed paths show through the private /tmp and home.
  for (const path of sandbox.readable ?? []) args.push('--ro-bind', path, path);
  // The child can always see itself (its command, scripts, package and working folder), wherever they live.
  const own = [paths.commandDir, ...(paths.own ?? []), paths.cwd].filter((path): path is string => path !== undefined && !coversPrivate(path, paths.home));
  for (const path of new Set(own)) args.push('--ro-bind', path, path);
  for (const path of sandbox.writable) args.push('--bind', path, path);
  const workdir = paths.cwd ?? paths.workdir;
  // A hidden working folder exists, empty, so the child starts where it would have (relative paths as outside).
  if (workdir !== undefined && workdir !== paths.cwd) args.push('--dir', workdir);
  // With a `readable` list the root is bwrap's own tmpfs: read-only too, so nothing is written but where listed.
  if (sandbox.readable !== undefined) args.push('--remount-ro', '/');
  if (workdir !== undefined) args.push('--chdir', workdir);
  return args;
}

/** The paths the sandbox binds that must exist (bwrap would fail on a missing one). */
export function requiredPaths(sandbox: SandboxConfig, cwd: string | undefined): string[] {
  return [...(sandbox.readable ?? []), ...sandbox.writable, ...(cwd === undefined ? [] : [cwd])];
}

/**
 * The shell wrapper's script. `$1`... up to `--` are cgroup.procs files to write our pid into;
 * then the rlimits (validated integers, so safe in the text); then `exec` of the rest. Exit 125
 * (with a line on stderr) when a step fails: the child never runs without its limits.
 */
export function wrapperScript(limits: LimitsConfig | undefined): string {
  const steps = [
    'while [ "$1" != -- ]; do echo $$ > "$1" || { echo "switchboard: cannot join the cgroup $1" >&2; exit 125; }; shift; done; shift',
  ];
  // The soft limit sends SIGXCPU (which names the limit); the hard one, a second later, SIGKILL.
  if (limits?.cpuSeconds !== undefined) steps.push(`ulimit -S -t ${limits.cpuSeconds} && ulimit -H -t ${limits.cpuSeconds + 1} || exit 125`);
  if (limits?.openFiles !== undefined) steps.push(`ulimit -n ${limits.openFiles} || exit 125`);
  steps.push('exec "$@"');
  return steps.join('; ');
}

export interface ContainedSpawnInput {
  command: string;
  args: readonly string[];
  sandbox?: { config: SandboxConfig; bwrap: string; paths: SandboxPaths } | undefined;
  limits?: LimitsConfig | undefined;
  /** cgroup.procs files of the child's cgroups (one per hierarchy), already created. */
  cgroupProcs: readonly string[];
}

/** What to spawn: the command itself when nothing contains it, else the wrapper and/or bwrap. */
export function containedSpawn(input: ContainedSpawnInput): { command: string; args: string[] } {
  let argv = [input.command, ...input.args];
  if (input.sandbox !== undefined) argv = [input.sandbox.bwrap, ...bwrapArgs(input.sandbox.config, input.sandbox.paths), '--', ...argv];
  const rlimits = input.limits?.cpuSeconds !== undefined || input.limits?.openFiles !== undefined;
  if (rlimits || input.cgroupProcs.length > 0) {
    argv = ['/bin/sh', '-c', wrapperScript(input.limits), 'sh', ...input.cgroupProcs, '--', ...argv];
  }
  const [command, ...args] = argv;
  return { command: command as string, args };
}
