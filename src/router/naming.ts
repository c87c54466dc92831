/**
 * Exposed names for tools and prompts behind an aggregate endpoint: `<prefix><separator><name>`.
 *
 * The 2025-11-25 spec (server/tools, "Tool names") says names SHOULD be 1-128 characters of
 * `A-Z a-z 0-9 _ - .`; the hosts that hand tools to a model are stricter (the Anthropic and OpenAI
 * APIs take `^[a-zA-Z0-9_-]{1,64}$`), so exposed names keep to that stricter set and to 64
 * characters. The default separator is `__`: inside both sets, and unlike `.` accepted by those APIs.
 *
 * A name that would be too long, or that holds characters outside the strict set, is shortened
 * deterministically: the first characters of the readable form, then `-` and 8 hex digits of a
 * SHA-256 of the full `prefix + separator + name` (stable across processes and restarts). Decoding
 * never parses a name: it looks it up in the map built from the lists (see name-table.ts), so
 * ambiguous spellings (`a_` + `__` + `b` vs `a` + `__` + `_b`) are settled there.
 */
import { createHash } from 'node:crypto';

/** The longest name many hosts accept (see above). */
export const MAX_EXPOSED_NAME_LENGTH = 64;
const HASH_HEX = 8;
const STRICT = /^[A-Za-z0-9_-]+$/;
const OUTSIDE_STRICT = /[^A-Za-z0-9_-]/g;

/** sha256 of `text`, first `HASH_HEX` hex digits. */
export function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, HASH_HEX);
}

/**
 * The exposed form of `name` from a target whose prefix is `prefix` ('' = no prefix). `salt`
 * distinguishes a second candidate when the plain form is already taken (collision).
 */
export function exposeName(prefix: string, separator: string, name: string, maxLength = MAX_EXPOSED_NAME_LENGTH, salt = ''): string {
  const full = prefix === '' ? name : `${prefix}${separator}${name}`;
  if (salt === '' && full.length > 0 && full.length <= maxLength && STRICT.test(full)) return full;
  const hash = shortHash(salt === '' ? full : `${full}\u0000${salt}`);
  const readable = full.replace(OUTSIDE_STRICT, '_').slice(0, maxLength - HASH_HEX - 1);
  return `${readable}-${hash}`;
}

/** True when `name` is a valid exposed name (strict set, 1..maxLength). */
export function isStrictName(name: string, maxLength = MAX_EXPOSED_NAME_LENGTH): boolean {
  return name.length > 0 && name.length <= maxLength && STRICT.test(name);
}
