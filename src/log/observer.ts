/**
 * The observation seam: what the gateway reports about its own work, to whoever listens (metrics,
 * the status page; later traces and a circuit breaker). Session core, supervisor, store and HTTP
 * edge call an `Observer` they were handed through the Runtime; none of them knows who listens.
 *
 * Hot path rules (docs/architecture.md, "Observation"): events carry objects that exist anyway
 * (the in-flight record of a request, the session itself) and primitives, never an object built
 * for the event; with nothing attached the Runtime hands out `NOOP_OBSERVER`, whose methods are
 * empty, and `observing` false lets callers skip even the clock reads.
 */
import type { RequestId } from '../jsonrpc/types.ts';

/** How a downstream reached the gateway: Streamable HTTP, WebSocket, or legacy HTTP+SSE. */
export type DownstreamTransport = 'streamable-http' | 'websocket' | 'sse';

/** A live downstream session as observers see it (the session object itself: nothing is copied). */
export interface ObservedSession {
  readonly id: string;
  /** The endpoint key (`target:<name>`, `group:<name>`, ...); bounded by the config. */
  readonly endpoint: string;
  readonly transport: DownstreamTransport;
  /** The principal's id with gateway.auth; undefined without. */
  readonly principal: string | undefined;
  /** The revision the downstream speaks; undefined until initialize. */
  readonly protocolVersion: string | undefined;
  /** Date.now() when it was created. */
  readonly openedAt: number;
  /** Date.now() of its last request. */
  readonly lastActivity: number;
}

/** One downstream request being served (the session core's in-flight record itself). */
export interface ObservedRequest {
  readonly session: ObservedSession;
  /** The revision the request was made in: a 2026 request's own, else its session's (metrics' `era`). */
  readonly protocolVersion: string | undefined;
  readonly clientId: RequestId;
  readonly method: string;
  /** What it names (jsonrpc/methods.ts): the tool of tools/call, the prompt of prompts/get, the URI of resources/read or (un)subscribe; a list's cursor. */
  readonly subject: string | undefined;
  /** The member that took it; undefined when the gateway answered (or refused) it itself. */
  readonly member: { readonly name: string } | undefined;
  /** performance.now() at arrival (0 when nobody observes). */
  readonly startedAt: number;
  /** performance.now() when it went upstream; 0: it never did. */
  readonly sentAt: number;
  /** Milliseconds the upstream took (sent to answered); 0: no upstream answer. */
  readonly upstreamMs: number;
  /** performance.now() when it ended (set just before requestEnded: one clock read for every observer). */
  readonly endedAt: number;
}

/** How a request ended. `denied`: refused by a filter or policy (the client saw "unknown"). */
export type RequestOutcome = 'ok' | 'error' | 'cancelled' | 'denied';

/** Why a session went away: `evicted` to make room, `reaped` idle or never initialized, `ended` anything else. */
export type SessionCloseCause = 'ended' | 'evicted' | 'reaped';

/** One upstream (a member of a session) changing state; `start-failed`: a start or handshake that did not succeed. */
export type UpstreamEvent = 'start' | 'restart' | 'exit' | 'start-failed';

/** What one guardrail hook (or the redaction guard) did to a message (session/hooks/). */
export type HookOutcome = 'allow' | 'deny' | 'modify' | 'failed-open' | 'failed-closed' | 'redacted';

/** Refused at the edge before any session saw it. */
export type RefusalKind = 'auth' | 'rate-limit';

/**
 * What observers hear. Every method must return quickly and never throw (the callers do not
 * guard): count, sample, remember; anything slow happens when someone reads the results.
 */
export interface Observer {
  /** False for the no-op observer: callers may skip work done only for observers (clock reads). */
  readonly observing: boolean;
  sessionOpened(session: ObservedSession): void;
  sessionClosed(session: ObservedSession, cause: SessionCloseCause): void;
  requestStarted(request: ObservedRequest): void;
  /** `code`: the GW_* code when the gateway failed it; an upstream's own JSON-RPC error has none. */
  requestEnded(request: ObservedRequest, outcome: RequestOutcome, code: string | undefined, correlationId: string | undefined): void;
  /** A list answer from `target` (`result` as the upstream sent it); `first`: no cursor was sent. */
  listed(target: string, method: string, result: unknown, first: boolean): void;
  /** `stderr`: the tail of an exited child's stderr (scrubbed of the values the gateway gave it), when there is one. */
  upstream(target: string, event: UpstreamEvent, stderr?: readonly string[]): void;
  refused(kind: RefusalKind, code: string): void;
  /** A hook of `target` judged a request or a result (`redacted`: the built-in guard replaced something). */
  hooked(target: string, phase: 'request' | 'response', outcome: HookOutcome): void;
  /** Bytes read from and written to downstream sockets since the last report. */
  bytes(read: number, written: number): void;
  /** A pinning decision about an item of `target` (governance/pin-registry.ts): rare, never per message. */
  pinned(target: string, decision: PinDecisionName): void;
}

/** governance/pin-registry.ts PinDecision, named here so that every layer may report one. */
export type PinDecisionName = 'recorded' | 'blocked' | 'warned' | 'approved' | 'refused';

const nothing = (): void => undefined;

/** The observer of a gateway with nothing attached: every event is an empty call. */
export const NOOP_OBSERVER: Observer = Object.freeze({
  observing: false,
  sessionOpened: nothing,
  sessionClosed: nothing,
  requestStarted: nothing,
  requestEnded: nothing,
  listed: nothing,
  upstream: nothing,
  refused: nothing,
  hooked: nothing,
  bytes: nothing,
  pinned: nothing,
});

/** One observer that tells each of `observers`, in order (none: the no-op; one: itself). */
export function combineObservers(observers: readonly Observer[]): Observer {
  const live = observers.filter((o) => o.observing);
  if (live.length === 0) return NOOP_OBSERVER;
  if (live.length === 1) return live[0] as Observer;
  return {
    observing: true,
    sessionOpened: (s) => live.forEach((o) => o.sessionOpened(s)),
    sessionClosed: (s, cause) => live.forEach((o) => o.sessionClosed(s, cause)),
    requestStarted: (r) => {
      for (let i = 0; i < live.length; i++) (live[i] as Observer).requestStarted(r);
    },
    requestEnded: (r, outcome, code, correlationId) => {
      for (let i = 0; i < live.length; i++) (live[i] as Observer).requestEnded(r, outcome, code, correlationId);
    },
    listed: (target, method, result, first) => live.forEach((o) => o.listed(target, method, result, first)),
    upstream: (target, event, stderr) => live.forEach((o) => o.upstream(target, event, stderr)),
    refused: (kind, code) => live.forEach((o) => o.refused(kind, code)),
    hooked: (target, phase, outcome) => live.forEach((o) => o.hooked(target, phase, outcome)),
    bytes: (read, written) => live.forEach((o) => o.bytes(read, written)),
    pinned: (target, decision) => live.forEach((o) => o.pinned(target, decision)),
  };
}

/** The stderr tail an upstream failure carries for the log (transport/stdio-errors.ts `internal.stderr`), if any. */
export function stderrOf(err: unknown): readonly string[] | undefined {
  const stderr = (err as { internal?: { stderr?: unknown } } | undefined)?.internal?.stderr;
  return Array.isArray(stderr) && stderr.every((line) => typeof line === 'string') ? (stderr as string[]) : undefined;
}
