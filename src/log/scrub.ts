/**
 * Scrubbing the secrets the gateway itself holds out of what it logs. An upstream may echo what
 * the gateway gave it (a child prints its environment to stderr, an HTTP server quotes a header in
 * its error body), and the gateway logs what upstreams say. The values it knows to be secret (a
 * target's `env`, its configured headers, a forwarded or exchanged credential: upstream/secrets.ts)
 * are replaced by `[redacted]` in every line an upstream's logger writes.
 *
 * Cost: nothing on the forwarding path. The replacement runs as pino's `formatters.log` of the
 * upstream's child logger, so only on lines that are written (above the level), and a value is
 * searched only when it is long enough to be a secret (`MIN_SECRET_CHARS`): replacing `1` or `on`
 * everywhere would ruin every line and hide nothing worth hiding.
 */
import type { Logger } from './logger.ts';

export const SECRET_MARK = '[redacted]';
/** Shorter values are not searched for (see above). */
export const MIN_SECRET_CHARS = 6;
/** How deep into a logged object strings are scrubbed (log objects are shallow). */
const MAX_DEPTH = 5;

/** `text` with every occurrence of each of `secrets` replaced by the mark. */
export function scrubText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= MIN_SECRET_CHARS && out.includes(secret)) out = out.replaceAll(secret, SECRET_MARK);
  return out;
}

function scrubValue(value: unknown, secrets: readonly string[], depth: number): unknown {
  if (typeof value === 'string') return scrubText(value, secrets);
  if (typeof value !== 'object' || value === null || depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, secrets, depth + 1));
  const out: Record<string, unknown> = {};
  // An Error's message and stack are not enumerable: copied as the fields pino would write.
  if (value instanceof Error) {
    out.type = value.name;
    out.message = scrubText(value.message, secrets);
    if (value.stack !== undefined) out.stack = scrubText(value.stack, secrets);
  }
  for (const [key, v] of Object.entries(value)) out[key] = scrubValue(v, secrets, depth + 1);
  return out;
}

/** A copy of a log object with the secrets scrubbed from its strings (the same object when there are none). */
export function scrubObject(object: object, secrets: readonly string[]): object {
  return secrets.length === 0 ? object : (scrubValue(object, secrets, 0) as object);
}

/**
 * A child of `logger` whose lines are scrubbed of `secrets()` (read when a line is written, so a
 * refreshed credential is known). Its own children inherit the scrubbing.
 */
export function scrubbingLogger(logger: Logger, secrets: () => readonly string[]): Logger {
  return logger.child({}, { formatters: { log: (object: object) => scrubObject(object, secrets()) } });
}
