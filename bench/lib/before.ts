/**
 * The build "before" of a before/after run (`--before <path>/src/cli.ts`, `--before-ref <rev>`):
 * the `-before` systems run its src/cli.ts next to this checkout's, alternating in every round.
 *
 * `--before-ref` checks the revision out with `git worktree add --detach` into a temporary folder,
 * with this checkout's node_modules linked in (the same dependencies: the figures then differ by
 * the code alone), and removes that worktree again on every way out (`cleanup` is synchronous, so
 * an exit handler can run it).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export interface BeforeBuild {
  /** The src/cli.ts the `-before` systems start. */
  readonly cli: string;
  /** For the report: which build that is. */
  readonly label: string;
  /** Removes the temporary worktree (`--before-ref`); idempotent. */
  cleanup(): void;
}

const git = (cwd: string, args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

function revisionOf(dir: string): string {
  try {
    return git(dir, ['rev-parse', '--short', 'HEAD']);
  } catch {
    return 'no git revision';
  }
}

/** A checkout's src/cli.ts given by path: checked, nothing to clean up. */
function fromPath(path: string): BeforeBuild {
  const cli = resolve(path);
  if (!existsSync(cli) || !statSync(cli).isFile()) throw new Error(`--before ${path}: no such file (give another checkout's src/cli.ts)`);
  return { cli, label: `\`${cli}\` at ${revisionOf(dirname(cli))}`, cleanup: () => undefined };
}

/** `ref` checked out in a temporary detached worktree of the repository at `root`. */
function fromRef(ref: string, root: string): BeforeBuild {
  let commit: string;
  try {
    commit = git(root, ['rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`]);
  } catch {
    throw new Error(`--before-ref ${ref}: not a revision of ${root}`);
  }
  const parent = mkdtempSync(join(tmpdir(), 'switchboard-before-'));
  const dir = join(parent, 'checkout');
  let added = false;
  const cleanup = () => {
    if (added) {
      try {
        git(root, ['worktree', 'remove', '--force', dir]);
      } catch (err) {
        // Not `git worktree prune` here: that would touch every worktree of the repository.
        process.stderr.write(`bench: could not remove the worktree ${dir} (${(err as Error).message.trim()}); \`git worktree prune\` forgets it\n`);
      }
      added = false;
    }
    rmSync(parent, { recursive: true, force: true });
  };
  try {
    git(root, ['worktree', 'add', '--detach', dir, commit]);
    added = true;
    symlinkSync(realpathSync(join(root, 'node_modules')), join(dir, 'node_modules'), 'dir');
    const cli = join(dir, 'src/cli.ts');
    if (!existsSync(cli)) throw new Error(`--before-ref ${ref}: ${commit.slice(0, 7)} has no src/cli.ts`);
    return { cli, label: `\`src/cli.ts\` at ${commit.slice(0, 7)} (\`--before-ref ${ref}\`, a temporary worktree)`, cleanup };
  } catch (err) {
    cleanup();
    throw err;
  }
}

/** The build before, from the flags; undefined when neither is given. */
export function prepareBefore(flags: { path?: string | undefined; ref?: string | undefined }, root: string): BeforeBuild | undefined {
  if (flags.path !== undefined && flags.ref !== undefined) throw new Error('give --before or --before-ref, not both');
  if (flags.path !== undefined) return fromPath(flags.path);
  if (flags.ref !== undefined) return fromRef(flags.ref, root);
  return undefined;
}
