/**
 * Log lines for a person at a terminal: `12:04:05 INFO  message  key=value ...` instead of JSON.
 * Used by the command when stdout is a TTY; pipes, files and log collectors get pino's JSON as is.
 * Small on purpose (no pino-pretty): one JSON line in, one text line out, values shortened.
 */
import { Writable } from 'node:stream';

const LEVELS: Readonly<Record<number, string>> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
const COLORS: Readonly<Record<number, string>> = { 40: '\x1b[33m', 50: '\x1b[31m', 60: '\x1b[31m' };
const SKIP = new Set(['level', 'time', 'msg', 'name', 'pid', 'hostname']);
const VALUE_CHARS = 160;

/** Formats one pino JSON line; a line that is not JSON is returned unchanged. */
export function formatLine(line: string, color: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = typeof entry.level === 'number' ? entry.level : 30;
  const time = typeof entry.time === 'number' ? new Date(entry.time).toTimeString().slice(0, 8) : '';
  const fields = Object.entries(entry)
    .filter(([key]) => !SKIP.has(key))
    .map(([key, value]) => `${key}=${shorten(typeof value === 'string' ? value : JSON.stringify(value))}`);
  const label = LEVELS[level] ?? String(level);
  const start = color && COLORS[level] !== undefined ? `${COLORS[level]}${label}\x1b[0m` : label;
  return `${time} ${start} ${String(entry.msg ?? '')}${fields.length > 0 ? `  ${fields.join(' ')}` : ''}`;
}

function shorten(text: string): string {
  return text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS)}...` : text;
}

/** A destination that writes formatted lines to `out`. */
export function createPrettyDestination(out: NodeJS.WritableStream, color: boolean): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = chunk
        .toString('utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => formatLine(line, color))
        .join('\n');
      out.write(`${text}\n`);
      done();
    },
  });
}
