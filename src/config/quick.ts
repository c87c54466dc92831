/**
 * Quick mode (`switchboard -- <command> [args...]`) and the built-in default: a config with one
 * stdio target and every other setting at its default. With a single target the HTTP layer serves
 * it at `/mcp` as well as `/servers/<name>/mcp`.
 */
import { createRequire } from 'node:module';
import { configError } from './config-error.ts';
import { parseConfig } from './load.ts';
import { TARGET_NAME_PATTERN } from './schema.ts';
import type { GatewayConfig } from './types.ts';

/** Used when a command's basename has no usable character (e.g. `/usr/bin/...`). */
export const FALLBACK_TARGET_NAME = 'server';

/**
 * The target name for a command: its basename (either path separator), every run of characters
 * outside `[A-Za-z0-9_-]` replaced by one `-`, trimmed to start with a letter or digit, at most 64
 * characters. `npx` -> `npx`, `/usr/bin/my.server` -> `my-server`, `C:\tools\srv.exe` -> `srv-exe`.
 */
export function toTargetName(command: string): string {
  const base = command.split(/[\\/]/).filter((part) => part !== '').pop() ?? '';
  const name = base
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^[-_]+/, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return TARGET_NAME_PATTERN.test(name) ? name : FALLBACK_TARGET_NAME;
}

/**
 * Builds the config for `switchboard -- <command> [args...]` (arguments taken literally; `env` for
 * the child) or `switchboard -- <http(s) URL>` (a remote Streamable HTTP server; `headers` sent).
 */
export function buildQuickConfig(
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  headers: Readonly<Record<string, string>> = {},
): GatewayConfig {
  if (command === '') throw configError('--', 'the command after -- must not be empty');
  if (/^https?:\/\//i.test(command)) {
    if (args.length > 0) throw configError('--', 'a URL takes no arguments');
    if (Object.keys(env).length > 0) throw configError('--env', 'applies to a command, not to a URL (use --header)');
    const name = toTargetName(new URL(command).hostname.split('.')[0] ?? '');
    return parseConfig({ mcpServers: { [name]: { type: 'http', url: command, headers: { ...headers } } } }, { interpolate: false, source: 'quick mode' });
  }
  if (Object.keys(headers).length > 0) throw configError('--header', 'applies to a URL, not to a command (use --env)');
  // Quick mode writes nothing (no cache folder in whatever folder it was started from): a runner runs as written.
  return parseConfig(
    { mcpServers: { [toTargetName(command)]: { command, args: [...args], env: { ...env } } }, gateway: { packages: { install: false } } },
    { interpolate: false, source: 'quick mode' },
  );
}

/** Name of the built-in default's target. */
export const DEFAULT_TARGET_NAME = 'everything';
const EVERYTHING_ENTRY = '@modelcontextprotocol/server-everything/dist/index.js';

/** Where server-everything's entry point is, or undefined when the package is not installed. */
export function resolveEverythingServer(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve(EVERYTHING_ENTRY);
  } catch {
    return undefined;
  }
}

/**
 * The config used when neither `--config` nor a command is given: the MCP reference server
 * `@modelcontextprotocol/server-everything` over stdio, run on this very Node binary, so
 * `switchboard` alone gives something to connect an inspector to.
 */
export function buildDefaultConfig(resolveEntry: () => string | undefined = resolveEverythingServer): GatewayConfig {
  const entry = resolveEntry();
  if (entry === undefined) {
    throw configError(
      '',
      'no config given and @modelcontextprotocol/server-everything is not installed: pass --config <file> or a command after --',
    );
  }
  return parseConfig(
    { mcpServers: { [DEFAULT_TARGET_NAME]: { command: process.execPath, args: [entry, 'stdio'] } } },
    { interpolate: false, source: 'built-in default' },
  );
}
