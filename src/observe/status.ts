/**
 * What the status page shows (http/status-page.ts renders it, /status/events streams it): an
 * Observer that keeps, per target, the last minute of traffic and its upstream events; the live
 * sessions; a ring of recent errors; and the tools each target listed last. Everything bounded:
 * sessions by the store's own cap, errors by `recentErrors`, tools by MAX_TOOLS per target.
 *
 * Never kept: tokens, headers, environment values, error messages (an upstream's message may
 * carry anything): an error is its code, where and when, and the ids that find it in the logs.
 */
import type { Observer, UpstreamEvent } from '../log/observer.ts';
import { eraOf } from './metrics.ts';
import { BoardState, StatusObserver, type ErrorRecord, type PendingPin, type StatusSources, type ToolInfo } from './status-state.ts';
import { summarize, type WindowSummary } from './window.ts';

export type { ErrorRecord, PendingPin, StatusSources, TargetInfo, ToolInfo } from './status-state.ts';

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

export function createStatusBoard(sources: StatusSources, recentErrors: number): StatusBoard {
  return new Board(new BoardState(sources, recentErrors));
}

/** The board over its state (status-state.ts); its observer is the only writer. */
class Board implements StatusBoard {
  readonly observer: Observer;
  private readonly state: BoardState;

  constructor(state: BoardState) {
    this.state = state;
    this.observer = new StatusObserver(state);
  }

  get version(): number {
    return this.state.version;
  }

  snapshot(): StatusSnapshot {
    const { sources, sessions, errors, startedAt } = this.state;
    const now = Date.now();
    const children = new Map(sources.children());
    const rows: TargetStatus[] = [];
    const tools: Record<string, ToolInfo[]> = {};
    for (const { name, type } of sources.targets()) {
      const state = this.state.stateOf(name);
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
  }

  lastStderr(target: string): { readonly at: number; readonly event: string; readonly lines: readonly string[] } | undefined {
    return this.state.targets.get(target)?.lastStderr;
  }

  names(target: string): { tools: string[]; prompts: string[]; resources: string[] } {
    const state = this.state.targets.get(target);
    return { tools: state?.tools.map((t) => t.name) ?? [], prompts: [...(state?.prompts ?? [])], resources: [...(state?.resources ?? [])] };
  }
}
