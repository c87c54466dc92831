/**
 * Which stdio targets run a package through a runner (`npx`, `bunx`, `uvx`, `pipx run`), and what
 * they ask for: the package, the version range as written, the program, and the arguments that
 * belong to the program (docs/upstreams.md, "Packages run by npx or uvx"). Pure: nothing is read
 * or spawned here (package-cache.ts installs).
 */

export type Ecosystem = 'npm' | 'pypi';

export interface RunnerCall {
  /** The runner as written (its base name): what a missing-runner error names. */
  readonly runner: 'npx' | 'bunx' | 'uvx' | 'pipx';
  readonly ecosystem: Ecosystem;
  /** The package name, without version (npm: `@scope/name`; PyPI: as written, extras dropped). */
  readonly name: string;
  /** The requested version or range as written; 'latest' when none was given. */
  readonly range: string;
  /** The program to run when it differs from the package's default (`npx -p pkg prog`, `uvx --from pkg prog`). */
  readonly bin: string | undefined;
  /** The program's own arguments. */
  readonly args: readonly string[];
}

/** npm names: optional @scope/, lower-case URL-safe characters; never a leading '-' or '.'. */
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
/** PEP 508 names (letters, digits, `.`, `_`, `-`), optional [extras]. */
const PYPI_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\[[A-Za-z0-9,._-]+\])?$/;
/** A version or range: no spaces, nothing a shell or a flag parser would read differently. */
const VERSION = /^[A-Za-z0-9.^~<>=*+_|-]{1,100}$/;

/** The key a resolved package is remembered by in the lock file: ecosystem, name and range as written. */
export function lockKey(call: Pick<RunnerCall, 'ecosystem' | 'name' | 'range'>): string {
  return `${call.ecosystem}:${call.name}@${call.range}`;
}

function baseName(command: string): string {
  return command.slice(command.lastIndexOf('/') + 1);
}

/** `@scope/name@^1.2` -> name and range; undefined when it is not a plain registry spec (a path, a URL, a git spec). */
function splitNpm(spec: string): { name: string; range: string } | undefined {
  const at = spec.indexOf('@', 1);
  const name = at < 0 ? spec : spec.slice(0, at);
  const range = at < 0 ? 'latest' : spec.slice(at + 1);
  if (!NPM_NAME.test(name) || !VERSION.test(range)) return undefined;
  return { name, range };
}

/** `pkg==1.2`, `pkg@1.2`, `pkg>=1` -> name and range (PEP 440 specifier kept as written). */
function splitPypi(spec: string): { name: string; range: string } | undefined {
  const match = /^([^=<>!~@]+)(?:@(.+)|((?:==|>=|<=|~=|!=|<|>).+))?$/.exec(spec);
  if (match === null) return undefined;
  const name = (match[1] as string).replace(/\[.*\]$/, '');
  // `==1.2` is the exact version 1.2; other specifiers stay as written.
  const range = (match[2] ?? match[3] ?? 'latest').replace(/^==(?!=)/, '');
  if (!PYPI_NAME.test(match[1] as string) || !VERSION.test(range)) return undefined;
  return { name, range };
}

/** npx/bunx: `[-y|--yes|--quiet] [-p|--package pkg] spec-or-prog args...`. Any other option: not ours. */
function parseNpmRunner(runner: 'npx' | 'bunx', args: readonly string[]): RunnerCall | undefined {
  let i = 0;
  let pkg: string | undefined;
  for (; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '-y' || arg === '--yes' || arg === '-q' || arg === '--quiet' || arg === '--no-install=false') continue;
    if (arg === '-p' || arg === '--package') pkg = args[++i];
    else if (arg.startsWith('--package=')) pkg = arg.slice('--package='.length);
    else break;
  }
  if (arg0Missing(args, i)) return undefined;
  const first = args[i] as string;
  if (first.startsWith('-')) return undefined;
  const split = splitNpm(pkg ?? first);
  if (split === undefined) return undefined;
  return { runner, ecosystem: 'npm', ...split, bin: pkg === undefined ? undefined : first, args: args.slice(i + 1) };
}

/** uvx / `pipx run`: `[--from pkg] spec-or-prog args...`. */
function parsePypiRunner(runner: 'uvx' | 'pipx', args: readonly string[]): RunnerCall | undefined {
  let i = 0;
  let from: string | undefined;
  for (; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--from' || (runner === 'pipx' && arg === '--spec')) from = args[++i];
    else if (arg.startsWith('--from=')) from = arg.slice('--from='.length);
    else if (arg === '-q' || arg === '--quiet') continue;
    else break;
  }
  if (arg0Missing(args, i)) return undefined;
  const first = args[i] as string;
  if (first.startsWith('-')) return undefined;
  const split = splitPypi(from ?? first);
  if (split === undefined) return undefined;
  return { runner, ecosystem: 'pypi', ...split, bin: from === undefined ? undefined : first, args: args.slice(i + 1) };
}

function arg0Missing(args: readonly string[], i: number): boolean {
  return i >= args.length || args[i] === undefined;
}

/**
 * What a target's command asks a runner to run; undefined when the command is no runner, or the
 * call is one we do not take apart (an option we do not know, a path or URL for a package): such
 * a target runs as written.
 */
export function parseRunnerCall(command: string, args: readonly string[]): RunnerCall | undefined {
  const base = baseName(command);
  if (base === 'npx' || base === 'bunx') return parseNpmRunner(base, args);
  if (base === 'uvx') return parsePypiRunner('uvx', args);
  if (base === 'pipx' && args[0] === 'run') return parsePypiRunner('pipx', args.slice(1));
  return undefined;
}
