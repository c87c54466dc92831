/**
 * What a registry document may put on the command line `registry add` writes. A server.json is
 * written by whoever publishes it: its `runtimeArguments` go before the package or image, where
 * they are options of `docker`, `npx` or `uvx` themselves (`--privileged`, `-v /:/host`,
 * `--network host`, a second `--security-opt`; `--package`, `--registry`, `--from`, `--index-url`)
 * and can undo the containment the entry promises or swap what runs. So, by default, only
 * `-e`/`--env NAME[=VALUE]` passes for an OCI image and nothing for npm or PyPI; anything more is
 * refused with the exact command, and written only when the user says so. Pure functions.
 */

/** A word as a POSIX shell would need it to read it back as one word. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./${}-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The command line of an entry (`command` and `args`), as printed to the user. */
export function commandLineOf(entry: Record<string, unknown>): string {
  const command = typeof entry.command === 'string' ? entry.command : '';
  const args = Array.isArray(entry.args) ? entry.args.filter((a): a is string => typeof a === 'string') : [];
  return [command, ...args].map(shellWord).join(' ');
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ENV_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:=[^]*)?$/;

/** The runtime words of an OCI image beyond `-e`/`--env NAME[=VALUE]` (`--env=NAME=VALUE` too). */
export function beyondEnv(words: readonly string[]): string[] {
  const extra: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const next = words[i + 1];
    if ((word === '-e' || word === '--env') && next !== undefined && ENV_ASSIGNMENT.test(next)) {
      i++;
      continue;
    }
    if (word.startsWith('--env=') && ENV_ASSIGNMENT.test(word.slice(6))) continue;
    extra.push(word);
  }
  return extra;
}

/**
 * Variables that change what the runner itself runs, before the package does: `NODE_OPTIONS`
 * (`--require <file>` inside npx's own node), `npm_config_registry` (the printed package fetched
 * from another registry), `LD_PRELOAD`, `UV_INDEX_URL`, `PYTHONPATH`, `DOCKER_HOST`, `PATH`. The
 * entry's `env` is the environment of `npx`, `uvx` or `docker` itself (docker passes it into the
 * image by name too), so a document naming one would run something other than the printed command.
 */
const RUNNER_ENV_NAMES: ReadonlySet<string> = new Set(['PATH', 'HOME', 'SHELL', 'ENV', 'BASH_ENV', 'IFS', 'PERL5OPT', 'RUBYOPT']);
const RUNNER_ENV_PREFIX = /^(?:NODE_|NPM_CONFIG_|LD_|DYLD_|UV_|PIP_|PYTHON|DOCKER_|COREPACK_|BUN_|DENO_|GIT_)/i;

/** Whether a variable of this name, set for the runner, changes what runs (see above). */
export function isRunnerEnv(name: string): boolean {
  return RUNNER_ENV_NAMES.has(name.toUpperCase()) || RUNNER_ENV_PREFIX.test(name);
}

/** Whether `name` can be an environment variable's name (it is written as `-e <name>` for docker). */
export function isEnvName(name: string): boolean {
  return ENV_NAME.test(name);
}

/**
 * Naming rules of each registry, so that the package or image written is the one printed: an
 * identifier that starts with `-` is an option of npx, uvx or docker (`--call=<shell text>` runs a
 * command), and a version that is a spec of its own (`npm:other-pkg@6.6.6`, `file:`, a URL) names
 * another package. npm: validate-npm-package-name's rules (lower case, an optional `@scope/`, at
 * most 214 characters) and semver versions; PyPI: PEP 508 names and PEP 440 versions; OCI: the
 * distribution spec's references (host[:port]/path[:tag][@sha256:digest]).
 */
const NPM_NAME = /^(?:@[a-z0-9~][a-z0-9._~-]*\/)?[a-z0-9~][a-z0-9._~-]*$/;
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const PYPI_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
const PEP440 = /^(?:\d+!)?\d+(?:\.\d+)*(?:[-_.]?(?:a|b|rc|alpha|beta|pre|preview|c)[-_.]?\d*)?(?:[-_.]?(?:post|rev|r)[-_.]?\d*)?(?:[-_.]?dev[-_.]?\d*)?(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$/i;
/** A registry host: it has a dot or a port, or is `localhost` (else the first part is a path, lower case). */
const LABEL = String.raw`[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?`;
const OCI_HOST = String.raw`(?:(?:localhost|${LABEL}(?:\.${LABEL})+)(?::\d+)?/|${LABEL}:\d+/)?`;
const OCI_PATH = String.raw`[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*`;
export const OCI_TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const OCI_REFERENCE = new RegExp(`^${OCI_HOST}${OCI_PATH}(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$`);

/** Why `identifier` (and `version`, when given) is not a valid name of its registry; undefined when it is. */
export function identifierProblem(kind: 'npm' | 'pypi' | 'oci', identifier: string, version: string | undefined): string | undefined {
  const shown = shellWord(identifier);
  if (identifier.startsWith('-')) return `package identifier ${shown} starts with "-": it would be read as an option`;
  if (kind === 'npm') {
    if (identifier.length > 214 || !NPM_NAME.test(identifier)) return `package identifier ${shown} is not an npm package name`;
    if (version !== undefined && !SEMVER.test(version)) return `version ${shellWord(version)} of ${shown} is not an exact semver version`;
  } else if (kind === 'pypi') {
    if (!PYPI_NAME.test(identifier)) return `package identifier ${shown} is not a PyPI project name`;
    if (version !== undefined && !PEP440.test(version)) return `version ${shellWord(version)} of ${shown} is not a PEP 440 version`;
  } else {
    if (identifier.length > 512 || !OCI_REFERENCE.test(identifier)) return `image ${shown} is not an OCI image reference`;
    if (version !== undefined && !OCI_TAG.test(version)) return `version ${shellWord(version)} of ${shown} is not an image tag`;
  }
  return undefined;
}
