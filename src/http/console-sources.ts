/**
 * What the console's API reads and changes, gathered from the Runtime, the status board and the
 * recent-calls ring by the composition root (main.ts). One function per concern, so each can be
 * pointed elsewhere without touching the routes: `audit` reads the observation seam's ring now and
 * is where the audit records' recent-records query goes once it lands; `accounts` lists nothing
 * until the upstream-OAuth provider is given.
 */
import type { GatewayConfig } from '../config/types.ts';
import type { PinRegistry } from '../governance/pin-registry.ts';
import type { StatusBoard } from '../observe/status.ts';
import type { CallFilter, CallRecord, RecentCalls } from '../observe/recent-calls.ts';
import type { PolicySubject } from '../router/policy.ts';
import { reachOf, type ReachEndpoint } from '../session/reach.ts';
import type { Runtime } from '../session/runtime.ts';
import type { SessionCore } from '../session/session.ts';

/** One upstream account a user connected (the upstream-OAuth work supplies these). */
export interface UpstreamAccount {
  readonly principal: string;
  readonly server: string;
  readonly connectedAt: string;
}

export interface ServerRow {
  readonly name: string;
  readonly type: string;
  readonly health: string;
  readonly circuit: string;
  readonly children: number;
  readonly sessions: number;
  readonly calls: number;
  readonly errors: number;
  readonly p50: number | undefined;
  readonly p99: number | undefined;
  readonly lastErrors: ReadonlyArray<{ readonly at: number; readonly method: string; readonly code: string }>;
}

export interface ConsoleSources {
  servers(): ServerRow[];
  sessions(): Iterable<SessionCore>;
  pins(): PinRegistry | undefined;
  reach(caller: PolicySubject | undefined): ReachEndpoint[];
  /** The recent calls, newest first: the one place the audit view reads (see the file comment). */
  audit(filter: CallFilter): CallRecord[] | Promise<CallRecord[]>;
  /** Upstream accounts; undefined: no provider (the section lists nothing). */
  accounts?: (() => Promise<readonly UpstreamAccount[]>) | undefined;
}

export interface ConsoleSourceParts {
  readonly runtime: Runtime;
  readonly config: () => GatewayConfig;
  readonly status: StatusBoard | undefined;
  readonly calls: RecentCalls | undefined;
  readonly accounts?: (() => Promise<readonly UpstreamAccount[]>) | undefined;
}

const LAST_ERRORS = 5;

export function createConsoleSources({ runtime, config, status, calls, accounts }: ConsoleSourceParts): ConsoleSources {
  const sessionsOf = (name: string) => {
    let n = 0;
    for (const s of runtime.store.live()) if (s.endpoint === `target:${name}` || s.usage.children.includes(name)) n++;
    return n;
  };
  return {
    servers() {
      const snapshot = status?.snapshot();
      const targets = config().targets;
      return [...targets.values()].map((target) => {
        const row = snapshot?.targets.find((t) => t.name === target.name);
        const errors = snapshot?.errors.filter((e) => e.target === target.name).slice(0, LAST_ERRORS) ?? [];
        return {
          name: target.name,
          type: target.type,
          health: row?.health ?? 'unknown',
          circuit: runtime.breakers.of(target).state,
          children: row?.children ?? runtime.children().get(target.name) ?? 0,
          sessions: sessionsOf(target.name),
          calls: row?.calls ?? 0,
          errors: row?.errors ?? 0,
          p50: row?.p50,
          p99: row?.p99,
          lastErrors: errors.map((e) => ({ at: e.at, method: e.method, code: e.code })),
        };
      });
    },
    sessions: () => runtime.store.live(),
    pins: () => runtime.pins,
    reach(caller) {
      const names = (target: string) => status?.names?.(target) ?? { tools: [], prompts: [], resources: [] };
      return reachOf(config(), runtime.endpoints.policy(), caller, names);
    },
    audit: (filter) => calls?.query(filter) ?? [],
    accounts,
  };
}
