/**
 * The stdio upstream wire: one child process speaking NDJSON on stdin/stdout, logging on stderr.
 *
 * The child is spawned without a shell and `detached`, so it leads its own process group and
 * shutdown can signal the whole group (grandchildren included). See PROTOCOL.md "stdio upstreams":
 * skip blank and non-JSON lines without dying, wait for `drain` when stdin is full, and shut down
 * by closing stdin, then SIGTERM, then SIGKILL.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { StdioTargetConfig } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { parseJson, toMessage } from '../jsonrpc/envelope.ts';
import { createLineSplitter, serializeMessage, sniffLineHead } from '../jsonrpc/ndjson.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { createLogThrottle } from './log-throttle.ts';
import { registerGroup, signalGroup, unregisterGroup } from './process-tree.ts';
import type { Transport } from './types.ts';

export { killAllChildrenNow } from './process-tree.ts';

/** Stderr lines kept for the `data` of an exit error: enough to show why, small enough to send. */
const STDERR_TAIL_LINES = 20;
/** Stderr is free text; a line longer than this is cut (its head is kept). */
const STDERR_MAX_LINE_BYTES = 16 * 1024;
/** Warnings about unparseable stdout lines per second; a broken server must not flood the log. */
const GARBAGE_WARNINGS_PER_SECOND = 5;
/** How much of an offending line goes into a log entry. */
const SNIPPET_CHARS = 200;
/**
 * After the leader exits we wait for its pipes to close so that its last stdout lines and stderr
 * reach us; a process outside the group (one that called setsid) may hold them open forever.
 */
const PIPE_CLOSE_WAIT_MS = 500;

export interface StdioTransportOptions {
  target: StdioTargetConfig;
  /** One logger per upstream, already bound to the target; the transport adds the child's pid. */
  logger: Logger;
}

export interface StdioTransport extends Transport {
  /** The child's pid (also its process group id) once spawned. */
  readonly pid: number | undefined;
  /** The last stderr lines (up to 20), oldest first. */
  stderrTail(): string[];
}

type ChildProc = ChildProcessByStdio<Writable, Readable, Readable>;
type State = 'new' | 'starting' | 'open' | 'closed';

/**
 * Creates the transport; nothing is spawned until `start()`.
 *
 * `onclose` is called exactly once after a successful `start()`: without a reason when `close()`
 * asked for it, with GW_UPSTREAM_EXITED (exit code, signal, stderr tail) when the child exited on
 * its own, or with GW_UPSTREAM_MESSAGE_TOO_LARGE when an over-long line could not be attributed.
 * A failed `start()` rejects with GW_UPSTREAM_SPAWN_FAILED and never calls `onclose`.
 */
export function createStdioTransport(options: StdioTransportOptions): StdioTransport {
  const { target } = options;
  const name = target.name;
  let log = options.logger;
  let state: State = 'new';
  let child: ChildProc | undefined;
  let startPromise: Promise<void> | undefined;
  let closePromise: Promise<void> | undefined;
  let closeRequested = false;
  let failure: GatewayError | undefined;
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let pipeTimer: NodeJS.Timeout | undefined;
  const tail: string[] = [];
  const drainWaiters = new Set<{ resolve: () => void; reject: (err: GatewayError) => void }>();
  const stderrThrottle = createLogThrottle(target.stderrLinesPerSecond);
  const garbageThrottle = createLogThrottle(GARBAGE_WARNINGS_PER_SECOND);

  let resolveExited!: () => void;
  const exited = new Promise<void>((resolve) => (resolveExited = resolve));
  let resolveFinalized!: () => void;
  const finalized = new Promise<void>((resolve) => (resolveFinalized = resolve));

  const stdoutSplitter = createLineSplitter({
    maxLineBytes: target.maxMessageBytes,
    onLine: onStdoutLine,
    onOverflow: onStdoutOverflow,
  });
  const stderrSplitter = createLineSplitter({
    maxLineBytes: STDERR_MAX_LINE_BYTES,
    onLine: onStderrLine,
    onOverflow: (head) => onStderrLine(head + '… [line cut]'),
  });

  const transport: StdioTransport = {
    get pid() {
      return child?.pid;
    },
    stderrTail: () => [...tail],
    start() {
      startPromise ??= new Promise<void>(spawnChild);
      return startPromise;
    },
    async send(message: JsonRpcMessage) {
      const stdin = child?.stdin;
      const usable = state === 'open' && !closeRequested && failure === undefined && exitInfo === undefined;
      if (!usable || stdin === undefined || !stdin.writable) {
        throw closedError();
      }
      stdin.write(serializeMessage(message));
      // One shared 'drain' listener serves every waiting send: no listener per message.
      if (stdin.writableNeedDrain) {
        await new Promise<void>((resolve, reject) => drainWaiters.add({ resolve, reject }));
      }
    },
    close() {
      closePromise ??= shutdown();
      return closePromise;
    },
  };

  function spawnChild(resolve: () => void, reject: (err: unknown) => void): void {
    if (state === 'closed') {
      reject(closedError());
      return;
    }
    state = 'starting';
    let proc: ChildProc;
    try {
      proc = spawn(target.command, [...target.args], {
        shell: false,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, ...target.env },
        ...(target.cwd === undefined ? {} : { cwd: target.cwd }),
        windowsHide: true,
      });
    } catch (err) {
      // spawn throws synchronously for invalid arguments (e.g. a NUL byte in the command).
      state = 'closed';
      reject(spawnFailed(err));
      return;
    }
    child = proc;
    proc.once('spawn', () => {
      state = 'open';
      if (proc.pid !== undefined) registerGroup(proc.pid);
      log = options.logger.child({ upstreamPid: proc.pid });
      log.debug({ command: target.command }, 'upstream process started');
      resolve();
    });
    proc.on('error', (err) => {
      if (state === 'starting') {
        // ENOENT, EACCES...: no process exists, so there is nothing to close and no onclose.
        state = 'closed';
        proc.stdin.destroy();
        proc.stdout.destroy();
        proc.stderr.destroy();
        resolveExited();
        resolveFinalized();
        reject(spawnFailed(err));
        return;
      }
      log.warn({ err }, 'upstream process error');
    });
    proc.on('exit', onExit);
    proc.on('close', finalize);
    proc.stdout.on('data', (chunk: Buffer) => stdoutSplitter.push(chunk));
    proc.stdout.on('end', () => stdoutSplitter.end());
    proc.stderr.on('data', (chunk: Buffer) => stderrSplitter.push(chunk));
    proc.stderr.on('end', () => stderrSplitter.end());
    proc.stdin.on('drain', () => settleDrainWaiters());
    // EPIPE / ECONNRESET when the child stops reading: the exit that follows says why; not fatal here.
    proc.stdin.on('error', (err) => {
      log.debug({ err }, 'upstream stdin error');
      settleDrainWaiters(closedError());
    });
    proc.stdin.on('close', () => settleDrainWaiters(closedError()));
    proc.stdout.on('error', (err) => log.debug({ err }, 'upstream stdout error'));
    proc.stderr.on('error', (err) => log.debug({ err }, 'upstream stderr error'));
  }

  function onStdoutLine(line: string): void {
    if (state === 'closed') return;
    let value: unknown;
    try {
      value = parseJson(line);
    } catch {
      warnGarbage('not JSON', line);
      return;
    }
    const message = toMessage(value);
    if (typeof message === 'string') {
      warnGarbage(message, line);
      return;
    }
    callSafely('onmessage', () => transport.onmessage?.(message));
  }

  function onStdoutOverflow(head: string, totalBytes: number): void {
    if (state === 'closed') return;
    const limit = target.maxMessageBytes;
    const error = new GatewayError(
      'GW_UPSTREAM_MESSAGE_TOO_LARGE',
      `Upstream server "${name}" sent a message of ${totalBytes} bytes, over the limit of ${limit}`,
      { target: name, limit },
    );
    const sniffed = sniffLineHead(head);
    const snippet = head.slice(0, SNIPPET_CHARS);
    if (!sniffed.hasMethod && sniffed.id !== undefined) {
      const id = sniffed.id;
      log.warn({ id, bytes: totalBytes, limit }, 'over-long upstream response dropped');
      callSafely('onundeliverable', () => transport.onundeliverable?.(id, error));
      return;
    }
    if (sniffed.hasMethod) {
      // A notification (or a request from the server, which it will time out itself): nothing on
      // our side waits for it, so dropping it keeps the child without leaving anything hanging.
      log.warn({ head: snippet, bytes: totalBytes, limit }, 'over-long upstream request or notification dropped');
      return;
    }
    // A response we cannot attribute: some pending request would never be answered.
    log.error({ head: snippet, bytes: totalBytes, limit }, 'over-long upstream message without a readable id; killing the upstream');
    failure = error;
    killGroupNow();
  }

  function onStderrLine(line: string): void {
    tail.push(line);
    if (tail.length > STDERR_TAIL_LINES) tail.shift();
    if (!stderrThrottle.take()) return;
    reportSuppressedStderr();
    log.info({ stderr: line }, 'upstream stderr');
  }

  function reportSuppressedStderr(): void {
    const suppressed = stderrThrottle.drainSuppressed();
    if (suppressed > 0) log.warn({ suppressed }, 'upstream stderr lines suppressed (rate limit)');
  }

  function warnGarbage(problem: string, line: string): void {
    if (!garbageThrottle.take()) return;
    const suppressed = garbageThrottle.drainSuppressed();
    log.warn({ problem, line: line.slice(0, SNIPPET_CHARS), ...(suppressed > 0 ? { suppressed } : {}) }, 'upstream wrote a line that is not a JSON-RPC message; skipped');
  }

  function onExit(code: number | null, signal: NodeJS.Signals | null): void {
    exitInfo = { code, signal };
    const pid = child?.pid;
    if (pid !== undefined) {
      // The leader is gone; whatever it left in its group goes with it, asked for or not.
      signalGroup(pid, 'SIGKILL');
      unregisterGroup(pid);
    }
    resolveExited();
    pipeTimer = setTimeout(finalize, PIPE_CLOSE_WAIT_MS);
  }

  function finalize(): void {
    if (state === 'closed') return;
    state = 'closed';
    if (pipeTimer !== undefined) clearTimeout(pipeTimer);
    stdoutSplitter.end();
    stderrSplitter.end();
    child?.stdin.destroy();
    child?.stdout.destroy();
    child?.stderr.destroy();
    reportSuppressedStderr();
    settleDrainWaiters(closedError());
    const reason = closeRequested ? undefined : (failure ?? exitedError());
    if (reason !== undefined) log.warn({ err: reason }, 'upstream closed unexpectedly');
    resolveFinalized();
    callSafely('onclose', () => transport.onclose?.(reason));
  }

  async function shutdown(): Promise<void> {
    if (state === 'new') {
      // Never started: nothing to stop, and no onclose (there was no open wire).
      state = 'closed';
      return;
    }
    if (state === 'starting') await startPromise?.catch(() => undefined);
    if (state === 'closed' && exitInfo === undefined) return;
    closeRequested = true;
    const proc = child as ChildProc;
    const pid = proc.pid as number;
    const grace = target.shutdownGraceMs;
    if (exitInfo === undefined) {
      proc.stdin.end();
      if (!(await exitWithin(grace))) {
        log.info({ graceMs: grace }, 'upstream still running after stdin closed; sending SIGTERM to its group');
        signalGroup(pid, 'SIGTERM');
        if (!(await exitWithin(grace))) {
          log.warn({ graceMs: grace }, 'upstream ignored SIGTERM; sending SIGKILL to its group');
          signalGroup(pid, 'SIGKILL');
          if (!(await exitWithin(grace))) {
            // Unkillable (stuck in the kernel): stop waiting, keep it registered for killAllChildrenNow.
            log.error('upstream did not exit after SIGKILL');
            finalize();
          }
        }
      }
    }
    // onExit already SIGKILLed the group; wait for the pipes so onclose comes after the last line.
    await finalized;
  }

  async function exitWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
    try {
      return await Promise.race([exited.then(() => true), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  function killGroupNow(): void {
    const pid = child?.pid;
    if (pid !== undefined && exitInfo === undefined) signalGroup(pid, 'SIGKILL');
  }

  function settleDrainWaiters(error?: GatewayError): void {
    for (const waiter of drainWaiters) {
      if (error === undefined) waiter.resolve();
      else waiter.reject(error);
    }
    drainWaiters.clear();
  }

  function callSafely(hook: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      // A throwing handler must not break the stream handlers (and with them every later message).
      log.error({ err, hook }, 'transport handler threw');
    }
  }

  function closedError(): GatewayError {
    return new GatewayError('GW_UPSTREAM_CLOSED', `Upstream server "${name}" is closed`, { target: name });
  }

  function spawnFailed(err: unknown): GatewayError {
    const e = err as NodeJS.ErrnoException;
    const reason = e.code ?? (err instanceof Error ? err.message : String(err));
    return new GatewayError(
      'GW_UPSTREAM_SPAWN_FAILED',
      `Upstream server "${name}" could not be started: ${err instanceof Error ? err.message : String(err)}`,
      { target: name, reason },
      { cause: err },
    );
  }

  function exitedError(): GatewayError {
    const code = exitInfo?.code ?? null;
    const signal = exitInfo?.signal ?? null;
    const how = signal !== null ? `was killed by ${signal}` : `exited with code ${String(code)}`;
    return new GatewayError('GW_UPSTREAM_EXITED', `Upstream server "${name}" ${how}`, {
      target: name,
      exitCode: code,
      signal,
      stderr: [...tail],
    });
  }

  return transport;
}
