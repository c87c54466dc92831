/**
 * What the gateway process does with an exception nothing caught, or a rejected promise nobody
 * handled. Node's default is to exit, which takes every session and child with it for one bad
 * path (the EMFILE spawn crash was one). The gateway instead logs it with a correlation id and
 * keeps serving: every error boundary it owns (routes, transports, sessions) already turns
 * failures into JSON-RPC errors, so what reaches here is a bug in one request's path, not a
 * corrupted process. A process that keeps throwing is not healthy, though: past `maxPerMinute`
 * such errors within a minute it exits with code 70 (EX_SOFTWARE) so that a supervisor restarts
 * it, after its exit handler has killed every child.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from './logger.ts';

export interface CrashGuardOptions {
  logger: Logger;
  /** 10: a burst means a loop, not one unlucky request. */
  maxPerMinute?: number;
  /** For tests: what to call instead of process.exit. */
  exit?: (code: number) => void;
}

export interface CrashGuard {
  /** Removes the handlers. */
  uninstall(): void;
}

/** Installs process-wide handlers for uncaught exceptions and unhandled rejections. */
export function installCrashGuard({ logger, maxPerMinute = 10, exit = (code) => process.exit(code) }: CrashGuardOptions): CrashGuard {
  const recent: number[] = [];
  const onError = (err: unknown, origin: string) => {
    const correlationId = randomUUID();
    const now = Date.now();
    while (recent.length > 0 && (recent[0] as number) < now - 60_000) recent.shift();
    recent.push(now);
    if (recent.length > maxPerMinute) {
      logger.fatal({ err, origin, correlationId, lastMinute: recent.length }, 'too many uncaught errors; exiting so that a supervisor restarts the gateway');
      exit(70);
      return;
    }
    logger.error({ err, origin, correlationId }, 'uncaught error; the gateway keeps serving');
  };
  const onException = (err: Error, origin: string) => onError(err, origin);
  const onRejection = (reason: unknown) => onError(reason, 'unhandledRejection');
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return {
    uninstall() {
      process.off('uncaughtException', onException);
      process.off('unhandledRejection', onRejection);
    },
  };
}
