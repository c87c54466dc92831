/**
 * What the console's API reads and changes, gathered from the Runtime, the status board and the
 * audit trail by the composition root (main.ts). One function per concern, so each can be pointed
 * elsewhere without touching the routes: `audit` queries the trail's recent records (one ring for
 * `/admin/api/audit` and the console), `record` writes the operators' actions into the same trail,
 * `accounts` and `disconnect` reach the upstream-OAuth provider when there is one.
 */
import type { ConfigDiff } from '../config/diff.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { PinRegistry } from '../governance/pin-registry.ts';
import type { StatusBoard } from '../observe/status.ts';
import type { AuditEntry } from '../log/audit-record.ts';
import type { AuditTrail } from '../observe/audit/setup.ts';
import type { AuditQuery } from '../observe/audit/ring.ts';
import { callRowOf, type CallRow } from './console-audit.ts';
import type { PolicySubject } from '../router/policy.ts';
import { reachOf, type ReachEndpoint } from '../session/reach.ts';
import type { Runtime } from '../session/runtime.ts';
import type { UserOAuth } from '../upstream/oauth/user-oauth.ts';
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
  /** The stderr tail of its last exit or failed start (scrubbed of the values the gateway gave it). */
  readonly stderr: { readonly at: number; readonly event: string; readonly lines: readonly string[] } | undefined;
}

/** A reload's preview: what changes, and what of it waits for a restart. */
export type ReloadDiff = ConfigDiff & { readonly needRestart: readonly string[] };

/** Reading the config source again and applying it (main.ts); absent: the gateway was given a config, not a file. */
export interface Reloads {
  load(): Promise<GatewayConfig>;
  diff(next: GatewayConfig): ReloadDiff;
  apply(next: GatewayConfig): void;
}

export interface ConsoleSources {
  servers(): ServerRow[];
  /**
   * Restarts `name`: ends the sessions using it (their clients reconnect to new children) and
   * replaces its warm spares. Children shared by several sessions (`shared: true`) are left to their
   * pool. Resolves with the sessions ended; undefined for an unknown server.
   */
  restart(name: string, reason: string): Promise<number | undefined>;
  /** Undefined: no config file to read again. */
  readonly reloads: Reloads | undefined;
  sessions(): Iterable<SessionCore>;
  pins(): PinRegistry | undefined;
  reach(caller: PolicySubject | undefined): ReachEndpoint[];
  /** The recent calls, newest first: the trail's recent records (see the file comment). */
  audit(filter: AuditQuery): CallRow[];
  /** An operator's action as an audit record (console-audit.ts adminEntryOf). */
  record(entry: AuditEntry): void;
  /** Upstream accounts; undefined: no provider (the section lists nothing). */
  accounts?: (() => Promise<readonly UpstreamAccount[]>) | undefined;
  /** Disconnects `principal`'s account on `server` (forgets its tokens); false: there was none. Undefined: no provider. */
  disconnect?: ((principal: string, server: string) => Promise<boolean>) | undefined;
}

export interface ConsoleSourceParts {
  readonly runtime: Runtime;
  readonly config: () => GatewayConfig;
  readonly status: StatusBoard | undefined;
  /** The audit trail: with the console on there is always one (main.ts; its ring at least). */
  readonly trail: AuditTrail;
  readonly accounts?: (() => Promise<readonly UpstreamAccount[]>) | undefined;
  readonly disconnect?: ((principal: string, server: string) => Promise<boolean>) | undefined;
  readonly reloads?: Reloads | undefined;
}

const LAST_ERRORS = 5;

export function createConsoleSources({ runtime, config, status, trail, accounts, disconnect, reloads }: ConsoleSourceParts): ConsoleSources {
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
          stderr: status?.lastStderr?.(target.name),
        };
      });
    },
    async restart(name, reason) {
      const targets = config().targets;
      const target = targets.get(name);
      if (target === undefined) return undefined;
      const ending = [...runtime.store.live()].filter((s) => s.endpoint === `target:${name}` || s.usage.children.includes(name)).map((s) => s.end(reason));
      // Retained without it its spares end; retained again new ones start.
      runtime.spares.retain([...targets.values()].filter((t) => t !== target));
      runtime.spares.retain(targets.values());
      await Promise.all(ending);
      return ending.length;
    },
    reloads,
    sessions: () => runtime.store.live(),
    pins: () => runtime.pins,
    reach(caller) {
      const names = (target: string) => status?.names?.(target) ?? { tools: [], prompts: [], resources: [] };
      return reachOf(config(), runtime.endpoints.policy(), caller, names);
    },
    audit: (filter) => trail.query(filter).map(callRowOf),
    record: (entry) => trail.record(entry),
    accounts,
    disconnect,
  };
}

/** The console's Disconnect: `server` must be a remote target of the config in force (the provider's accounts are per remote target). */
export function disconnectOf(oauth: Pick<UserOAuth, 'disconnect'> | undefined, config: () => GatewayConfig) {
  if (oauth === undefined) return undefined;
  return async (principal: string, server: string) => {
    const target = config().targets.get(server);
    return target !== undefined && target.type !== 'stdio' ? oauth.disconnect(principal, target) : false;
  };
}

/** The console's upstream accounts (who connected which server, and when): never a token. */
export function accountsOf(oauth: Pick<UserOAuth, 'connections'> | undefined) {
  if (oauth === undefined) return undefined;
  return async () => (await oauth.connections()).map((c) => ({ principal: c.principal, server: c.target, connectedAt: new Date(c.connectedAt).toISOString() }));
}
