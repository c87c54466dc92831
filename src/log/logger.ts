/**
 * pino, configured once. Child loggers are made per session and per upstream (never per message)
 * so their bindings are serialised once.
 */
import { pino, type Logger } from 'pino';
import type { LogLevel } from '../config/types.ts';

export type { Logger } from 'pino';

/**
 * Paths never written in clear: credentials in headers, target env values, and a remote target's
 * configured upstream headers (any of which may be a credential, whatever its name).
 */
export const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'headers.authorization',
  'headers.cookie',
  'env',
  '*.env',
  'target.env',
  'target.headers',
  '*.target.headers',
  'upstreamHeaders',
  '*.upstreamHeaders',
];

export interface LoggerOptions {
  level: LogLevel;
  /**
   * Where to write; defaults to process.stdout, which writes at once on Linux (pipes and files), so
   * nothing is left to flush at exit. pino's asynchronous destination retried EPIPE forever at exit
   * when the log reader had gone, and the gateway never stopped. Tests pass a stream to read logs.
   */
  destination?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { name: 'switchboard' },
      redact: { paths: redactPaths, censor: '[redacted]' },
    },
    options.destination ?? process.stdout,
  );
}

/**
 * The audit records' own logger (observe/audit/trail.ts, the `log` sink): the same destination as
 * `logger`, its own level (info, whatever `logging.level` says) and no redaction pass. A record has
 * no field that can hold a credential (log/audit-record.ts; captured values are redacted before),
 * and the pass cost three quarters of a record's line.
 */
export function createAuditLogger(logger: Logger): Logger {
  const destination = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as NodeJS.WritableStream | undefined;
  if (destination === undefined) return logger.child({ audit: true }, { level: 'info' });
  return pino({ level: 'info', base: { name: 'switchboard' } }, destination).child({ audit: true });
}
