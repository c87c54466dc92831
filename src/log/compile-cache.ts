/**
 * Node's module compile cache (`module.enableCompileCache`, Node >= 22.1): the V8 code of the
 * gateway's modules (and, on Node 24, their stripped types) is kept on disk and reused by the next
 * start, which then reaches `listening` sooner (issue 34, start-up; docs/operations.md).
 *
 * Where: `NODE_COMPILE_CACHE` when set (Node has enabled it already, as the operator asked);
 * otherwise `$XDG_CACHE_HOME/switchboard/compile-cache` or `~/.cache/switchboard/compile-cache`: a
 * directory of this user's only, never a shared one such as Node's default under /tmp, because
 * what is in it is code this process runs (a cache another user could write is refused).
 * `SWITCHBOARD_COMPILE_CACHE=off` or `NODE_DISABLE_COMPILE_CACHE=1` turns it off. Any failure
 * leaves the cache off: it only ever saves time.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import module from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';

export type CompileCache = { readonly on: true; readonly directory: string } | { readonly on: false; readonly why: string };

/** The user's own cache directory for it, or undefined when there is none to use. */
function ownDirectory(env: NodeJS.ProcessEnv): string | undefined {
  const base = env.XDG_CACHE_HOME !== undefined && env.XDG_CACHE_HOME.startsWith('/') ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  const directory = join(base, 'switchboard', 'compile-cache');
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const stat = lstatSync(directory);
  const uid = process.getuid?.();
  // A symlink, another owner, or a directory others can write: not ours to run code from.
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o022) !== 0) return undefined;
  return directory;
}

/** Enables the compile cache for the modules loaded from now on. Call before importing the gateway. */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): CompileCache {
  if (env.SWITCHBOARD_COMPILE_CACHE === 'off' || env.NODE_DISABLE_COMPILE_CACHE !== undefined) return { on: false, why: 'turned off' };
  if (typeof module.enableCompileCache !== 'function') return { on: false, why: 'this Node has no compile cache' };
  try {
    const directory = env.NODE_COMPILE_CACHE !== undefined ? undefined : ownDirectory(env);
    if (env.NODE_COMPILE_CACHE === undefined && directory === undefined) return { on: false, why: 'no private cache directory' };
    const result = module.enableCompileCache(directory);
    return result.directory !== undefined ? { on: true, directory: result.directory } : { on: false, why: result.message ?? 'refused' };
  } catch (error) {
    return { on: false, why: error instanceof Error ? error.message : String(error) };
  }
}
