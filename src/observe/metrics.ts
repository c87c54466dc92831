/**
 * Prometheus metrics (docs/operations.md lists them): an Observer (log/observer.ts) that counts
 * into plain numbers (tally.ts), and a per-gateway prom-client Registry that reads them when
 * scraped (metrics-export.ts). Nothing here runs per message but a few Map lookups and additions.
 *
 * Label values that come from clients or servers (methods, tool names, targets, endpoints, codes)
 * are capped per label (label-cap.ts): past `maxLabelValues` distinct values the rest count as
 * `other`.
 */
import { eraOf } from '../jsonrpc/versions.ts';
import type { HookOutcome, ObservedRequest, ObservedSession, Observer, PinDecisionName, RequestOutcome, SessionCloseCause, UpstreamEvent } from '../log/observer.ts';
import { observe } from './histogram.ts';
import { createLabelCap, type LabelCap } from './label-cap.ts';
import { counters, createTree, histograms, leaf, type Histogram, type Tree } from './tally.ts';

export const OUTCOMES: readonly RequestOutcome[] = ['ok', 'error', 'cancelled', 'denied'];
const OUTCOME_INDEX: Readonly<Record<RequestOutcome, number>> = { ok: 0, error: 1, cancelled: 2, denied: 3 };
export const UPSTREAM_EVENTS: readonly UpstreamEvent[] = ['start', 'restart', 'exit', 'start-failed'];
const EVENT_INDEX: Readonly<Record<UpstreamEvent, number>> = { start: 0, restart: 1, exit: 2, 'start-failed': 3 };
export const PIN_DECISIONS: readonly PinDecisionName[] = ['recorded', 'blocked', 'warned', 'approved', 'refused'];
const PIN_INDEX: Readonly<Record<PinDecisionName, number>> = { recorded: 0, blocked: 1, warned: 2, approved: 3, refused: 4 };
export const HOOK_OUTCOMES: readonly HookOutcome[] = ['allow', 'deny', 'modify', 'failed-open', 'failed-closed', 'redacted'];
const HOOK_INDEX: Readonly<Record<HookOutcome, number>> = { allow: 0, deny: 1, modify: 2, 'failed-open': 3, 'failed-closed': 4, redacted: 5 };
/** Slot 0: opened; then one per close cause. */
export const SESSION_SLOTS = ['opened', 'ended', 'evicted', 'reaped'] as const;
const CAUSE_INDEX: Readonly<Record<SessionCloseCause, number>> = { ended: 1, evicted: 2, reaped: 3 };

/** Label for requests the gateway answered itself (no member). */
export const NO_TARGET = 'none';

/** The era of a revision: 2025 (initialize and sessions) up to 2025-11-25, 2026 after. */
export { eraOf };

/** Everything counted, by label values. */
export interface Tallies {
  /** endpoint > era > transport > method: per outcome. */
  readonly requests: Tree<Float64Array>;
  /** target > tool: per outcome. */
  readonly toolCalls: Tree<Float64Array>;
  /** code > target. */
  readonly errors: Tree<Float64Array>;
  /** transport: seconds the gateway added. */
  readonly gatewayTime: Tree<Histogram>;
  /** target: seconds upstream. */
  readonly upstreamTime: Tree<Histogram>;
  /** endpoint > transport: opened, then closed per cause. */
  readonly sessions: Tree<Float64Array>;
  /** target: per upstream event. */
  readonly upstreams: Tree<Float64Array>;
  /** status code ("401", "403"). */
  readonly authFailures: Tree<Float64Array>;
  readonly rateLimited: Float64Array;
  /** target: per pinning decision. */
  readonly pins: Tree<Float64Array>;
  /** target > phase: per hook outcome. */
  readonly hooks: Tree<Float64Array>;
  /** read, written. */
  readonly bytes: Float64Array;
  readonly caps: Readonly<Record<'endpoint' | 'method' | 'target' | 'tool' | 'code', LabelCap>>;
}

export interface MetricsCollector {
  readonly observer: Observer;
  readonly tallies: Tallies;
}

export function createMetricsCollector(maxLabelValues: number): MetricsCollector {
  const cap = () => createLabelCap(maxLabelValues);
  const caps = { endpoint: cap(), method: cap(), target: cap(), tool: cap(), code: cap() };
  const tallies: Tallies = {
    requests: createTree(4, counters(OUTCOMES.length)),
    toolCalls: createTree(2, counters(OUTCOMES.length)),
    errors: createTree(2, counters(1)),
    gatewayTime: createTree(1, histograms),
    upstreamTime: createTree(1, histograms),
    sessions: createTree(2, counters(SESSION_SLOTS.length)),
    upstreams: createTree(1, counters(UPSTREAM_EVENTS.length)),
    authFailures: createTree(1, counters(1)),
    rateLimited: new Float64Array(1),
    pins: createTree(1, counters(PIN_DECISIONS.length)),
    hooks: createTree(2, counters(HOOK_OUTCOMES.length)),
    bytes: new Float64Array(2),
    caps,
  };
  const bump = (slots: Float64Array, i: number) => {
    slots[i] = (slots[i] as number) + 1;
  };
  const sessionSlots = (s: ObservedSession) => leaf(tallies.sessions, caps.endpoint.fold(s.endpoint), s.transport);

  const observer: Observer = {
    observing: true,
    sessionOpened: (s) => bump(sessionSlots(s), 0),
    sessionClosed: (s, cause) => bump(sessionSlots(s), CAUSE_INDEX[cause]),
    requestStarted: () => undefined,
    requestEnded(r: ObservedRequest, outcome, code) {
      const s = r.session;
      const index = OUTCOME_INDEX[outcome];
      const method = caps.method.fold(r.method);
      bump(leaf(tallies.requests, caps.endpoint.fold(s.endpoint), eraOf(r.protocolVersion), s.transport, method), index);
      const target = r.member === undefined ? NO_TARGET : caps.target.fold(r.member.name);
      if (r.method === 'tools/call') bump(leaf(tallies.toolCalls, target, caps.tool.fold(r.subject ?? '')), index);
      if (code !== undefined) bump(leaf(tallies.errors, caps.code.fold(code), target), 0);
      const totalMs = r.endedAt - r.startedAt;
      const upstreamMs = r.upstreamMs;
      if (upstreamMs > 0) observe(leaf(tallies.upstreamTime, target), upstreamMs / 1000);
      observe(leaf(tallies.gatewayTime, s.transport), Math.max(0, totalMs - upstreamMs) / 1000);
    },
    listed: () => undefined,
    upstream: (target, event) => bump(leaf(tallies.upstreams, caps.target.fold(target)), EVENT_INDEX[event]),
    refused(kind, code) {
      if (kind === 'rate-limit') bump(tallies.rateLimited, 0);
      else bump(leaf(tallies.authFailures, code), 0);
    },
    pinned: (target, decision) => bump(leaf(tallies.pins, caps.target.fold(target)), PIN_INDEX[decision]),
    hooked: (target, phase, outcome) => bump(leaf(tallies.hooks, caps.target.fold(target), phase), HOOK_INDEX[outcome]),
    bytes(read, written) {
      tallies.bytes[0] = (tallies.bytes[0] as number) + read;
      tallies.bytes[1] = (tallies.bytes[1] as number) + written;
    },
  };
  return { observer, tallies };
}
