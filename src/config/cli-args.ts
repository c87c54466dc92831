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
  | { readonly kind: 'quick'; readonly command: string; readonly args: readonly string[] }
  | { readonly kind: 'default' };

export type CliCommand =
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'run'; readonly source: ConfigSource; readonly overrides: ConfigOverrides };

const options = {
  config: { type: 'string', short: 'c' },
  host: { type: 'string' },
  port: { type: 'string' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

type OptionName = keyof typeof options;
const isOptionName = (name: string): name is OptionName => Object.hasOwn(options, name);

export const USAGE = `Usage:
  switchboard [options]                      serve the targets of a config file (or the built-in default)
  switchboard [options] -- <command> [args]  serve one stdio MCP server at /mcp

Options:
  -c, --config <file>    config file (.json, .yaml or .yml); see docs/configuration.md
      --host <host>      address to listen on (overrides gateway.host; default 127.0.0.1)
      --port <port>      port to listen on, 0 for any free port (overrides gateway.port; default 8080)
      --log-level <lvl>  ${LOG_LEVELS.join(', ')} (overrides gateway.logging.level)
  -h, --help             show this help and exit
  -v, --version          print the version and exit

Without --config or a command, serves @modelcontextprotocol/server-everything over stdio when it
is installed. Exit codes: 0 clean stop, 1 runtime failure, 2 bad command line or config.

Examples:
  switchboard --config switchboard.yaml
  switchboard --port 3000 -- npx -y @modelcontextprotocol/server-filesystem /tmp`;

/**
 * Parses argv (without the node binary and script). Throws ConfigError naming the flag for bad
 * input: unknown option, missing or malformed value, stray argument, conflicting sources.
 */
export function parseCliArgs(argv: readonly string[]): CliCommand {
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const values: Partial<Record<OptionName, string | true>> = {};
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
    values[token.name] = token.value;
  }

  if (values.help === true) return { kind: 'help' };
  if (values.version === true) return { kind: 'version' };

  const overrides = parseOverrides(values);
  const config = values.config;
  if (quick !== undefined) {
    const [command, ...args] = quick;
    if (command === undefined) throw configError('--', 'expected a command after --');
    if (command === '') throw configError('--', 'the command after -- must not be empty');
    if (typeof config === 'string') throw configError('--config', 'cannot be combined with a command after --');
    return { kind: 'run', source: { kind: 'quick', command, args }, overrides };
  }
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
