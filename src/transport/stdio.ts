/**
 * The stdio upstream wire: one child process speaking NDJSON on stdin/stdout, logging on stderr.
 *
 * The child is spawned without a shell and `detached`, so it leads its own process group and
 * shutdown can signal the whole group (grandchildren included). See PROTOCOL.md "stdio upstreams":
 * skip blank and non-JSON lines without dying, wait for `drain` when stdin is full, and shut down
 * by closing stdin, then SIGTERM, then SIGKILL. The transport's state, spawn, exit and shutdown
 * are in stdio-lifecycle.ts; the child's pipes and events are wired in stdio-child.ts.
 */
import type { StdioTargetConfig } from '../config/types.ts';
import { serializeMessage } from '../jsonrpc/ndjson.ts';
import { setTraceMeta } from '../jsonrpc/trace-context.ts';
import type { JsonRpcMessage, JsonRpcRequest } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { busyError, closedError } from './stdio-errors.ts';
import { createLink, shutdown, spawnChild, type StdioLink, stderrTail } from './stdio-lifecycle.ts';
import type { StdoutGarbage } from './stdout-reader.ts';
import { SENT, type SendOptions, type Transport } from './types.ts';

export { killAllChildrenNow } from './process-tree.ts';

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

/**
 * Creates the transport; nothing is spawned until `start()`.
 *
 * `onclose` is called exactly once after a successful `start()`, after the last stdout line was
 * delivered: without a reason when `close()` asked for it, with GW_UPSTREAM_EXITED (exit code,
 * signal, stderr tail) when the child exited or was killed otherwise, or with
 * GW_UPSTREAM_MESSAGE_TOO_LARGE when an over-long line could not be attributed to a request (the
 * child is then killed). A failed `start()` rejects with GW_UPSTREAM_SPAWN_FAILED and never calls
 * `onclose`; nor does `close()` before `start()`. The state and its life (spawn, exit, shutdown)
 * are in stdio-lifecycle.ts; the per-message paths (send, delivery) stay here.
 */
export function createStdioTransport(options: StdioTransportOptions): StdioTransport {
  const transport: StdioTransport = {
    get pid() {
      return s.child?.pid;
    },
    stderrTail: () => stderrTail(s),
    garbage: () => s.stdout?.garbage ?? { lines: 0, first: undefined },
    start() {
      s.startPromise ??= new Promise<void>((resolve, reject) => spawnChild(s, resolve, reject));
      return s.startPromise;
    },
    // Not async: a call costs no promise of its own when the pipe has room (issue 34); a failure
    // is still a rejection, as the Transport contract says.
    send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
      try {
        return sendNow(s, message, options);
      } catch (err) {
        return Promise.reject(err);
      }
    },
    withdraw(upstreamId: number) {
      return s.queue?.withdraw(upstreamId) ?? false;
    },
    close() {
      s.closePromise ??= shutdown(s);
      return s.closePromise;
    },
  };
  const s: StdioLink = createLink(options, transport, onMessage);

  // The hot path: one call per message, no closure (unlike the rare hooks in stdio-lifecycle.ts).
  function onMessage(message: JsonRpcMessage): void {
    if (s.state === 'closed') return;
    s.answered = true;
    try {
      transport.onmessage?.(message);
    } catch (error) {
      // A throwing handler must not break the stream handlers (and with them every later message).
      s.log.error({ err: error, hook: 'onmessage' }, 'transport handler threw');
    }
  }

  return transport;
}

/** Queues the message's line; throws when it cannot be sent. Paced like a write that waits for 'drain'. */
function sendNow(s: StdioLink, message: JsonRpcMessage, options?: SendOptions): Promise<void> {
  const { state, queue } = s;
  const stdin = s.child?.stdin;
  const usable = state === 'open' && !s.closeRequested && s.failure === undefined && s.exitInfo === undefined;
  if (!usable || stdin === undefined || !stdin.writable || queue === undefined) throw closedError(s.target.name, state === 'new' || state === 'starting');
  const id = 'method' in message && 'id' in message && typeof message.id === 'number' ? message.id : undefined;
  // stdio has no headers (per-message ones are dropped) and one pipe for every message (a cancel
  // is the correlator's notification, or withdraw): trace context rides in the request's _meta
  // (semconv MCP, "Context propagation").
  const trace = options?.trace;
  if (trace !== undefined && id !== undefined) setTraceMeta(message as JsonRpcRequest, trace);
  if (!queue.push(serializeMessage(message), id)) throw busyError(s.target, queue.queuedBytes, s.log);
  return queue.waitForRoom() ?? SENT;
}
