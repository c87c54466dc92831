/**
 * What the store (store.ts) hands a session factory, and what every kind of session passes on to
 * its core from it.
 */
import type { GatewayConfig, TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { AuditSink } from '../log/audit-record.ts';
import type { Caller } from '../upstream/caller.ts';
import type { PinGate } from '../governance/pin-gate.ts';
import type { ChainGates } from './chain/gates.ts';
import type { SessionServices } from './services.ts';
import type { Session, SessionCore } from './session.ts';

/** What the store hands a session factory: the parts every kind of session needs. */
export interface SessionSeed {
  readonly id: string;
  readonly limits: GatewayConfig['limits'];
  readonly logger: Logger;
  /** The session must call this once when it has ended, whatever ended it. */
  readonly onended: (session: SessionCore) => void;
  /** Who the session serves (upstream/caller.ts): the store's own record, passed on by reference. */
  readonly caller: Caller;
  /**
   * Called before the session starts a child for `target` (a no-op for targets that start none):
   * makes room under the child caps by ending idle sessions, or throws GW_SESSION_LIMIT.
   */
  readonly reserveChild: (target: TargetConfig) => void;
  /** What every session shares (services.ts): the Runtime's, by reference. */
  readonly services: SessionServices;
  /** Where the session's audit entries go (the Runtime's trail); undefined: none. */
  readonly audit?: AuditSink | undefined;
  /** The chain's gates (chain/gates.ts): the rate limit bound to the session's principal, step-up, hooks; absent: none. */
  readonly gates?: ChainGates | undefined;
  /** A target's pinning gate (governance/pin-gate.ts), undefined for a target with pinning off; absent: pinning off everywhere. */
  readonly pins?: ((target: TargetConfig) => PinGate | undefined) | undefined;
}

/** What every kind of session passes on to its core from what its factory got. */
export interface CoreSource extends Pick<SessionSeed, 'id' | 'limits' | 'onended' | 'audit' | 'services' | 'gates' | 'caller'> {
  readonly endpoint: string;
}

/** The session-core options every kind of session shares, with its own `logger`. */
export function coreOptionsOf(options: CoreSource, logger: Logger) {
  const { id, endpoint, limits, onended, audit, services, gates, caller } = options;
  return { id, endpoint, limits, logger, onended, audit, services, gates, caller };
}

/**
 * Builds one kind of session (one target's pass-through session, an aggregate over many targets,
 * ...). Each downstream endpoint owns its factory; the store only assigns ids and keeps count.
 */
export type SessionFactory = (seed: SessionSeed) => Session;
