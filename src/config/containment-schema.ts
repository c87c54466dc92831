/**
 * Containment of a stdio server the operator did not write (docs/security.md "Containment"):
 * `sandbox` (bubblewrap) and `limits` (cgroups and rlimits). Both are opt-in: unset, the child
 * runs as before, with the gateway's own view of the system.
 */
import { z } from 'zod';
import { anObject, boolean, nonEmptyString, positive } from './schema-kit.ts';

/** Absolute, normalised paths only: a relative path would depend on the gateway's cwd. */
const absolutePath = nonEmptyString().refine((path) => path.startsWith('/') && !/(^|\/)\.\.?(\/|$)/.test(path) && !path.includes('\0'), {
  error: 'expected an absolute path without "." or ".." parts',
});
const pathList = z.array(absolutePath, { error: 'expected a list of absolute paths' });

export const sandboxSchema = z.strictObject(
  {
    /** []: nothing is writable but the sandbox's private /tmp and home, which vanish with it. */
    writable: pathList.default([]),
    /**
     * Unset: the whole system is visible read-only (the home folder replaced by an empty one). A
     * list: only the system folders (/usr, /bin, /lib...), the command's own folder, these paths
     * and the writable ones are visible.
     */
    readable: pathList.optional(),
    /** false: the server gets a network namespace of its own, with a loopback and nothing else. */
    network: boolean().default(false),
    /**
     * "minimal": the child's environment is built as without a sandbox, but `inheritEnv: true`
     * (the gateway's whole environment, its secrets included) is refused; "inherit" allows it.
     */
    env: z.enum(['minimal', 'inherit'], { error: 'expected "minimal" or "inherit"' }).default('minimal'),
  },
  anObject,
);

export const limitsSchema = z.strictObject(
  {
    /** Unset: no limit. The child and all it starts, in MiB (cgroup memory.max; no swap). */
    memoryMiB: positive(1 << 20).optional(),
    /** Unset: no limit. Processes and threads of the child and all it starts (cgroup pids.max). */
    processes: positive(1 << 22).optional(),
    /** Unset: no limit. CPU seconds per process (RLIMIT_CPU; SIGXCPU, then SIGKILL). */
    cpuSeconds: positive(1 << 30).optional(),
    /** Unset: no limit. Open file descriptors per process (RLIMIT_NOFILE). */
    openFiles: positive(1 << 20).optional(),
  },
  anObject,
);

/** The containment keys of a stdio entry, spread into its schema. */
export const containmentKeys = {
  /** Unset: not sandboxed. Linux with bubblewrap (`bwrap`) only; elsewhere the target is refused at start. */
  sandbox: sandboxSchema.optional(),
  /** Unset: no limits. Memory and processes need writable cgroups; without them the target is refused at start. */
  limits: limitsSchema.optional(),
};

export type SandboxEntry = z.output<typeof sandboxSchema>;
export type LimitsEntry = z.output<typeof limitsSchema>;

/** `sandbox.env: "minimal"` refuses `inheritEnv: true`: the gateway's secrets would go into the sandbox. */
export function checkContainment(
  servers: Record<string, { type: string; inheritEnv?: unknown; sandbox?: SandboxEntry | undefined }>,
  ctx: z.RefinementCtx,
): void {
  for (const [name, server] of Object.entries(servers)) {
    if (server.type === 'stdio' && server.sandbox?.env === 'minimal' && server.inheritEnv === true) {
      ctx.addIssue({
        code: 'custom',
        path: ['mcpServers', name, 'inheritEnv'],
        message: 'cannot be true with sandbox.env "minimal": it would hand the gateway\'s whole environment to the sandboxed server (list the names, or set sandbox.env "inherit")',
      });
    }
  }
}
