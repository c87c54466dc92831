/**
 * The errors of the stdio upstream wire (stdio.ts), each naming its target: not started or closed,
 * not reading its stdin, could not be spawned, sent an over-large or over-deep line, exited.
 */
import type { StdioTargetConfig } from '../config/types.ts';
import { correlated, GatewayError } from '../errors/gateway-error.ts';
import { MAX_JSON_DEPTH } from '../jsonrpc/depth.ts';
import type { Logger } from '../log/logger.ts';
import { DEFAULT_MAX_QUEUED_BYTES } from './stdin-queue.ts';

/** How the child ended: its exit code, or the signal that killed it. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export function closedError(name: string, notStarted: boolean): GatewayError {
  const why = notStarted ? 'is not started' : 'is closed';
  return new GatewayError('GW_UPSTREAM_CLOSED', `Upstream server "${name}" ${why}`, { target: name });
}

export function busyError(target: StdioTargetConfig, queuedBytes: number, log: Logger): GatewayError {
  const name = target.name;
  const limit = target.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
  log.warn({ queuedBytes, limit }, 'upstream is not reading its stdin; request refused');
  return new GatewayError('GW_UPSTREAM_BUSY', `Upstream server "${name}" is not reading its input (${queuedBytes} bytes waiting)`, {
    target: name,
    limit,
  });
}

/**
 * The OS error's text names the command's full path (and the command line may carry secrets):
 * the client gets the error code, the log gets the rest under the same correlation id.
 */
export function spawnFailed(target: StdioTargetConfig, error: unknown, log: Logger): GatewayError {
  const name = target.name;
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? 'spawn failed';
  const details = correlated(name, { reason: code });
  log.warn({ err: error, command: target.command, correlationId: details.correlationId }, 'upstream process could not be started');
  return new GatewayError('GW_UPSTREAM_SPAWN_FAILED', `Upstream server "${name}" could not be started (${code})`, details, { cause: error });
}

export function overflowError(target: StdioTargetConfig, reason: 'size' | 'depth', totalBytes: number): GatewayError {
  const name = target.name;
  if (reason === 'depth') {
    return new GatewayError('GW_UPSTREAM_MESSAGE_TOO_DEEP', `Upstream server "${name}" sent a message nested deeper than ${MAX_JSON_DEPTH} levels`, {
      target: name,
      limit: MAX_JSON_DEPTH,
    });
  }
  const limit = target.maxMessageBytes;
  return new GatewayError('GW_UPSTREAM_MESSAGE_TOO_LARGE', `Upstream server "${name}" sent a message of ${totalBytes} bytes, over the limit of ${limit}`, {
    target: name,
    limit,
  });
}

/** Lines of stderr a client's error carries at most, each cut to its head: enough to say why. */
const ERROR_TAIL_LINES = 10;
const ERROR_LINE_CHARS = 400;

/** The last lines, bounded for an error's `data`. */
function errorTail(tail: readonly string[]): string[] {
  return tail.slice(-ERROR_TAIL_LINES).map((line) => (line.length > ERROR_LINE_CHARS ? `${line.slice(0, ERROR_LINE_CHARS)}… [cut]` : line));
}

/**
 * `tail`: the child's last stderr lines, already scrubbed of the gateway's secrets. `beforeAnswer`:
 * it never wrote a message, so its stderr holds no session's traffic, only why it could not start
 * (a missing file, a missing key): clients get it then, bounded, as they do with `stderrInErrors`.
 */
export function exitedError(target: StdioTargetConfig, exitInfo: ExitInfo | undefined, tail: string[], beforeAnswer = false): GatewayError {
  const name = target.name;
  const code = exitInfo?.code ?? null;
  const signal = exitInfo?.signal ?? null;
  const how = signal !== null ? `was killed by ${signal}` : `exited with code ${String(code)}`;
  // stderr often prints environment values and other sessions' requests: to clients only before
  // the child answered anything, or when the target opts in (never in shared mode); always to the
  // log, with the correlation id.
  const shown = target.stderrInErrors === true || beforeAnswer ? errorTail(tail) : undefined;
  const details = correlated(name, { exitCode: code, signal, ...(shown === undefined ? {} : { stderr: shown }) });
  const last = beforeAnswer ? shown?.at(-1) : undefined;
  return new GatewayError('GW_UPSTREAM_EXITED', `Upstream server "${name}" ${how}${last === undefined ? '' : `: ${last}`}`, details, { internal: { stderr: tail } });
}
