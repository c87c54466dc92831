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

type LogArgs = unknown[];
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/**
 * A log call's arguments with its message text scrubbed: pino writes the message (`msg`) outside
 * `formatters.log`, so a secret in it, or in the message pino takes from a logged Error when no
 * text is given, would pass the field scrubbing.
 */
function scrubArgs(args: LogArgs, secrets: readonly string[]): LogArgs {
  if (secrets.length === 0) return args;
  const [first, ...rest] = args;
  const out = args.map((arg) => (typeof arg === 'string' ? scrubText(arg, secrets) : arg));
  if (rest.length === 0 && typeof first === 'object' && first !== null) {
    const err = first instanceof Error ? first : (first as { err?: unknown }).err;
    const hasMsg = !(first instanceof Error) && (first as { msg?: unknown }).msg !== undefined;
    if (err instanceof Error && !hasMsg) out.push(scrubText(err.message, secrets));
  }
  return out;
}

/**
 * A child of `logger` whose lines, fields and message text, are scrubbed of `secrets()` (read when
 * a line is written, so a refreshed credential is known). Its own children inherit the scrubbing:
 * pino makes a child by prototype, so they find these level methods unless given their own level.
 */
export function scrubbingLogger(logger: Logger, secrets: () => readonly string[]): Logger {
  const child = logger.child({}, { formatters: { log: (object: object) => scrubObject(object, secrets()) } });
  const methods = child as unknown as Record<(typeof LEVELS)[number], (...args: LogArgs) => void>;
  for (const level of LEVELS) {
    const write = methods[level];
    methods[level] = function (this: unknown, ...args: LogArgs) {
      write.apply(this, scrubArgs(args, secrets()));
    };
  }
  return child;
}
