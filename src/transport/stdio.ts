/**
 * The stdio upstream wire: one child process speaking NDJSON on stdin/stdout, logging on stderr.
 *
 * The child is spawned without a shell and `detached`, so it leads its own process group and
 * shutdown can signal the whole group (grandchildren included). See PROTOCOL.md "stdio upstreams":
 * skip blank and non-JSON lines without dying, wait for `drain` when stdin is full, and shut down
 * by closing stdin, then SIGTERM, then SIGKILL. The child's pipes and events are wired in
 * stdio-child.ts.
 */
import type { StdinQueue } from './stdin-queue.ts';
import { wireChild } from './stdio-child.ts';
import { childEnv } from './child-env.ts';
import { type ChildProc, limitsHit, spawnContained } from './containment.ts';
import type { ChildCgroup } from './cgroups.ts';
import type { StdioTargetConfig } from '../config/types.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import { serializeMessage } from '../jsonrpc/ndjson.ts';
import { setTraceMeta } from '../jsonrpc/trace-context.ts';
import type { JsonRpcMessage, JsonRpcRequest } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { killEscapees, nextUpstreamTag, UPSTREAM_TAG_VAR } from './escapees.ts';
import { signalGroup, stopGroup, unregisterGroup } from './process-tree.ts';
import type { StderrSink } from './stderr-sink.ts';
import { busyError, closedError, type ExitInfo, exitedError, overflowError, spawnFailed } from './stdio-errors.ts';
import type { Overflow, StdoutGarbage, StdoutReader } from './stdout-reader.ts';
import { SENT, type SendOptions, type Transport } from './types.ts';

export { killAllChildrenNow } from './process-tree.ts';

/**
 * After the leader exits we wait for its pipes to close so that its last stdout lines and stderr
 * reach us first; a process outside the group (one that called setsid) may hold them open forever.
 */
const PIPE_CLOSE_WAIT_MS = 500;


export interface StdioTransportOptions {
  target: StdioTargetConfig;
  /** One logger per upstream, already bound to the target; the transport adds `upstreamPid`. */
  logger: Logger;
  /** Variables on top of the target's own (per-principal identity); never logged. */
  extraEnv?: Readonly<Record<string, string>> | undefined;
  /** Takes the gateway's secrets out of stderr lines that leave the transport (the exit error); default: none. */
  scrub?: ((text: string) => string) | undefined;
}

export interface StdioTransport extends Transport {
  /** The child's pid (also its process group id) once spawned. */
  readonly pid: number | undefined;
  /** The last stderr lines (up to 20), oldest first. */
  stderrTail(): string[];
  /** Stdout lines that were not messages (none before spawn). */
  garbage(): StdoutGarbage;
}

type State = 'new' | 'starting' | 'open' | 'closed';

/**
 * Creates the transport; nothing is spawned until `start()`.
 *
 * `onclose` is called exactly once after a successful `start()`, after the last stdout line was
 * delivered: without a reason when `close()` asked for it, with GW_UPSTREAM_EXITED (exit code,
 * signal, stderr tail) when the child exited or was killed otherwise, or with
 * GW_UPSTREAM_MESSAGE_TOO_LARGE when an over-long line could not be attributed to a request (the
 * child is then killed). A failed `start()` rejects with GW_UPSTREAM_SPAWN_FAILED and never calls
 * `onclose`; nor does `close()` before `start()`.
 */
export function createStdioTransport(options: StdioTransportOptions): StdioTransport {
  const { target } = options;
  const name = target.name;
  let log = options.logger;
  let state: State = 'new';
  let child: ChildProc | undefined;
  let stdout: (StdoutReader & { readonly garbage: StdoutGarbage }) | undefined;
  let stderr: StderrSink | undefined;
  let startPromise: Promise<void> | undefined;
  let closePromise: Promise<void> | undefined;
  let closeRequested = false;
  let failure: GatewayError | undefined;
  let exitInfo: ExitInfo | undefined;
  /** Whether the child ever wrote a message: one that dies before says why only on stderr. */
  let answered = false;
  const scrub = options.scrub;
  const tailOf = (sink: StderrSink | undefined) => (scrub === undefined ? (sink?.tail() ?? []) : (sink?.tail() ?? []).map(scrub));
  let pipeTimer: NodeJS.Timeout | undefined;
  /** This child's mark in the environment of everything it starts (see escapees.ts). */
  let tag: string | undefined;
  /** The child's cgroups when it has memory or process limits (cgroups.ts). */
  let cgroup: ChildCgroup | undefined;
  let cgroupRemoved: Promise<void> | undefined;
  /** Lines waiting for room in the child's stdin, bounded (stdin-queue.ts). */
  let queue: StdinQueue | undefined;
  let resolveExited!: () => void;
  const exited = new Promise<void>((resolve) => (resolveExited = resolve));
  let resolveFinalized!: () => void;
  const finalized = new Promise<void>((resolve) => (resolveFinalized = resolve));

  const transport: StdioTransport = {
    get pid() {
      return child?.pid;
    },
    stderrTail: () => tailOf(stderr),
    garbage: () => stdout?.garbage ?? { lines: 0, first: undefined },
    start() {
      startPromise ??= new Promise<void>(spawnChild);
      return startPromise;
    },
    // Not async: a call costs no promise of its own when the pipe has room (issue 34); a failure
    // is still a rejection, as the Transport contract says.
    send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
      try {
        return sendNow(message, options);
      } catch (err) {
        return Promise.reject(err);
      }
    },
    withdraw(upstreamId: number) {
      return queue?.withdraw(upstreamId) ?? false;
    },
    close() {
      closePromise ??= shutdown();
      return closePromise;
    },
  };

  /** Queues the message's line; throws when it cannot be sent. Paced like a write that waits for 'drain'. */
  function sendNow(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    const stdin = child?.stdin;
    const usable = state === 'open' && !closeRequested && failure === undefined && exitInfo === undefined;
    if (!usable || stdin === undefined || !stdin.writable || queue === undefined) throw closedError(name, state === 'new' || state === 'starting');
    const id = 'method' in message && 'id' in message && typeof message.id === 'number' ? message.id : undefined;
    // stdio has no headers (per-message ones are dropped) and one pipe for every message (a cancel
    // is the correlator's notification, or withdraw): trace context rides in the request's _meta
    // (semconv MCP, "Context propagation").
    const trace = options?.trace;
    if (trace !== undefined && id !== undefined) setTraceMeta(message as JsonRpcRequest, trace);
    if (!queue.push(serializeMessage(message), id)) throw busyError(target, queue.queuedBytes, log);
    return queue.waitForRoom() ?? SENT;
  }

  function spawnChild(resolve: () => void, reject: (err: unknown) => void): void {
    if (state === 'closed') {
      reject(closedError(name, false));
      return;
    }
    state = 'starting';
    let proc: ChildProc;
    tag = nextUpstreamTag();
    try {
      // The tag marks every descendant, so one that escapes the group is still found at the end.
      ({ proc, cgroup } = spawnContained(target, { ...childEnv(target), ...options.extraEnv, [UPSTREAM_TAG_VAR]: tag }, tag));
    } catch (err) {
      // Containment refused, or spawn threw for invalid arguments (its cgroups are removed).
      state = 'closed';
      reject(spawnFailed(target, err, log));
      return;
    }
    const wired = wireChild(proc, target, options.logger, {
      spawned: () => {
        state = 'open';
        resolve();
      },
      starting: () => state === 'starting',
      spawnFailed: (error) => failSpawn(error, reject),
      exited: onExit,
      closed: finalize,
      message: onMessage,
      overflow: onOverflow,
    });
    if (wired === undefined) return;
    child = proc;
    ({ log, stdout, stderr, queue } = wired);
  }

  /** ENOENT, EACCES, EMFILE...: no process exists, so there is nothing to close and no onclose. */
  function failSpawn(error: Error, reject: (err: unknown) => void): void {
    state = 'closed';
    void cgroup?.remove();
    resolveExited();
    resolveFinalized();
    reject(spawnFailed(target, error, log));
  }

  // The hot path: one call per message, no closure (unlike the rare hooks below).
  function onMessage(message: JsonRpcMessage): void {
    if (state === 'closed') return;
    answered = true;
    try {
      transport.onmessage?.(message);
    } catch (error) {
      // A throwing handler must not break the stream handlers (and with them every later message).
      log.error({ err: error, hook: 'onmessage' }, 'transport handler threw');
    }
  }

  function onOverflow(overflow: Overflow): void {
    if (state === 'closed' || overflow.kind === 'dropped') return;
    const error = overflowError(target, overflow.reason, overflow.totalBytes);
    if (overflow.kind === 'response') {
      const id = overflow.id;
      callSafely('onundeliverable', () => transport.onundeliverable?.(id, error));
      return;
    }
    // A too-deep line was whole: the stream is still in step, and the request it answered (if
    // any) times out as usual.
    if (overflow.reason === 'depth') return;
    // Unattributable: some pending request would wait forever; better to fail them all now.
    if (closeRequested || failure !== undefined) return;
    failure = error;
    const pid = child?.pid;
    if (pid !== undefined && exitInfo === undefined) signalGroup(pid, 'SIGKILL');
  }

  function onExit(code: number | null, signal: NodeJS.Signals | null): void {
    exitInfo = { code, signal };
    if (target.limits !== undefined) {
      for (const hit of limitsHit(target, cgroup, code, signal)) log.warn(hit, `upstream hit its limit limits.${hit.limit} (${hit.value})`);
    }
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
    stdout?.end();
    stderr?.end();
    child?.stdin.destroy();
    child?.stdout.destroy();
    child?.stderr.destroy();
    queue?.clear();
    // The leader and its group are gone; descendants that left the group are not, until now.
    if (tag !== undefined) void killEscapees(tag, log);
    cgroupRemoved = cgroup?.remove();
    const tail = tailOf(stderr);
    const reason = closeRequested ? undefined : (failure ?? exitedError(target, exitInfo, tail, !answered));
    if (reason !== undefined) log.warn({ err: reason, ...(failure === undefined ? { stderr: tail } : {}) }, `upstream closed unexpectedly${failure === undefined && tail.length > 0 ? `: ${tail.at(-1) ?? ''}` : ''}`);
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
    if (state === 'closed' && exitInfo === undefined) return; // start failed
    const proc = child as ChildProc;
    // A child that already exited did so unasked: its onclose (maybe still waiting for the pipes)
    // keeps its reason.
    if (exitInfo === undefined) {
      closeRequested = true;
      const stopped = await stopGroup({
        pgid: proc.pid as number,
        exited,
        graceMs: target.shutdownGraceMs,
        closeInput: () => {
          queue?.end(); // a last notifications/cancelled must not be lost
        },
        logger: log,
      });
      // Unkillable (stuck in the kernel): stop waiting; it stays registered for killAllChildrenNow.
      if (!stopped) finalize();
    }
    // onExit already SIGKILLed the group; wait for the pipes so onclose comes after the last line.
    await finalized;
    await cgroupRemoved;
  }

  function callSafely(hook: string, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      // A throwing handler must not break the stream handlers (and with them every later message).
      log.error({ err: error, hook }, 'transport handler threw');
    }
  }

  return transport;
}
