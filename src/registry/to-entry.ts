/**
 * A registry `server.json` as a Switchboard server entry (`mcpServers.<name>`):
 * - npm packages run as `npx -y <package>@<version>`;
 * - PyPI packages as `uvx <package>@<version>`; both exact, so the gateway's package cache
 *   (transport/package-cache.ts) installs that version once and runs it from there;
 * - OCI images as `docker run --rm -i` with the containment flags of Docker's own MCP gateway (no new
 *   privileges, read-only root, memory and CPU caps), each variable passed in with `-e`;
 * - remotes as `url` targets (`streamable-http` -> `type: http`, `sse` -> `type: sse`) with their headers.
 * What the user must supply becomes a `${VAR}` reference (inputs.ts). A document's runtime
 * arguments beyond `-e`/`--env` are refused unless accepted (safety.ts); `command` is the exact
 * command line written, for the user to read. Pure: no I/O.
 */
import { TARGET_NAME_PATTERN } from '../config/schema-kit.ts';
import { createVariableSet, literal, renderArguments, renderInput, renderTemplate, type RequiredVariable, type VariableSet } from './inputs.ts';
import { beyondEnv, commandLineOf, identifierProblem, isEnvName, isRunnerEnv, shellWord } from './safety.ts';
import type { RegistryPackage, RegistryRemote, ServerDetail } from './server-json.ts';

export const ENTRY_KINDS = ['npm', 'pypi', 'oci', 'remote'] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];

/** Docker's MCP gateway runs every server with these; so does an entry written from the registry. */
export const OCI_RUN_FLAGS = ['run', '--rm', '-i', '--init', '--security-opt', 'no-new-privileges', '--read-only', '--memory', '2g', '--cpus', '1'];

export interface RegistryEntry {
  /** The server's name in the config: valid, derived from the registry name unless chosen. */
  readonly name: string;
  readonly kind: EntryKind;
  /** The config entry, ready to be written under `mcpServers`. */
  readonly entry: Record<string, unknown>;
  /** Every `${VAR}` it references, with the registry's description. */
  readonly variables: readonly RequiredVariable[];
  /** One line saying where it came from (`npm @scope/pkg@1.2.3`, `remote https://…`). */
  readonly source: string;
  /** The exact command line written (a remote: its URL), shell-quoted: what the user is told runs. */
  readonly command: string;
  /** Runtime arguments beyond `-e`/`--env` that were accepted (`acceptRuntimeArgs`); [] without. */
  readonly acceptedRuntimeArgs: readonly string[];
}

export interface EntryOptions {
  readonly kind?: EntryKind | undefined;
  readonly name?: string | undefined;
  /** Write runtime arguments beyond `-e`/`--env` as the document gives them (`--accept-runtime-args`). */
  readonly acceptRuntimeArgs?: boolean | undefined;
}

/** Why a document cannot become an entry: said to the user as it is. */
export class RegistryEntryError extends Error {
  override name = 'RegistryEntryError';
}

/** `io.github.user/weather-server` -> `weather-server`: the part after the namespace, made a valid name. */
export function entryNameOf(registryName: string): string {
  const base = registryName.slice(registryName.lastIndexOf('/') + 1).toLowerCase();
  const name = base.replace(/[^a-z0-9_-]+/g, '-').replace(/^[^a-z0-9]+/, '').slice(0, 64).replace(/-+$/, '');
  return TARGET_NAME_PATTERN.test(name) ? name : 'server';
}

/**
 * Picks what to run (the first package of `kind`, or the first of npm, PyPI, OCI, remote the
 * document offers) and renders it. Throws RegistryEntryError when nothing usable is offered.
 */
export function toRegistryEntry(server: ServerDetail, options: EntryOptions = {}): RegistryEntry {
  const name = options.name ?? entryNameOf(server.name);
  if (!TARGET_NAME_PATTERN.test(name)) throw new RegistryEntryError(`"${name}" is not a valid server name: use 1-64 letters, digits, "_" or "-"`);
  for (const kind of options.kind === undefined ? ENTRY_KINDS : [options.kind]) {
    const variables = createVariableSet(name);
    if (kind === 'remote') {
      const remote = server.remotes?.find((r) => r.type === 'streamable-http' || r.type === 'sse');
      if (remote !== undefined) {
        const made = fromRemote(remote, variables);
        return { name, kind, ...made, command: String(made.entry.url), acceptedRuntimeArgs: [], variables: variables.list() };
      }
      continue;
    }
    const pkg = server.packages?.find((p) => p.registryType === kind);
    if (pkg !== undefined) return { name, kind, ...fromPackage(kind, pkg, variables, options.acceptRuntimeArgs === true), variables: variables.list() };
  }
  const offered = [...(server.packages ?? []).map((p) => p.registryType), ...(server.remotes ?? []).map((r) => `remote (${r.type})`)];
  const wanted = options.kind === undefined ? 'an npm, PyPI or OCI package, or a remote' : options.kind === 'remote' ? 'a remote' : `a package of type ${options.kind}`;
  throw new RegistryEntryError(`${server.name} offers nothing Switchboard can run (${wanted}); it offers: ${offered.join(', ') || 'nothing'}`);
}

type PackageEntry = Pick<RegistryEntry, 'entry' | 'source' | 'command' | 'acceptedRuntimeArgs'>;

function fromPackage(kind: Exclude<EntryKind, 'remote'>, pkg: RegistryPackage, variables: VariableSet, accept: boolean): PackageEntry {
  const transport = pkg.transport?.type ?? 'stdio';
  if (transport !== 'stdio') {
    throw new RegistryEntryError(`${pkg.identifier} runs its own ${transport} server; start it yourself and add its URL as a remote`);
  }
  const problem = identifierProblem(kind, pkg.identifier, kind === 'oci' && /@sha256:|:[^/]+$/.test(pkg.identifier) ? undefined : pkg.version);
  if (problem !== undefined) throw new RegistryEntryError(`${problem}; nothing is written`);
  // npx and uvx take the first word that is no option as what to run: a positional one swaps it.
  if (kind !== 'oci' && pkg.runtimeArguments?.some((a) => a.type === 'positional') === true) {
    throw new RegistryEntryError(`${pkg.identifier}: its runtimeArguments hold a positional argument, which ${kind === 'npm' ? 'npx' : 'uvx'} would run instead of the package; nothing is written`);
  }
  const env: Record<string, string> = {};
  for (const variable of pkg.environmentVariables ?? []) {
    if (!isEnvName(variable.name)) throw new RegistryEntryError(`${pkg.identifier}: environment variable name ${shellWord(variable.name)} is not a variable name`);
    const value = renderInput(variable, variable.name, variables);
    if (value !== undefined) env[variable.name] = value;
  }
  const runtime = renderArguments(pkg.runtimeArguments, variables);
  const args = renderArguments(pkg.packageArguments, variables);
  const spec = packageSpec(kind, pkg);
  const source = `${kind} ${spec}`;
  let entry: Record<string, unknown>;
  if (kind === 'oci') {
    const pass = Object.keys(env).flatMap((name) => ['-e', name]);
    entry = withEnv({ command: 'docker', args: [...OCI_RUN_FLAGS, ...pass, ...runtime, literal(spec), ...args] }, env);
  } else {
    const lead = kind === 'npm' ? ['-y'] : [];
    entry = withEnv({ command: kind === 'npm' ? 'npx' : 'uvx', args: [...lead, ...runtime, literal(spec), ...args] }, env);
  }
  const command = commandLineOf(entry);
  // Before the package or image, these are options of docker, npx or uvx themselves; and the
  // entry's env is the runner's own, where some variables change what it runs (safety.ts).
  const runnerEnv = Object.entries(env).filter(([variable]) => isRunnerEnv(variable)).map(([variable, value]) => `${variable}=${value}`);
  const extra = [...(kind === 'oci' ? beyondEnv(runtime) : runtime), ...runnerEnv];
  if (extra.length > 0 && !accept) {
    throw new RegistryEntryError(
      `${source}: its runtimeArguments${runnerEnv.length > 0 ? ' and environment' : ''} add ${extra.map(shellWord).join(' ')} to the ${kind === 'oci' ? 'docker' : kind === 'npm' ? 'npx' : 'uvx'} command${kind === 'oci' ? ', beyond -e/--env' : ''}; they can undo the containment or change what runs. The command would be: ${[...runnerEnv.map(shellWord), command].join(' ')} -- add --accept-runtime-args to write it as it is`,
    );
  }
  return { entry, source, command, acceptedRuntimeArgs: extra };
}

/** `pkg@1.2.3` for npm and PyPI (`uvx` takes the same form); an image reference keeps its own tag or digest. */
function packageSpec(kind: Exclude<EntryKind, 'remote'>, pkg: RegistryPackage): string {
  if (kind === 'oci') {
    const tagged = /@sha256:|:[^/]+$/.test(pkg.identifier);
    return tagged || pkg.version === undefined ? pkg.identifier : `${pkg.identifier}:${pkg.version}`;
  }
  if (pkg.version === undefined || pkg.version === 'latest') {
    throw new RegistryEntryError(`${pkg.identifier} names no exact version; the registry requires one (try --version)`);
  }
  return `${pkg.identifier}@${pkg.version}`;
}

function fromRemote(remote: RegistryRemote, variables: VariableSet): { entry: Record<string, unknown>; source: string } {
  const url = renderTemplate(remote.url ?? '', remote.variables ?? {}, variables);
  const headers: Record<string, string> = {};
  for (const header of remote.headers ?? []) {
    const value = renderInput(header, header.name, variables);
    if (value !== undefined) headers[header.name] = value;
  }
  const entry: Record<string, unknown> = { type: remote.type === 'sse' ? 'sse' : 'http', url };
  if (Object.keys(headers).length > 0) entry.headers = headers;
  return { entry, source: `remote ${remote.url ?? ''}` };
}

function withEnv(entry: Record<string, unknown>, env: Record<string, string>): Record<string, unknown> {
  return Object.keys(env).length > 0 ? { ...entry, env } : entry;
}
