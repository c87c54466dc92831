/**
 * The child's side of the stdio wire (stdio-lifecycle.ts keeps the transport's state): a spawned child's
 * pipes checked, its stdout read as NDJSON, its stderr logged at a bounded rate, its stdin behind a
 * bounded queue, and its process events handed back to the transport.
 */
import { createStdinQueue, DEFAULT_MAX_QUEUED_BYTES, type StdinQueue } from './stdin-queue.ts';
import type { ChildProc } from './containment.ts';
import type { StdioTargetConfig } from '../config/types.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { registerGroup } from './process-tree.ts';
import { createStderrSink, type StderrSink } from './stderr-sink.ts';
import { createStdoutReader, type Overflow, type StdoutGarbage, type StdoutReader } from './stdout-reader.ts';

/** What the transport is told of its child. */
export interface ChildEvents {
  /** 'spawn': the child runs (its group is registered for killAllChildrenNow). */
  spawned(): void;
  /** True while the transport waits for 'spawn': an 'error' then means the child never ran. */
  starting(): boolean;
  /** No process exists (ENOENT, EACCES, EMFILE...); whatever pipes it had are destroyed. */
  spawnFailed(error: Error): void;
  exited(code: number | null, signal: NodeJS.Signals | null): void;
  /** Its pipes closed ('close'). */
  closed(): void;
  message(message: JsonRpcMessage): void;
  overflow(overflow: Overflow): void;
}

export interface WiredChild {
  /** The transport's logger with the child's `upstreamPid`. */
  readonly log: Logger;
  readonly stdout: StdoutReader & { readonly garbage: StdoutGarbage };
  readonly stderr: StderrSink;
  /** Lines waiting for room in the child's stdin, bounded (stdin-queue.ts). */
  readonly queue: StdinQueue;
}

/** Wires a freshly spawned child; undefined when it has no pipes (its 'error' then goes to `spawnFailed`). */
export function wireChild(proc: ChildProc, target: StdioTargetConfig, logger: Logger, events: ChildEvents): WiredChild | undefined {
  // Out of file descriptors (EMFILE/ENFILE), Node gives the child no pipes (stdin, stdout and
  // stderr null or undefined) and the 'error' follows. Nothing below may touch them.
  const pipes: Array<{ destroy(): void } | null | undefined> = [proc.stdin, proc.stdout, proc.stderr];
  if (pipes.some((pipe) => pipe == null)) {
    for (const pipe of pipes) pipe?.destroy();
    proc.once('error', (error) => events.spawnFailed(error));
    return undefined;
  }
  // The pid is known synchronously when spawn succeeds; nothing can be read before 'spawn'.
  const log = proc.pid === undefined ? logger : logger.child({ upstreamPid: proc.pid });
  const out = createStdoutReader({ maxMessageBytes: target.maxMessageBytes, logger: log, onMessage: events.message, onOverflow: events.overflow });
  const err = createStderrSink({ logger: log, linesPerSecond: target.stderrLinesPerSecond });

  proc.once('spawn', () => {
    if (proc.pid !== undefined) registerGroup(proc.pid);
    log.debug({ command: target.command }, 'upstream process started');
    events.spawned();
  });
  proc.on('error', (error) => {
    if (!events.starting()) {
      log.warn({ err: error }, 'upstream process error');
      return;
    }
    proc.stdin.destroy();
    proc.stdout.destroy();
    proc.stderr.destroy();
    events.spawnFailed(error);
  });
  proc.on('exit', events.exited);
  proc.on('close', events.closed);
  proc.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  proc.stdout.on('end', () => out.end());
  proc.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  proc.stderr.on('end', () => err.end());
  const queue = createStdinQueue(proc.stdin, target.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES);
  // EPIPE / ECONNRESET when the child stops reading: the exit that follows says why; not fatal here.
  proc.stdin.on('error', (error) => log.debug({ err: error }, 'upstream stdin error'));
  proc.stdin.on('close', () => queue.clear());
  proc.stdout.on('error', (error) => log.debug({ err: error }, 'upstream stdout error'));
  proc.stderr.on('error', (error) => log.debug({ err: error }, 'upstream stderr error'));
  return { log, stdout: out, stderr: err, queue };
}
