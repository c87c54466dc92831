/**
 * The command line as a config source: `switchboard [options] [-- <command> [args...]]`.
 * Parsing is pure (argv in, a description of what to do out) so it is unit tested without a process;
 * src/cli.ts acts on the result.
 */
import { parseArgs } from 'node:util';
import { configError } from './config-error.ts';
import type { ConfigOverrides } from './normalise.ts';
import { LOG_LEVELS } from './schema.ts';
import type { LogLevel } from './types.ts';

/** Where the gateway's config comes from. */
export type ConfigSource =
  | { readonly kind: 'file'; readonly path: string }
  | {
      readonly kind: 'quick';
      /** A command to run over stdio, or the URL of a remote Streamable HTTP server. */
      readonly command: string;
      readonly args: readonly string[];
      /** `-e`: variables for the stdio child, on top of what it inherits. */
      readonly env: Readonly<Record<string, string>>;
      /** `--header`: headers sent to a remote server. */
      readonly headers: Readonly<Record<string, string>>;
    }
  | { readonly kind: 'default' };

export type CliCommand =
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'validate'; readonly source: ConfigSource; readonly overrides: ConfigOverrides }
  /** `switchboard registry …`: its own words, parsed by registry/command.ts. */
  | { readonly kind: 'registry'; readonly argv: readonly string[] }
  /** `switchboard pins …`: parsed by governance/command.ts. */
  | { readonly kind: 'pins'; readonly argv: readonly string[] }
  /** `switchboard servers …`: the package cache of runner targets, parsed by transport/servers-command.ts. */
  | { readonly kind: 'servers'; readonly argv: readonly string[] }
  /** `switchboard audit verify <file>`: parsed by observe/audit/command.ts. */
  | { readonly kind: 'audit'; readonly argv: readonly string[] }
  | { readonly kind: 'run'; readonly source: ConfigSource; readonly overrides: ConfigOverrides };

const options = {
  config: { type: 'string', short: 'c' },
  host: { type: 'string' },
  port: { type: 'string' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  V: { type: 'boolean' },
  env: { type: 'string', short: 'e' },
  header: { type: 'string' },
  stdio: { type: 'string' },
  cors: { type: 'string' },
} as const;

/** Options that may be given more than once. */
const REPEATABLE = new Set<string>(['env', 'header', 'cors']);

type OptionName = keyof typeof options;
const isOptionName = (name: string): name is OptionName => Object.hasOwn(options, name);

export const USAGE = `Usage:
  switchboard [options]                      serve the targets of a config file (or the built-in default)
  switchboard [options] -- <command> [args]  serve one stdio MCP server at /mcp
  switchboard [options] -- <https://url>     serve one remote Streamable HTTP server at /mcp
  switchboard validate <config>              check a config file, print what it serves, exit 0 or 2
  switchboard registry search <text>         find servers in the MCP registry
  switchboard registry add <name>            add a registry server to a config file (see registry --help)
  switchboard pins list|diff|approve         pinned tool definitions and changes waiting (see pins --help)
  switchboard servers install|list|verify    packages of npx/uvx servers, installed once (see servers --help)
  switchboard audit verify <file>            check the hash chains of audit records in a JSON-lines file

Options:
  -c, --config <file>    config file (.json, .yaml or .yml); see docs/configuration.md
      --host <host>      address to listen on (overrides gateway.host; default 127.0.0.1)
      --port <port>      port to listen on, 0 for any free port (overrides gateway.port; default 8080)
      --log-level <lvl>  ${LOG_LEVELS.join(', ')} (overrides gateway.logging.level)
  -e, --env KEY=VALUE    quick mode: set a variable for the server (repeatable); -e KEY passes KEY
                         from this environment (servers otherwise inherit only PATH, HOME, locale,
                         proxy and CA variables)
      --header 'N: v'    quick mode with a URL: send this header to the server (repeatable)
      --stdio "<cmd>"    the same as -- <cmd> (the command line is split on spaces; quotes group)
      --cors <origin>    let browser pages from this origin call the gateway (repeatable; "*" for
                         any page, which with no client authentication lets any site call every tool)
  -h, --help             show this help and exit
  -v, -V, --version      print the version and exit

Without --config or a command, serves @modelcontextprotocol/server-everything over stdio when it
is installed. Exit codes: 0 clean stop, 1 runtime failure, 2 bad command line or config.

Examples:
  switchboard --config switchboard.yaml
  switchboard --port 3000 -- npx -y @modelcontextprotocol/server-filesystem /tmp
  switchboard -e GITHUB_TOKEN -- npx -y @modelcontextprotocol/server-github
  switchboard --header 'Authorization: Bearer ...' -- https://mcp.example.com/mcp
  switchboard validate switchboard.yaml`;

/**
 * Parses argv (without the node binary and script). Throws ConfigError naming the flag for bad
 * input: unknown option, missing or malformed value, stray argument, conflicting sources.
 */
export function parseCliArgs(argv: readonly string[], environment: NodeJS.ProcessEnv = process.env): CliCommand {
  if (argv[0] === 'registry') return { kind: 'registry', argv: argv.slice(1) };
  if (argv[0] === 'pins') return { kind: 'pins', argv: argv.slice(1) };
  if (argv[0] === 'servers') return { kind: 'servers', argv: argv.slice(1) };
  if (argv[0] === 'audit') return { kind: 'audit', argv: argv.slice(1) };
  const validate = argv[0] === 'validate';
  const { tokens } = parseArgs({ args: [...argv.slice(validate ? 1 : 0)], options, strict: false, allowPositionals: true, tokens: true });
  const values: Partial<Record<OptionName, string | true>> = {};
  const lists: Record<string, string[]> = { env: [], header: [], cors: [] };
  let quick: string[] | undefined;
  for (const token of tokens) {
    if (token.kind === 'option-terminator') {
      quick = [];
      continue;
    }
    if (token.kind === 'positional') {
      if (quick !== undefined) {
        quick.push(token.value);
        continue;
      }
      if (validate && values.config === undefined) {
        values.config = token.value;
        continue;
      }
      throw configError(
        '',
        `unexpected argument "${token.value}": put the server command after --, as in \`switchboard -- npx -y <package>\``,
      );
    }
    if (!isOptionName(token.name)) throw configError(token.rawName, 'unknown option (see --help)');
    const flag = `--${token.name}`;
    if (options[token.name].type === 'boolean') {
      if (token.value !== undefined) throw configError(flag, 'takes no value');
      values[token.name] = true;
      continue;
    }
    // Non-strict parseArgs takes the next word as the value even when it is another flag.
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith('-'))) {
      throw configError(flag, `missing value (write ${flag}=<value> for a value that starts with "-")`);
    }
    if (REPEATABLE.has(token.name)) (lists[token.name] as string[]).push(token.value);
    else values[token.name] = token.value;
  }

  if (values.help === true) return { kind: 'help' };
  if (values.version === true || values.V === true) return { kind: 'version' };
  if (typeof values.stdio === 'string') {
    if (quick !== undefined) throw configError('--stdio', 'cannot be combined with a command after --');
    quick = splitCommandLine(values.stdio);
  }
  if (validate) {
    if (typeof values.config !== 'string') throw configError('validate', 'expected a config file: switchboard validate <file>');
    return { kind: 'validate', source: { kind: 'file', path: values.config }, overrides: withCors(parseOverrides(values), lists.cors as string[]) };
  }

  const overrides = withCors(parseOverrides(values), lists.cors as string[]);
  const config = values.config;
  if (quick !== undefined) {
    const [command, ...args] = quick;
    if (command === undefined) throw configError('--', 'expected a command after --');
    if (command === '') throw configError('--', 'the command after -- must not be empty');
    if (typeof config === 'string') throw configError('--config', 'cannot be combined with a command after --');
    const env = parseEnv(lists.env as string[], environment);
    const headers = parseHeaders(lists.header as string[]);
    return { kind: 'run', source: { kind: 'quick', command, args, env, headers }, overrides };
  }
  if ((lists.env as string[]).length > 0) throw configError('--env', 'applies to quick mode only (a command after --); use env in a config file');
  if ((lists.header as string[]).length > 0) throw configError('--header', 'applies to quick mode with a URL only; use headers in a config file');
  if (typeof config === 'string') {
    if (config === '') throw configError('--config', 'must not be empty');
    return { kind: 'run', source: { kind: 'file', path: config }, overrides };
  }
  return { kind: 'run', source: { kind: 'default' }, overrides };
}

function parseOverrides(values: Partial<Record<OptionName, string | true>>): ConfigOverrides {
  const overrides: { host?: string; port?: number; logLevel?: LogLevel } = {};
  const host = values.host;
  if (typeof host === 'string') {
    if (host === '') throw configError('--host', 'must not be empty');
    overrides.host = host;
  }
  const port = values.port;
  if (typeof port === 'string') {
    const number = /^\d+$/.test(port) ? Number(port) : Number.NaN;
    if (!(number >= 0 && number <= 65_535)) throw configError('--port', 'expected an integer from 0 to 65535');
    overrides.port = number;
  }
  const level = values['log-level'];
  if (typeof level === 'string') {
    if (!isLogLevel(level)) throw configError('--log-level', `expected one of ${LOG_LEVELS.join(', ')}`);
    overrides.logLevel = level;
  }
  return overrides;
}

function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** `-e KEY=VALUE` sets, `-e KEY` passes KEY from `environment` (like `docker run -e`). */
function parseEnv(entries: readonly string[], environment: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    const name = eq === -1 ? entry : entry.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw configError('--env', `"${name}" is not a variable name (expected KEY=VALUE or KEY)`);
    const value = eq === -1 ? environment[name] : entry.slice(eq + 1);
    if (value === undefined) throw configError('--env', `${name} is not set in this environment (write ${name}=<value> to set it)`);
    env[name] = value;
  }
  return env;
}

/** `--header 'Name: value'`. */
function parseHeaders(entries: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const entry of entries) {
    const colon = entry.indexOf(':');
    if (colon <= 0) throw configError('--header', `expected "Name: value", got "${entry}"`);
    headers[entry.slice(0, colon).trim()] = entry.slice(colon + 1).trim();
  }
  return headers;
}

/**
 * Splits `--stdio "cmd arg 'two words'"` as a shell would for plain words and quotes (no
 * expansion, no escapes beyond quotes): supergateway takes the server as one string.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  let word = '';
  let last = -1;
  for (const match of line.matchAll(pattern)) {
    const part = match[1] ?? match[2] ?? match[3] ?? '';
    if (last !== -1 && match.index !== last) {
      words.push(word);
      word = '';
    }
    word += part;
    last = match.index + match[0].length;
  }
  if (last !== -1) words.push(word);
  return words;
}

/** `--cors <origin>`: an origin as in `gateway.corsOrigins` (scheme, host, optional port) or "*". */
function withCors(overrides: ConfigOverrides, origins: readonly string[]): ConfigOverrides {
  if (origins.length === 0) return overrides;
  for (const origin of origins) {
    let ok = origin === '*';
    try {
      ok ||= new URL(origin).origin === origin;
    } catch {
      // not a URL
    }
    if (!ok) throw configError('--cors', `expected an origin such as https://app.example.com or "*", got "${origin}"`);
  }
  return { ...overrides, cors: origins };
}
