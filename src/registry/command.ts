/**
 * `switchboard registry search <text>` and `switchboard registry add <name>`: find servers in the
 * MCP registry and write one into a config file as a validated entry. Exit codes as the rest of the
 * command: 0 done, 1 the registry failed us (unreachable, bad answer), 2 a usage or entry problem.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_REGISTRY_URL, getServer, RegistryError, searchServers } from './client.ts';
import { addEntryToFile } from './config-file.ts';
import { statusOf } from './server-json.ts';
import { ENTRY_KINDS, RegistryEntryError, toRegistryEntry, type EntryKind } from './to-entry.ts';

export const REGISTRY_USAGE = `Usage:
  switchboard registry search <text> [--registry <url>] [--limit <n>]
  switchboard registry add <name> [--version <v>] [--config <file>] [--as <server name>]
                                  [--type npm|pypi|oci|remote] [--registry <url>]
                                  [--accept-runtime-args]

  search   servers whose registry name contains <text> (latest versions)
  add      turn the server.json of <name> (for example io.github.owner/server) into an entry of
           <file> (default switchboard.yaml; created when missing). npm packages run with npx,
           PyPI ones with uvx, OCI images with docker run (read-only, no new privileges, capped),
           remotes as url targets. What you must supply (API keys, paths) is written as \${VAR}
           references, never as values: set them in the gateway's environment. The exact
           command written is printed.

  --accept-runtime-args   write the document's runtimeArguments beyond -e/--env (OCI) or any
                          at all (npm, PyPI) as they are; without it they are refused, with the
                          command they would make: they are options of docker, npx or uvx and can
                          undo the containment or change what runs

  --registry <url>   registry to read (default $SWITCHBOARD_REGISTRY_URL, else ${DEFAULT_REGISTRY_URL})`;

export interface RegistryIo {
  readonly out: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
}

class UsageError extends Error {}

/** Runs the command and returns its exit code; every failure is one line on `err` naming what to do. */
export async function runRegistryCommand(argv: readonly string[], io: RegistryIo & { readonly err: (text: string) => void }): Promise<number> {
  try {
    const [verb, ...rest] = argv;
    if (verb === undefined || verb === '--help' || verb === '-h' || verb === 'help') {
      io.out(`${REGISTRY_USAGE}\n`);
      return verb === undefined ? 2 : 0;
    }
    if (verb === 'search') return await search(rest, io);
    if (verb === 'add') return await add(rest, io);
    throw new UsageError(`unknown registry command "${verb}" (search or add)`);
  } catch (error) {
    const usage = error instanceof UsageError || error instanceof RegistryEntryError;
    if (!usage && !(error instanceof RegistryError)) throw error;
    io.err(`switchboard registry: ${error.message}\n`);
    return usage ? 2 : 1;
  }
}

const OPTIONS = {
  registry: { type: 'string' },
  limit: { type: 'string' },
  version: { type: 'string' },
  config: { type: 'string', short: 'c' },
  as: { type: 'string' },
  type: { type: 'string' },
  'accept-runtime-args': { type: 'boolean' },
} as const;

function parse(argv: readonly string[], allowed: readonly (keyof typeof OPTIONS)[]) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  for (const name of Object.keys(parsed.values)) {
    if (!(allowed as readonly string[]).includes(name)) throw new UsageError(`--${name} does not apply here (see switchboard registry --help)`);
  }
  if (parsed.positionals.length !== 1) throw new UsageError('expected exactly one argument (see switchboard registry --help)');
  return { value: parsed.positionals[0]!, options: parsed.values };
}

function registryOf(option: string | undefined, env: NodeJS.ProcessEnv): { baseUrl: string } {
  return { baseUrl: option ?? env.SWITCHBOARD_REGISTRY_URL ?? DEFAULT_REGISTRY_URL };
}

async function search(argv: readonly string[], io: RegistryIo): Promise<number> {
  const { value, options } = parse(argv, ['registry', 'limit']);
  const limit = options.limit === undefined ? 30 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError('--limit: expected a whole number from 1 to 100');
  const list = await searchServers(registryOf(options.registry, io.env), value, limit);
  if (list.servers.length === 0) io.out(`no server in the registry matches "${value}"\n`);
  for (const response of list.servers) {
    const { server } = response;
    const kinds = [...new Set([...(server.packages ?? []).map((p) => p.registryType), ...(server.remotes?.length ? ['remote'] : [])])];
    const status = statusOf(response);
    const flag = status !== undefined && status !== 'active' ? ` [${status}]` : '';
    io.out(`${server.name}${server.version === undefined ? '' : ` ${server.version}`}${flag}  (${kinds.join(', ') || 'nothing runnable'})\n`);
    if (server.description !== undefined) io.out(`    ${server.description.replace(/\s+/g, ' ').slice(0, 160)}\n`);
  }
  return 0;
}

async function add(argv: readonly string[], io: RegistryIo): Promise<number> {
  const { value, options } = parse(argv, ['registry', 'version', 'config', 'as', 'type', 'accept-runtime-args']);
  const kind = options.type;
  if (kind !== undefined && !(ENTRY_KINDS as readonly string[]).includes(kind)) throw new UsageError(`--type: expected one of ${ENTRY_KINDS.join(', ')}`);
  const response = await getServer(registryOf(options.registry, io.env), value, options.version);
  const status = statusOf(response);
  if (status === 'deleted') throw new RegistryEntryError(`${value} is deleted in the registry; it is not added`);
  const entry = toRegistryEntry(response.server, { kind: kind as EntryKind | undefined, name: options.as, acceptRuntimeArgs: options['accept-runtime-args'] });
  const path = options.config ?? 'switchboard.yaml';
  const { created } = await addEntryToFile(path, entry, { registryName: response.server.name, version: response.server.version, description: response.server.description });
  io.out(`${created ? 'created' : 'updated'} ${path}: server "${entry.name}" (${entry.source})\n`);
  io.out(`  ${entry.kind === 'remote' ? 'connects to' : 'runs'}: ${entry.command}\n`);
  if (entry.acceptedRuntimeArgs.length > 0) io.out(`  note: runtime arguments from the registry written as given (--accept-runtime-args): ${entry.acceptedRuntimeArgs.join(' ')}\n`);
  if (status === 'deprecated') io.out(`  note: the registry marks ${value} as deprecated\n`);
  for (const variable of entry.variables) {
    const what = variable.required ? 'set' : 'optional';
    io.out(`  ${what} ${variable.name}${variable.secret ? ' (secret)' : ''}${variable.description === undefined ? '' : `: ${variable.description}`}\n`);
  }
  // npx/uvx entries name an exact version: the gateway installs it once into its cache (docs/upstreams.md).
  if (entry.source.startsWith('npm ') || entry.source.startsWith('pypi ')) io.out(`  its package is installed at the gateway's next start or reload; now: switchboard servers install --config ${path}\n`);
  io.out(`  check it with: switchboard validate ${path}\n`);
  return 0;
}
