/**
 * The status board's state (status.ts is the board): per configured target the last minute of
 * traffic, its upstream events and what it listed last; the live sessions; the ring of recent
 * errors. StatusObserver fills it as the gateway's events come in; status.ts reads it.
 */
import type { ObservedRequest, ObservedSession, Observer, RequestOutcome, UpstreamEvent } from '../log/observer.ts';
import { createWindow, record, type TrafficWindow } from './window.ts';

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

export interface TargetState {
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

/** The board's state: what the observer records and the snapshot reads. */
export class BoardState {
  readonly sources: StatusSources;
  readonly recentErrors: number;
  readonly startedAt = Date.now();
  readonly targets = new Map<string, TargetState>();
  readonly sessions = new Map<string, ObservedSession>();
  readonly errors: ErrorRecord[] = [];
  /** Bumped by every event (StatusBoard.version). */
  version = 0;
  // Only configured targets get state: names from elsewhere are not kept. The configured names
  // are read again at most once a second (a reload may add some), not per event.
  private configured = new Set<string>();
  private configuredAt = -Infinity;

  constructor(sources: StatusSources, recentErrors: number) {
    this.sources = sources;
    this.recentErrors = recentErrors;
  }

  stateOf(name: string): TargetState {
    let state = this.targets.get(name);
    if (state === undefined) {
      state = { window: createWindow(), calls: 0, errors: 0, events: { start: 0, restart: 0, exit: 0, 'start-failed': 0 }, last: undefined, tools: [], prompts: [], resources: [], lastStderr: undefined };
      this.targets.set(name, state);
    }
    return state;
  }

  known(name: string): TargetState | undefined {
    const state = this.targets.get(name);
    if (state !== undefined) return state;
    const now = performance.now();
    if (now - this.configuredAt > 1_000) {
      this.configured = new Set([...this.sources.targets()].map((t) => t.name));
      this.configuredAt = now;
    }
    return this.configured.has(name) ? this.stateOf(name) : undefined;
  }
}

/** The Observer that fills a BoardState (combineObservers calls its methods as methods). */
export class StatusObserver implements Observer {
  readonly observing = true;
  private readonly board: BoardState;

  constructor(board: BoardState) {
    this.board = board;
  }

  sessionOpened(s: ObservedSession): void {
    this.board.sessions.set(s.id, s);
    this.board.version++;
  }

  sessionClosed(s: ObservedSession): void {
    this.board.sessions.delete(s.id);
    this.board.version++;
  }

  requestStarted(): void {}

  requestEnded(r: ObservedRequest, outcome: RequestOutcome, code: string | undefined, correlationId: string | undefined): void {
    const board = this.board;
    board.version++;
    const failed = outcome === 'error';
    // Wall-clock time from the clock read requests.ts already made.
    const now = TIME_ORIGIN + r.endedAt;
    const state = r.member === undefined ? undefined : board.known(r.member.name);
    if (state !== undefined && r.sentAt > 0) {
      state.calls++;
      if (failed) state.errors++;
      record(state.window, now, failed, r.endedAt - r.startedAt);
    }
    if (!failed) return;
    const errors = board.errors;
    if (errors.length >= board.recentErrors) errors.shift();
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
  }

  listed(target: string, method: string, result: unknown, first: boolean): void {
    const state = method === 'tools/list' || method === 'prompts/list' || method === 'resources/list' ? this.board.known(target) : undefined;
    if (state === undefined) return;
    if (method !== 'tools/list') {
      const field = method === 'prompts/list' ? 'prompts' : 'resources';
      const got = namesOf(result, field, field === 'prompts' ? 'name' : 'uri');
      state[field] = (first ? got : state[field].concat(got)).slice(0, MAX_TOOLS);
      this.board.version++;
      return;
    }
    const tools = toolsOf(result);
    state.tools = (first ? tools : state.tools.concat(tools)).slice(0, MAX_TOOLS);
    this.board.version++;
  }

  upstream(target: string, event: UpstreamEvent, stderr?: readonly string[]): void {
    const state = this.board.known(target);
    if (state === undefined) return;
    if (stderr !== undefined && stderr.length > 0) state.lastStderr = { at: Date.now(), event, lines: stderr.slice(-MAX_STDERR_LINES).map((line) => line.slice(0, MAX_DESCRIPTION * 2)) };
    state.events[event]++;
    state.last = event;
    this.board.version++;
  }

  refused(): void {}

  pinned(): void {
    this.board.version++;
  }

  hooked(): void {}

  bytes(): void {}
}
