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
