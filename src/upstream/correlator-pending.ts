/**
 * The correlator's pending requests (correlator.ts keeps the Correlator object and the per-message
 * paths): settling them, their timers, and cancelling them upstream. Module-level functions take
 * the correlator's state instead of closing over it; a timer carries the state and the upstream id
 * as its arguments, so no closure is made per request.
 */
import { GatewayError } from '../errors/gateway-error.ts';
import type { JsonRpcNotification, JsonRpcResponse, RequestId } from '../jsonrpc/types.ts';
import type { TimeoutPolicy } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { TraceContext } from '../jsonrpc/trace-context.ts';
import type { SendOptions, Transport } from '../transport/types.ts';

/**
 * Receives the outcome of forwarded requests. Exactly one of onresponse/onerror is called, once per
 * request, with the context given to `request`. One handler can serve many requests (a session
 * passes itself and a per-request record), so no closure is made per message.
 */
export interface PendingHandler<C> {
  /** The upstream's answer with the caller's id restored. */
  onresponse(response: JsonRpcResponse, context: C): void;
  /** The request failed at the gateway: timeout, upstream gone, undeliverable answer. */
  onerror(error: GatewayError, context: C): void;
  /** A `notifications/progress` for this request, token already restored. */
  onprogress?(notification: JsonRpcNotification, context: C): void;
}

export interface Pending {
  readonly handler: PendingHandler<unknown>;
  readonly context: unknown;
  readonly clientId: RequestId;
  readonly clientToken: RequestId | undefined;
  readonly method: string;
  readonly startedAt: number;
  readonly timeouts: TimeoutPolicy;
  /** What the transport's send gets; aborted when the request is withdrawn (cancel, timeout). */
  readonly send: PendingSend;
  timer: NodeJS.Timeout | undefined;
}

/**
 * A request's SendOptions, whose `signal` is made only when a transport reads it: a wire shared by
 * every message (stdio, the SSE stream) never does, and an AbortController with its signal was most
 * of what the correlator allocated per call (issue 34). Aborted before anyone read it, the signal is
 * made aborted, so a transport that reads it late sees what it would have seen.
 */
export class PendingSend implements SendOptions {
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly trace: TraceContext | undefined;
  private controller: AbortController | undefined = undefined;
  private aborted = false;

  constructor(headers: Readonly<Record<string, string>> | undefined, trace: TraceContext | undefined) {
    this.headers = headers;
    this.trace = trace;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort();
    }
    return this.controller.signal;
  }

  abort(): void {
    this.aborted = true;
    this.controller?.abort();
  }
}

/** The mutable state of one correlator. */
export interface CorrelatorState {
  readonly transport: Transport;
  /** Target name, for error data. */
  readonly target: string;
  readonly logger: Logger;
  readonly pending: Map<number, Pending>;
  nextId: number;
  destroyedWith: GatewayError | undefined;
  idleWaiters: Array<() => void>;
}

export function settleIdle(s: CorrelatorState): void {
  if (s.pending.size !== 0 || s.idleWaiters.length === 0) return;
  const waiters = s.idleWaiters;
  s.idleWaiters = [];
  for (const resolve of waiters) resolve();
}

export function take(s: CorrelatorState, upstreamId: number): Pending | undefined {
  const entry = s.pending.get(upstreamId);
  if (entry === undefined) return undefined;
  s.pending.delete(upstreamId);
  if (entry.timer !== undefined) clearTimeout(entry.timer);
  return entry;
}

export function fail(s: CorrelatorState, upstreamId: number, error: GatewayError): void {
  const entry = take(s, upstreamId);
  if (entry === undefined) return;
  entry.handler.onerror(error, entry.context);
  settleIdle(s);
}

export function sendCancel(s: CorrelatorState, upstreamId: number, entry: Pending, reason: string): void {
  const { transport } = s;
  // Still queued for a child that is not reading: take it back; the upstream never saw it.
  if (transport.withdraw?.(upstreamId) === true) return entry.send.abort();
  const note: JsonRpcNotification = {
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId: upstreamId, reason },
  };
  transport.send(note).catch((err: unknown) => s.logger.debug({ err }, 'could not send notifications/cancelled upstream'));
  // After the note is on its way: a wire with one exchange per request ends the request's own.
  entry.send.abort();
}

function onTimeout(s: CorrelatorState, upstreamId: number): void {
  const entry = s.pending.get(upstreamId);
  if (entry === undefined) return;
  const { target } = s;
  const elapsedMs = Date.now() - entry.startedAt;
  s.logger.warn({ upstreamId, method: entry.method, elapsedMs }, 'upstream request timed out; cancelling it upstream');
  sendCancel(s, upstreamId, entry, `Timed out after ${elapsedMs} ms at the gateway`);
  fail(
    s,
    upstreamId,
    new GatewayError('GW_UPSTREAM_TIMEOUT', `Upstream "${target}" did not answer ${entry.method} within ${elapsedMs} ms`, {
      target,
      method: entry.method,
      timeoutMs: entry.timeouts.requestMs,
    }),
  );
}

export function armTimer(s: CorrelatorState, upstreamId: number, entry: Pending): void {
  const { requestMs, maxTotalMs } = entry.timeouts;
  let delay = requestMs;
  if (maxTotalMs > 0) delay = Math.min(delay, Math.max(0, entry.startedAt + maxTotalMs - Date.now()));
  entry.timer = setTimeout(onTimeout, delay, s, upstreamId);
  entry.timer.unref();
}

export function onProgress(s: CorrelatorState, notification: JsonRpcNotification): void {
  const params = notification.params;
  const token = params?.progressToken;
  const upstreamId = typeof token === 'number' ? token : typeof token === 'string' ? Number(token) : NaN;
  const entry = s.pending.get(upstreamId);
  if (entry === undefined || entry.clientToken === undefined || params === undefined) {
    s.logger.debug({ token }, 'progress for no pending request; dropped');
    return;
  }
  params.progressToken = entry.clientToken;
  if (entry.timeouts.resetOnProgress && entry.timer !== undefined) {
    clearTimeout(entry.timer);
    armTimer(s, upstreamId, entry);
  }
  entry.handler.onprogress?.(notification, entry.context);
}
