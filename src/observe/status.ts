/**
 * What the status page shows (http/status-page.ts renders it, /status/events streams it): an
 * Observer that keeps, per target, the last minute of traffic and its upstream events; the live
 * sessions; a ring of recent errors; and the tools each target listed last. Everything bounded:
 * sessions by the store's own cap, errors by `recentErrors`, tools by MAX_TOOLS per target.
 *
 * Never kept: tokens, headers, environment values, error messages (an upstream's message may
 * carry anything): an error is its code, where and when, and the ids that find it in the logs.
 */
import type { ObservedSession, Observer, UpstreamEvent } from '../log/observer.ts';
import { eraOf } from './metrics.ts';
import { createWindow, record, summarize, type TrafficWindow, type WindowSummary } from './window.ts';

const MAX_TOOLS = 500;
const MAX_DESCRIPTION = 240;
const MAX_STDERR_LINES = 20;

export interface TargetInfo {
  readonly name: string;
  /** stdio, http or sse. */
  readonly type: string;
}

/** Where the status page learns the configured targets, live children and (later) health. */
export interface StatusSources {
  targets(): Iterable<TargetInfo>;
  children(): Iterable<readonly [string, number]>;
  /** A target's health from whatever judges it (a circuit breaker, /readyz); undefined: derived from its last event. */
  health?(target: string): string | undefined;
  /** The config generation (config/generation.ts), for the metrics; absent: not reported. */
  generation?(): string;
  /** Definition changes waiting for approval (pinning; docs/governance.md); undefined while pinning is off. */
  pendingPins?(): readonly PendingPin[] | undefined;
}

/** One pending definition change as the status page shows it. */
export interface PendingPin {
  readonly target: string;
  readonly kind: string;
  readonly key: string;
  readonly hash: string;
  readonly changed: readonly string[];
  readonly dangers: readonly string[];
  readonly seenAt: string;
}

export interface ToolInfo {
  readonly name: string;
  readonly description: string;
}

export interface TargetStatus extends WindowSummary {
  readonly name: string;
  readonly type: string;
  readonly health: string;
  readonly children: number;
  readonly calls: number;
  readonly errors: number;
  readonly starts: number;
  readonly restarts: number;
  readonly exits: number;
  readonly failedStarts: number;
}

export interface SessionStatus {
  readonly id: string;
  readonly endpoint: string;
  readonly transport: string;
  readonly era: string;
  readonly principal: string | undefined;
  readonly ageSec: number;
  readonly idleSec: number;
}

export interface ErrorRecord {
  readonly at: number;
  readonly target: string | undefined;
  readonly method: string;
  /** GW_* code, or `upstream` for a JSON-RPC error the upstream itself answered. */
  readonly code: string;
  readonly session: string;
  readonly requestId: string;
  /** Set for GW_INTERNAL: the id the log line carries. */
  readonly correlationId: string | undefined;
}

export interface StatusSnapshot {
  readonly at: number;
  readonly startedAt: number;
  readonly targets: readonly TargetStatus[];
  readonly sessions: readonly SessionStatus[];
  readonly errors: readonly ErrorRecord[];
  readonly tools: Readonly<Record<string, readonly ToolInfo[]>>;
  /** Undefined while pinning is off (the page then has no such section). */
  readonly pins?: readonly PendingPin[] | undefined;
}

interface TargetState {
  readonly window: TrafficWindow;
  calls: number;
  errors: number;
  readonly events: Record<UpstreamEvent, number>;
  last: UpstreamEvent | undefined;
  tools: ToolInfo[];
  /** The last exit or failed start with a stderr tail (the console shows it; the status page does not). */
  lastStderr: { readonly at: number; readonly event: UpstreamEvent; readonly lines: readonly string[] } | undefined;
  /** Prompt names and resource URIs last listed (the console's access view), MAX_TOOLS each. */
  prompts: string[];
  resources: string[];
}

export interface StatusBoard {
  readonly observer: Observer;
  snapshot(): StatusSnapshot;
  /** Bumped by every event: readers compare it to skip snapshots nobody needs. */
  readonly version: number;
  /** The names `target` last listed (tools, prompts, resource URIs); empty before any list. */
  names?(target: string): { tools: string[]; prompts: string[]; resources: string[] };
  /** The stderr tail of `target`'s last exit or failed start that had one (for the console only). */
  lastStderr?(target: string): { readonly at: number; readonly event: string; readonly lines: readonly string[] } | undefined;
}

const HEALTH: Readonly<Record<UpstreamEvent, string>> = { start: 'up', restart: 'up', exit: 'exited', 'start-failed': 'failing' };

/** At most `max` characters, cut at a word and marked when cut. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

function toolsOf(result: unknown): ToolInfo[] {
  const tools = typeof result === 'object' && result !== null ? (result as { tools?: unknown }).tools : undefined;
  if (!Array.isArray(tools)) return [];
  const out: ToolInfo[] = [];
  for (const tool of tools) {
    const name = (tool as { name?: unknown } | null)?.name;
    const description = (tool as { description?: unknown }).description;
    if (typeof name !== 'string') continue;
    out.push({ name: name.slice(0, 128), description: typeof description === 'string' ? clip(description, MAX_DESCRIPTION) : '' });
  }
  return out;
}

function namesOf(result: unknown, field: string, key: string): string[] {
  const items = typeof result === 'object' && result !== null ? (result as Record<string, unknown>)[field] : undefined;
  if (!Array.isArray(items)) return [];
  return items.map((item) => (item as Record<string, unknown> | null)?.[key]).filter((v): v is string => typeof v === 'string').map((v) => v.slice(0, 512));
}

/** Read once: the getter computes the same number anew on every read (a heap number per call). */
const TIME_ORIGIN = performance.timeOrigin;

export function createStatusBoard(sources: StatusSources, recentErrors: number): StatusBoard {
  const startedAt = Date.now();
  const targets = new Map<string, TargetState>();
  const sessions = new Map<string, ObservedSession>();
  const errors: ErrorRecord[] = [];
  let version = 0;
  const stateOf = (name: string): TargetState => {
    let state = targets.get(name);
    if (state === undefined) {
      state = { window: createWindow(), calls: 0, errors: 0, events: { start: 0, restart: 0, exit: 0, 'start-failed': 0 }, last: undefined, tools: [], prompts: [], resources: [], lastStderr: undefined };
      targets.set(name, state);
    }
    return state;
  };
  // Only configured targets get state: names from elsewhere are not kept. The configured names
  // are read again at most once a second (a reload may add some), not per event.
  let configured = new Set<string>();
  let configuredAt = -Infinity;
  const known = (name: string): TargetState | undefined => {
    const state = targets.get(name);
    if (state !== undefined) return state;
    const now = performance.now();
    if (now - configuredAt > 1_000) {
      configured = new Set([...sources.targets()].map((t) => t.name));
      configuredAt = now;
    }
    return configured.has(name) ? stateOf(name) : undefined;
  };

  const observer: Observer = {
    observing: true,
    sessionOpened(s) {
      sessions.set(s.id, s);
      version++;
    },
    sessionClosed(s) {
      sessions.delete(s.id);
      version++;
    },
    requestStarted: () => undefined,
    requestEnded(r, outcome, code, correlationId) {
      version++;
      const failed = outcome === 'error';
      // Wall-clock time from the clock read requests.ts already made.
      const now = TIME_ORIGIN + r.endedAt;
      const state = r.member === undefined ? undefined : known(r.member.name);
      if (state !== undefined && r.sentAt > 0) {
        state.calls++;
        if (failed) state.errors++;
        record(state.window, now, failed, r.endedAt - r.startedAt);
      }
      if (!failed) return;
      if (errors.length >= recentErrors) errors.shift();
      errors.push({
        at: Math.round(now),
        target: r.member?.name,
        method: r.method,
        code: code ?? 'upstream',
        session: r.session.id,
        // A number id may be kept as its exact text (JSON.rawJSON), which String() cannot convert.
        requestId: typeof r.clientId === 'string' ? r.clientId.slice(0, 64) : JSON.stringify(r.clientId),
        correlationId,
      });
    },
    listed(target, method, result, first) {
      const state = method === 'tools/list' || method === 'prompts/list' || method === 'resources/list' ? known(target) : undefined;
      if (state === undefined) return;
      if (method !== 'tools/list') {
        const field = method === 'prompts/list' ? 'prompts' : 'resources';
        const got = namesOf(result, field, field === 'prompts' ? 'name' : 'uri');
        state[field] = (first ? got : state[field].concat(got)).slice(0, MAX_TOOLS);
        version++;
        return;
      }
      const tools = toolsOf(result);
      state.tools = (first ? tools : state.tools.concat(tools)).slice(0, MAX_TOOLS);
      version++;
    },
    upstream(target, event, stderr) {
      const state = known(target);
      if (state === undefined) return;
      if (stderr !== undefined && stderr.length > 0) state.lastStderr = { at: Date.now(), event, lines: stderr.slice(-MAX_STDERR_LINES).map((line) => line.slice(0, MAX_DESCRIPTION * 2)) };
      state.events[event]++;
      state.last = event;
      version++;
    },
    refused: () => undefined,
    pinned: () => {
      version++;
    },
    hooked: () => undefined,
    bytes: () => undefined,
  };

  const snapshot = (): StatusSnapshot => {
    const now = Date.now();
    const children = new Map(sources.children());
    const rows: TargetStatus[] = [];
    const tools: Record<string, ToolInfo[]> = {};
    for (const { name, type } of sources.targets()) {
      const state = stateOf(name);
      const live = children.get(name) ?? 0;
      const health = sources.health?.(name) ?? (state.last === undefined ? (live > 0 ? 'up' : 'idle') : HEALTH[state.last]);
      const e = state.events;
      rows.push({ name, type, health, children: live, calls: state.calls, errors: state.errors, starts: e.start, restarts: e.restart, exits: e.exit, failedStarts: e['start-failed'], ...summarize(state.window, now) });
      tools[name] = state.tools;
    }
    const live: SessionStatus[] = [...sessions.values()].map((s) => ({
      id: s.id,
      endpoint: s.endpoint,
      transport: s.transport,
      era: eraOf(s.protocolVersion),
      principal: s.principal,
      ageSec: Math.round((now - s.openedAt) / 1000),
      idleSec: Math.round((now - s.lastActivity) / 1000),
    }));
    return { at: now, startedAt, targets: rows, sessions: live, errors: [...errors].reverse(), tools, pins: sources.pendingPins?.() };
  };
  return {
    observer,
    snapshot,
    lastStderr: (target) => targets.get(target)?.lastStderr,
    names(target) {
      const state = targets.get(target);
      return { tools: state?.tools.map((t) => t.name) ?? [], prompts: [...(state?.prompts ?? [])], resources: [...(state?.resources ?? [])] };
    },
    get version() {
      return version;
    },
  };
}
