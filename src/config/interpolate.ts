/**
 * Environment interpolation in config values, run on the parsed document before validation (so a
 * number can come from the environment: `port: "${PORT:-8080}"`).
 *
 * Grammar, inside any string value (keys are never interpolated):
 * - `${NAME}`           the variable's value; an error if it is unset.
 * - `${NAME:-default}`  the variable's value, or `default` when it is unset or empty (as in POSIX sh).
 * - `$${`               a literal `${`.
 * A `$` anywhere else is literal. Substituted values are not scanned again, so a value that itself
 * contains `${...}` is inserted as written. Nested references (`${A:-${B}}`) are rejected rather
 * than half-supported.
 */
import { formatPath, type ConfigIssue } from './config-error.ts';

export type Environment = Readonly<Record<string, string | undefined>>;

export interface InterpolateOptions {
  readonly env: Environment;
  /**
   * Leave references to unset variables as written instead of reporting them. Used for disabled
   * servers, so a server can be switched off on a machine that lacks its secrets.
   */
  readonly lenient?: boolean;
}

export interface Interpolated {
  readonly value: unknown;
  readonly issues: ConfigIssue[];
}

const variableName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Interpolates every string in a JSON-like tree (objects, arrays, scalars) and returns a copy; the
 * input is not modified. Problems are collected with their key paths rather than thrown, so one run
 * reports every unset variable at once.
 */
export function interpolate(value: unknown, options: InterpolateOptions, path: readonly PropertyKey[] = []): Interpolated {
  const issues: ConfigIssue[] = [];
  const out = walk(value, path, options, issues);
  return { value: out, issues };
}

function walk(value: unknown, path: readonly PropertyKey[], options: InterpolateOptions, issues: ConfigIssue[]): unknown {
  if (typeof value === 'string') {
    const result = interpolateString(value, options);
    if (typeof result === 'string') return result;
    issues.push({ path: formatPath(path), message: result.error });
    return value;
  }
  if (Array.isArray(value)) return value.map((item, index) => walk(item, [...path, index], options, issues));
  if (isPlainObject(value)) {
    // fromEntries defines own properties, so a `__proto__` key stays data and never a prototype.
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item, [...path, key], options, issues)]));
  }
  return value;
}

/**
 * Interpolates one string. Returns the result, or `{ error }` describing the first problem (the
 * caller knows the key path and adds it).
 */
export function interpolateString(text: string, options: InterpolateOptions): string | { error: string } {
  if (!text.includes('$')) return text;
  let out = '';
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('$${', i)) {
      out += '${';
      i += 3;
      continue;
    }
    if (!text.startsWith('${', i)) {
      out += text.charAt(i);
      i += 1;
      continue;
    }
    const close = text.indexOf('}', i + 2);
    if (close === -1) return { error: `unterminated "\${" (write "$\${" for a literal "\${")` };
    const reference = text.slice(i, close + 1);
    const body = text.slice(i + 2, close);
    const separator = body.indexOf(':-');
    const name = separator === -1 ? body : body.slice(0, separator);
    const fallback = separator === -1 ? undefined : body.slice(separator + 2);
    if (!variableName.test(name)) {
      return { error: `invalid variable reference "${reference}" (expected \${NAME} or \${NAME:-default})` };
    }
    if (fallback?.includes('${')) {
      return { error: `nested "\${" inside the default of \${${name}} is not supported` };
    }
    const current = options.env[name];
    if (fallback !== undefined) {
      out += current === undefined || current === '' ? fallback : current;
    } else if (current !== undefined) {
      out += current;
    } else if (options.lenient) {
      out += reference;
    } else {
      return { error: `environment variable ${name} is not set (use \${${name}:-default} to give a default)` };
    }
    i = close + 1;
  }
  return out;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
