/**
 * The package cache's lock file (`<cacheDir>/switchboard-packages.lock.json`): for each package a
 * runner target asks for (ecosystem, name and range as written), the exact version installed, the
 * registry's integrity, the folder, the programs, and a hash of the installed tree. A range or
 * `latest` is resolved once and stays pinned here until `switchboard servers install --update`:
 * the same idea as definition pinning (docs/governance.md), one level down.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync, renameSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = 'switchboard-packages.lock.json';
/** Files hashed per package at most: a package tree larger than this is refused rather than hashed forever. */
const MAX_TREE_FILES = 200_000;

export interface LockedPackage {
  readonly ecosystem: 'npm' | 'pypi';
  readonly name: string;
  readonly version: string;
  /** The registry's integrity of the package itself (npm's `sha512-...`); '' when the installer records none. */
  readonly integrity: string;
  /** The package's folder, relative to the cache folder (so the cache can be copied into an image). */
  readonly dir: string;
  /** Program name -> entry point, relative to `dir`. */
  readonly bins: Readonly<Record<string, string>>;
  /** `sha256-...` of every file under `dir` (paths, modes, contents): what `servers verify` checks. */
  readonly treeHash: string;
  readonly installedAt: string;
}

export interface Lock {
  readonly version: 1;
  readonly packages: Readonly<Record<string, LockedPackage>>;
}

const EMPTY: Lock = { version: 1, packages: {} };

function isLocked(value: unknown): value is LockedPackage {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (v.ecosystem === 'npm' || v.ecosystem === 'pypi') && typeof v.name === 'string' && typeof v.version === 'string' && typeof v.dir === 'string'
    && typeof v.treeHash === 'string' && typeof v.bins === 'object' && v.bins !== null && !v.dir.split('/').includes('..')
    && Object.values(v.bins).every((bin) => typeof bin === 'string' && !bin.split('/').includes('..'));
}

/** The lock in `cacheDir`; an absent file is an empty lock. A malformed one throws (the operator decides, nothing is reinstalled silently). */
export function readLock(cacheDir: string): Lock {
  let text: string;
  try {
    text = readFileSync(join(cacheDir, LOCK_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY;
    throw error;
  }
  const parsed: unknown = JSON.parse(text);
  const packages = typeof parsed === 'object' && parsed !== null ? (parsed as { packages?: unknown }).packages : undefined;
  if (typeof packages !== 'object' || packages === null) throw new Error(`${join(cacheDir, LOCK_FILE)}: not a package lock file`);
  const out: Record<string, LockedPackage> = {};
  for (const [key, entry] of Object.entries(packages)) if (isLocked(entry)) out[key] = entry;
  return { version: 1, packages: out };
}

/** Writes the lock atomically (a reader sees the old or the new file, never half). */
export function writeLock(cacheDir: string, lock: Lock): void {
  mkdirSync(cacheDir, { recursive: true });
  const path = join(cacheDir, LOCK_FILE);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(lock, null, 2)}\n`, { mode: 0o644 });
  renameSync(temporary, path);
}

/** The hash of a tree: sorted relative paths, each with its type, mode and contents (or link target). */
export function treeHash(root: string): string {
  const hash = createHash('sha256');
  let files = 0;
  const walk = (relative: string): void => {
    const absolute = join(root, relative);
    for (const name of readdirSync(absolute).sort()) {
      const path = relative === '' ? name : `${relative}/${name}`;
      const stat = lstatSync(join(root, path));
      if (++files > MAX_TREE_FILES) throw new Error(`more than ${MAX_TREE_FILES} files under ${root}`);
      if (stat.isDirectory()) {
        hash.update(`d ${path}\0`);
        walk(path);
      } else if (stat.isSymbolicLink()) {
        hash.update(`l ${path}\0${readlinkSync(join(root, path))}\0`);
      } else if (stat.isFile()) {
        hash.update(`f ${path}\0${(stat.mode & 0o111) === 0 ? '-' : 'x'}\0`);
        hash.update(readFileSync(join(root, path)));
        hash.update('\0');
      }
    }
  };
  walk('');
  return `sha256-${hash.digest('base64')}`;
}
