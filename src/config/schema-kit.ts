/**
 * The building blocks of the config schema (schema.ts, server-schema.ts): numbers, booleans and
 * strings that also accept their spelling as a string (values reach the schema through `${VAR}`),
 * and the shared limits. Every error message says how to fix the value.
 */
import { z } from 'zod';
import type { LogLevel } from './types.ts';

/** setTimeout fires at once (with a warning) above 2^31-1 ms, so no duration may exceed it (~24.8 days). */
export const MAX_DURATION_MS = 2_147_483_647;
export const MiB = 1024 * 1024;

/** Target names appear in URL paths (`/servers/<name>/mcp`): keep them to one safe path segment. */
export const TARGET_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const satisfies readonly LogLevel[];

// ---------------------------------------------------------------------------------------------
// Leaves

const fromDigits = (value: unknown): unknown => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value);
const fromBooleanWord = (value: unknown): unknown => (value === 'true' ? true : value === 'false' ? false : value);
/** YAML turns `--port 3000` into a number and `DEBUG: true` into a boolean; a child only sees strings. */
const fromScalar = (value: unknown): unknown =>
  (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean' ? String(value) : value;

export function integer(min: 0 | 1, max: number) {
  const bounded = max !== Number.MAX_SAFE_INTEGER && max !== MAX_DURATION_MS;
  const expected = bounded
    ? `expected an integer from ${min} to ${max}`
    : min === 0
      ? 'expected a non-negative integer'
      : 'expected a positive integer';
  const tooBig =
    max === MAX_DURATION_MS ? `must be at most ${MAX_DURATION_MS} (about 24.8 days, the longest timer Node.js supports)` : expected;
  return z.preprocess(fromDigits, z.int({ error: expected }).min(min, { error: expected }).max(max, { error: tooBig }));
}
export const positive = (max: number = Number.MAX_SAFE_INTEGER) => integer(1, max);
export const nonNegative = (max: number = Number.MAX_SAFE_INTEGER) => integer(0, max);
export const boolean = () => z.preprocess(fromBooleanWord, z.boolean({ error: 'expected true or false' }));
export const nonEmptyString = () => z.string({ error: 'expected a string' }).min(1, { error: 'must not be empty', abort: true });
export const scalarString = () => z.preprocess(fromScalar, z.string({ error: 'expected a string' }));

export const anObject = { error: 'expected an object' } as const;

export const envName = z
  .string()
  .regex(/^[^=\0]+$/, { error: 'environment variable names must be non-empty and contain no "=" or NUL' });

/**
 * A serialised origin as browsers send it: scheme, host, optional port; no path, no trailing slash.
 * `*` allows any origin (the HTTP layer's guard understands it); an explicit, visible choice.
 */
export const origin = z.string({ error: 'expected a string' }).refine(
  (value) => {
    if (value === '*') return true;
    try {
      return new URL(value).origin === value;
    } catch {
      return false;
    }
  },
  { error: 'expected an origin such as https://app.example.com (scheme, host, optional port; no path or trailing slash) or "*"' },
);

/** A Host header value: a name or address with an optional port. */
/** `name[:port]` as a Host header carries it (IPv6 in brackets): what http/own-origin.ts can parse, so no entry is silently ignored. */
export const hostHeader = nonEmptyString().regex(/^(?:\[[0-9A-Fa-f:.]+\]|[^\s/@\\?#:[\]]+)(?::\d{1,5})?$/, { error: 'expected a host name with an optional port, such as example.com:8080' });

/** An absolute http(s) URL without credentials in it (they belong in headers, which are redacted). */
export function isPlainHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

/** A pattern compiles as a JavaScript regular expression (flags are the gateway's: `g`): redaction and capture patterns. */
export const isRegExp = (source: string): boolean => {
  try {
    new RegExp(source, 'g');
    return true;
  } catch {
    return false;
  }
};
