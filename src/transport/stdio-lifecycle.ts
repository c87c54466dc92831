/**
 * The stdio transport's state and its life (stdio.ts keeps the transport object and the hot path):
 * spawning the child, its exit, the wait for its pipes, and shutdown by closing stdin, then
 * SIGTERM, then SIGKILL (PROTOCOL.md "stdio upstreams"). Module-level functions take the state
 * object instead of closing over it, so no closure is made per transport beyond the child's hooks.
 */
import type { StdinQueue } from './stdin-queue.ts';
import { wireChild } from './stdio-child.ts';
import { childEnv } from './child-env.ts';
import { type ChildProc, limitsHit, spawnContained } from './containment.ts';
import type { ChildCgroup } from './cgroups.ts';
import type { StdioTargetConfig } from '../config/types.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { killEscapees, nextUpstreamTag, UPSTREAM_TAG_VAR } from './escapees.ts';
import { signalGroup, stopGroup, unregisterGroup } from './process-tree.ts';
import type { StderrSink } from './stderr-sink.ts';
import { closedError, type ExitInfo, exitedError, overflowError, spawnFailed } from './stdio-errors.ts';
import type { Overflow, StdoutGarbage, StdoutReader } from './stdout-reader.ts';
import type { Transport } from './types.ts';

/**
 * After the leader exits we wait for its pipes to close so that its last stdout lines and stderr
 * reach us first; a process outside the group (one that called setsid) may hold them open forever.
 */
const PIPE_CLOSE_WAIT_MS = 500;

export type StdioPhase = 'new' | 'starting' | 'open' | 'closed';

/** What a stdio transport is made from: StdioTransportOptions (stdio.ts), which documents each field. */
export interface StdioLinkInit {
  readonly target: StdioTargetConfig;
  readonly logger: Logger;
  readonly extraEnv?: Readonly<Record<string, string>> | undefined;
  readonly scrub?: ((text: string) => string) | undefined;
}

/** The mutable state of one stdio transport. */
export interface StdioLink {
  readonly target: StdioTargetConfig;
  /** The logger given at creation (the child's hooks get it); `log` adds `upstreamPid` once spawned. */
  readonly baseLogger: Logger;
  readonly extraEnv: Readonly<Record<string, string>> | undefined;
  readonly scrub: ((text: string) => string) | undefined;
  /** The transport object: its handlers (onclose, onundeliverable) are called from here. */
  readonly transport: Transport;
  /** Hands one stdout message to the transport's onmessage (stdio.ts; the hot path). */
  readonly deliver: (message: JsonRpcMessage) => void;
  log: Logger;
  state: StdioPhase;
  child: ChildProc | undefined;
  stdout: (StdoutReader & { readonly garbage: StdoutGarbage }) | undefined;
  stderr: StderrSink | undefined;
  startPromise: Promise<void> | undefined;
  closePromise: Promise<void> | undefined;
  closeRequested: boolean;
  failure: GatewayError | undefined;
  exitInfo: ExitInfo | undefined;
  /** Whether the child ever wrote a message: one that dies before says why only on stderr. */
  answered: boolean;
  pipeTimer: NodeJS.Timeout | undefined;
  /** This child's mark in the environment of everything it starts (see escapees.ts). */
  tag: string | undefined;
  /** The child's cgroups when it has memory or process limits (cgroups.ts). */
  cgroup: ChildCgroup | undefined;
  cgroupRemoved: Promise<void> | undefined;
  /** Lines waiting for room in the child's stdin, bounded (stdin-queue.ts). */
  queue: StdinQueue | undefined;
  readonly exited: Promise<void>;
  readonly resolveExited: () => void;
  readonly finalized: Promise<void>;
  readonly resolveFinalized: () => void;
}

export function createLink(init: StdioLinkInit, transport: Transport, deliver: (message: JsonRpcMessage) => void): StdioLink {
  let resolveExited!: () => void;
  const exited = new Promise<void>((resolve) => (resolveExited = resolve));
  let resolveFinalized!: () => void;
  const finalized = new Promise<void>((resolve) => (resolveFinalized = resolve));
  return {
    target: init.target,
    baseLogger: init.logger,
    extraEnv: init.extraEnv,
    scrub: init.scrub,
    transport,
    deliver,
    log: init.logger,
    state: 'new',
    child: undefined,
    stdout: undefined,
    stderr: undefined,
    startPromise: undefined,
    closePromise: undefined,
    closeRequested: false,
    failure: undefined,
    exitInfo: undefined,
    answered: false,
    pipeTimer: undefined,
    tag: undefined,
    cgroup: undefined,
    cgroupRemoved: undefined,
    queue: undefined,
    exited,
    resolveExited,
    finalized,
    resolveFinalized,
  };
}

/** The last stderr lines (up to 20), oldest first, scrubbed of the gateway's secrets. */
export function stderrTail(s: StdioLink): string[] {
  const tail = s.stderr?.tail() ?? [];
  return s.scrub === undefined ? tail : tail.map(s.scrub);
}

export function spawnChild(s: StdioLink, resolve: () => void, reject: (err: unknown) => void): void {
  if (s.state === 'closed') {
    reject(closedError(s.target.name, false));
    return;
  }
  s.state = 'starting';
  const { target } = s;
  let proc: ChildProc;
  const tag = nextUpstreamTag();
  s.tag = tag;
  try {
    // The tag marks every descendant, so one that escapes the group is still found at the end.
    ({ proc, cgroup: s.cgroup } = spawnContained(target, { ...childEnv(target), ...s.extraEnv, [UPSTREAM_TAG_VAR]: tag }, tag));
  } catch (err) {
    // Containment refused, or spawn threw for invalid arguments (its cgroups are removed).
    s.state = 'closed';
    reject(spawnFailed(target, err, s.log));
    return;
  }
  const wired = wireChild(proc, target, s.baseLogger, {
    spawned: () => {
      s.state = 'open';
      resolve();
    },
    starting: () => s.state === 'starting',
    spawnFailed: (error) => failSpawn(s, error, reject),
    exited: (code, signal) => onExit(s, code, signal),
    closed: () => finalize(s),
    message: s.deliver,
    overflow: (overflow) => onOverflow(s, overflow),
  });
  if (wired === undefined) return;
  s.child = proc;
  ({ log: s.log, stdout: s.stdout, stderr: s.stderr, queue: s.queue } = wired);
}

/** ENOENT, EACCES, EMFILE...: no process exists, so there is nothing to close and no onclose. */
function failSpawn(s: StdioLink, error: Error, reject: (err: unknown) => void): void {
  s.state = 'closed';
  void s.cgroup?.remove();
  s.resolveExited();
  s.resolveFinalized();
  reject(spawnFailed(s.target, error, s.log));
}

function onOverflow(s: StdioLink, overflow: Overflow): void {
  if (s.state === 'closed' || overflow.kind === 'dropped') return;
  const error = overflowError(s.target, overflow.reason, overflow.totalBytes);
  if (overflow.kind === 'response') {
    const id = overflow.id;
    callSafely(s, 'onundeliverable', () => s.transport.onundeliverable?.(id, error));
    return;
  }
  // A too-deep line was whole: the stream is still in step, and the request it answered (if
  // any) times out as usual.
  if (overflow.reason === 'depth') return;
  // Unattributable: some pending request would wait forever; better to fail them all now.
  if (s.closeRequested || s.failure !== undefined) return;
  s.failure = error;
  const pid = s.child?.pid;
  if (pid !== undefined && s.exitInfo === undefined) signalGroup(pid, 'SIGKILL');
}

function onExit(s: StdioLink, code: number | null, signal: NodeJS.Signals | null): void {
  s.exitInfo = { code, signal };
  const { target } = s;
  if (target.limits !== undefined) {
    for (const hit of limitsHit(target, s.cgroup, code, signal)) s.log.warn(hit, `upstream hit its limit limits.${hit.limit} (${hit.value})`);
  }
  const pid = s.child?.pid;
  if (pid !== undefined) {
    // The leader is gone; whatever it left in its group goes with it, asked for or not.
    signalGroup(pid, 'SIGKILL');
    unregisterGroup(pid);
  }
  s.resolveExited();
  s.pipeTimer = setTimeout(finalize, PIPE_CLOSE_WAIT_MS, s);
}

function finalize(s: StdioLink): void {
  if (s.state === 'closed') return;
  s.state = 'closed';
  if (s.pipeTimer !== undefined) clearTimeout(s.pipeTimer);
  s.stdout?.end();
  s.stderr?.end();
  s.child?.stdin.destroy();
  s.child?.stdout.destroy();
  s.child?.stderr.destroy();
  s.queue?.clear();
  // The leader and its group are gone; descendants that left the group are not, until now.
  if (s.tag !== undefined) void killEscapees(s.tag, s.log);
  s.cgroupRemoved = s.cgroup?.remove();
  const tail = stderrTail(s);
  const { failure } = s;
  const reason = s.closeRequested ? undefined : (failure ?? exitedError(s.target, s.exitInfo, tail, !s.answered));
  if (reason !== undefined) s.log.warn({ err: reason, ...(failure === undefined ? { stderr: tail } : {}) }, `upstream closed unexpectedly${failure === undefined && tail.length > 0 ? `: ${tail.at(-1) ?? ''}` : ''}`);
  s.resolveFinalized();
  callSafely(s, 'onclose', () => s.transport.onclose?.(reason));
}

export async function shutdown(s: StdioLink): Promise<void> {
  if (s.state === 'new') {
    // Never started: nothing to stop, and no onclose (there was no open wire).
    s.state = 'closed';
    return;
  }
  if (s.state === 'starting') await s.startPromise?.catch(() => undefined);
  if (s.state === 'closed' && s.exitInfo === undefined) return; // start failed
  const proc = s.child as ChildProc;
  // A child that already exited did so unasked: its onclose (maybe still waiting for the pipes)
  // keeps its reason.
  if (s.exitInfo === undefined) {
    s.closeRequested = true;
    const stopped = await stopGroup({
      pgid: proc.pid as number,
      exited: s.exited,
      graceMs: s.target.shutdownGraceMs,
      closeInput: () => {
        s.queue?.end(); // a last notifications/cancelled must not be lost
      },
      logger: s.log,
    });
    // Unkillable (stuck in the kernel): stop waiting; it stays registered for killAllChildrenNow.
    if (!stopped) finalize(s);
  }
  // onExit already SIGKILLed the group; wait for the pipes so onclose comes after the last line.
  await s.finalized;
  await s.cgroupRemoved;
}

export function callSafely(s: StdioLink, hook: string, fn: () => void): void {
  try {
    fn();
  } catch (error) {
    // A throwing handler must not break the stream handlers (and with them every later message).
    s.log.error({ err: error, hook }, 'transport handler threw');
  }
}
