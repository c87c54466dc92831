/**
 * Loading a config: read the file, parse JSON or YAML by extension, interpolate `${VAR}`, validate
 * strictly, normalise to a frozen GatewayConfig. Every failure is a ConfigError naming the file and
 * the key path.
 */
import { readFile } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { ConfigError, configError, type ConfigIssue } from './config-error.ts';
import { interpolate, interpolateString, isPlainObject, type Environment } from './interpolate.ts';
import { translateForeign } from './foreign.ts';
import { toGatewayConfig } from './normalise.ts';
import { configFileSchema } from './schema.ts';
import type { GatewayConfig } from './types.ts';
import { toConfigIssues } from './zod-issues.ts';

export interface ParseConfigOptions {
  /** Variables for `${VAR}`; defaults to process.env. */
  readonly env?: Environment;
  /** Folder relative `cwd` values are resolved against; defaults to process.cwd(). */
  readonly baseDir?: string;
  /** Named at the start of error messages (the file path). */
  readonly source?: string;
  /** false: take strings literally (quick mode, where the shell has already expanded them). */
  readonly interpolate?: boolean;
}

/**
 * Validates an already parsed document (the object a JSON or YAML file holds) and returns the
 * frozen GatewayConfig. Throws ConfigError listing every problem with its key path.
 */
export function parseConfig(document: unknown, options: ParseConfigOptions = {}): GatewayConfig {
  const foreign = translateForeign(document);
  let input: unknown = foreign?.document ?? document;
  if (options.interpolate !== false) {
    const result = interpolateDocument(input, options.env ?? process.env);
    if (result.issues.length > 0) throw new ConfigError(result.issues, options.source);
    input = result.value;
  }
  const parsed = configFileSchema.safeParse(input);
  if (!parsed.success) throw new ConfigError(toConfigIssues(parsed.error.issues, input), options.source);
  const config = toGatewayConfig(parsed.data, { baseDir: options.baseDir ?? process.cwd() });
  return foreign === undefined || foreign.warnings.length === 0 ? config : Object.freeze({ ...config, warnings: Object.freeze(foreign.warnings) });
}

export interface LoadConfigOptions {
  readonly env?: Environment;
  /** Folder a relative file path is resolved against; defaults to process.cwd(). */
  readonly cwd?: string;
}

/** Reads, parses (`.json`, `.yaml`, `.yml`) and validates a config file. */
export async function loadConfigFile(path: string, options: LoadConfigOptions = {}): Promise<GatewayConfig> {
  const absolute = resolve(options.cwd ?? process.cwd(), path);
  const format = formatOf(path);
  let text: string;
  try {
    text = await readFile(absolute, 'utf8');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError([{ path: '', message: `cannot read the config file (${reason})` }], path, { cause: error });
  }
  const document = parseConfigText(text, format, path);
  return parseConfig(document, {
    source: path,
    baseDir: dirname(absolute),
    ...(options.env === undefined ? {} : { env: options.env }),
  });
}

export type ConfigFormat = 'json' | 'yaml';

function formatOf(path: string): ConfigFormat {
  const extension = extname(path).toLowerCase();
  if (extension === '.json') return 'json';
  if (extension === '.yaml' || extension === '.yml') return 'yaml';
  throw configError('', `unsupported config file extension "${extension}": use .json, .yaml or .yml`, path);
}

/** Parses the text of a config file; syntax errors become ConfigErrors with line and column. */
export function parseConfigText(text: string, format: ConfigFormat, source: string): unknown {
  if (format === 'json') {
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw configError('', `invalid JSON: ${error instanceof Error ? error.message : String(error)}`, source);
    }
  }
  // YAML 1.2 core schema: `yes`/`on` stay strings, duplicate keys are errors, alias expansion is capped.
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const first = document.errors[0];
  if (first !== undefined) {
    // Keep the first line only (it carries line and column); the excerpt that follows may be long.
    const headline = (first.message.split('\n')[0] ?? first.message).replace(/:$/, '');
    throw configError('', `invalid YAML: ${headline}`, source);
  }
  return document.toJS({ maxAliasCount: 100 }) as unknown;
}

/**
 * Interpolates the whole document. A disabled server is interpolated leniently (unset variables
 * are not errors), so it can stay in the file on a machine that lacks its secrets; its keys and
 * types are still validated.
 */
function interpolateDocument(document: unknown, env: Environment): { value: unknown; issues: ConfigIssue[] } {
  if (!isPlainObject(document) || !isPlainObject(document['mcpServers'])) return interpolate(document, { env });
  const issues: ConfigIssue[] = [];
  const value: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(document)) {
    if (key === 'mcpServers' && isPlainObject(item)) {
      const servers: Record<string, unknown> = {};
      for (const [name, server] of Object.entries(item)) {
        const result = interpolate(server, { env, lenient: isDisabled(server, env) }, ['mcpServers', name]);
        issues.push(...result.issues);
        Object.defineProperty(servers, name, { value: result.value, enumerable: true, writable: true, configurable: true });
      }
      value[key] = servers;
    } else {
      const result = interpolate(item, { env }, [key]);
      issues.push(...result.issues);
      Object.defineProperty(value, key, { value: result.value, enumerable: true, writable: true, configurable: true });
    }
  }
  return { value, issues };
}

function isDisabled(server: unknown, env: Environment): boolean {
  if (!isPlainObject(server)) return false;
  const flag = server['disabled'];
  const resolved = typeof flag === 'string' ? interpolateString(flag, { env }) : flag;
  return resolved === true || resolved === 'true';
}
