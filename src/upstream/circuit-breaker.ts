/**
 * A target's circuit breaker: after repeated failures the gateway stops trying the target for a
 * cooldown, and clients learn why at once (GW_CIRCUIT_OPEN) instead of each waiting for its own
 * spawn, handshake timeout or refused connection. One per target per gateway (breakers.ts), so it
 * outlives sessions.
 *
 * Only evidence about the target as a whole may refuse everyone:
 * - failed starts (spawn failure, an exit, timeout or error during the handshake, a refused
 *   connection): `startFailures` in a row open it, cause "starts". A successful start resets the count.
 * - request timeouts, where every session reaches the same upstream (a remote target, a shared
 *   child: `sharedFate`): `timeouts` within `windowMs`, from at least `timeoutCallers` distinct
 *   callers (principals, or sessions without auth), cause "timeouts". One caller's timeouts are no
 *   evidence: it may have asked for long work. A per-session child's timeouts never reach the
 *   breaker: that child is its session's own, and its own health counts them (connection-health.ts).
 *
 * - open: starts (new sessions, aggregate members, restarts) fail fast, nothing is spawned or
 *   dialled. Requests on connections already open pass when it opened for starts (those
 *   connections work), and fail fast when it opened for timeouts (the target hangs for everyone).
 * - half-open, once the cooldown is over: one probe (a start, or a request when it opened for
 *   timeouts) is let through; the rest still fail fast. The probe's success closes it (logged
 *   "recovered"); its failure opens it again with the cooldown doubled, up to `maxCooldownMs`. A
 *   probe that reports nothing (cancelled) frees its slot after one more cooldown.
 */
import type { CircuitBreakerPolicy } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import { createTimeoutWindow, type TimeoutWindow } from './timeout-window.ts';

export type CircuitState = 'closed' | 'open' | 'half-open';

/** What a health page or metrics read of one breaker. */
export interface BreakerSnapshot {
  readonly state: CircuitState;
  /** Why it is open (or opened last): a GW code and its public reason, or "request timeouts". */
  readonly cause: string | undefined;
  /** The target started successfully at least once since the breaker was made (config load or reload). */
  readonly started: boolean;
  readonly consecutiveStartFailures: number;
  /** The last failed start, as `cause` is written; undefined once a start succeeds. */
  readonly lastFailure: string | undefined;
  /** When a probe will be let through (epoch ms), while open. */
  readonly retryAt: number | undefined;
  /** Times it opened. */
  readonly opened: number;
}

export interface CircuitBreaker {
  readonly target: string;
  /** Read on the hot path: anything but "closed" needs `admit`. */
  readonly state: CircuitState;
  /**
   * Before a start (`what` "start") or a request on an open connection (`what` "request"): throws
   * GW_CIRCUIT_OPEN when it may not go ahead; true when it is the half-open probe.
   */
  admit(what: 'start' | 'request'): boolean;
  /** A start completed its handshake, or a probe request was answered. */
  succeeded(): void;
  /** A start failed; failures that say nothing about the target (the session ended, a cap) are ignored. */
  startFailed(error: GatewayError): void;
  /**
   * A request to the target timed out. `caller`: who sent it (principal id, else session id);
   * `probe`: it was the half-open probe. Ignored unless the target's sessions share one fate.
   */
  timedOut(caller: string, probe?: boolean): void;
  snapshot(): BreakerSnapshot;
}

/** When a hand-built target sets none (the config loader always does): see `circuitBreaker` in the schema. */
export const DEFAULT_BREAKER_POLICY: CircuitBreakerPolicy = Object.freeze({
  startFailures: 5,
  timeouts: 5,
  timeoutCallers: 2,
  windowMs: 60_000,
  cooldownMs: 10_000,
  maxCooldownMs: 300_000,
});

/** Failures of a start that say the target cannot be started (not: the session ended, a cap, a refusal). */
const START_FAILURES = new Set(['GW_UPSTREAM_SPAWN_FAILED', 'GW_UPSTREAM_EXITED', 'GW_UPSTREAM_CLOSED', 'GW_UPSTREAM_TIMEOUT', 'GW_UPSTREAM_UNREACHABLE', 'GW_UPSTREAM_HTTP_ERROR']);

/** The cause as clients may see it: the code and the gateway's own short reason, never upstream text. */
function describe(error: GatewayError): string {
  const { reason, exitCode, signal, status, method, timeoutMs } = error.details;
  const detail =
    typeof reason === 'string' && reason.length <= 80 ? reason
    : typeof exitCode === 'number' ? `exit code ${exitCode}`
    : typeof method === 'string' && typeof timeoutMs === 'number' ? `no answer to ${method} within ${timeoutMs} ms`
    : typeof signal === 'string' ? `signal ${signal}`
    : typeof status === 'number' ? `HTTP ${status}`
    : undefined;
  return detail === undefined ? error.code : `${error.code}: ${detail}`;
}

export interface CircuitBreakerOptions {
  target: string;
  policy: CircuitBreakerPolicy;
  /** Every session reaches the same upstream (remote, shared mode): only then do timeouts count. */
  sharedFate: boolean;
  logger: Logger;
  now?: () => number;
}

/** A closed breaker for one target (see the file comment for its states). */
export function createCircuitBreaker(options: CircuitBreakerOptions): CircuitBreaker {
  return new Breaker(options);
}

class Breaker implements CircuitBreaker {
  readonly target: string;
  private readonly policy: CircuitBreakerPolicy;
  private readonly sharedFate: boolean;
  private readonly log: Logger;
  private readonly now: () => number;
  private current: CircuitState = 'closed';
  private openedFor: 'starts' | 'timeouts' = 'starts';
  private cause: string | undefined;
  private lastFailure: string | undefined;
  private failures = 0;
  private started = false;
  private opened = 0;
  private cooldown: number;
  private retryAt = 0;
  private probeAt: number | undefined;
  private readonly timeouts: TimeoutWindow;

  constructor({ target, policy, sharedFate, logger, now = Date.now }: CircuitBreakerOptions) {
    this.target = target;
    this.policy = policy;
    this.sharedFate = sharedFate;
    this.log = logger.child({ target });
    this.now = now;
    this.cooldown = policy.cooldownMs;
    this.timeouts = createTimeoutWindow(policy.timeouts, policy.windowMs, policy.timeoutCallers);
  }

  get state(): CircuitState {
    return this.current;
  }

  admit(what: 'start' | 'request'): boolean {
    if (this.current === 'closed' || (what === 'request' && this.openedFor === 'starts')) return false;
    const at = this.now();
    if (this.current === 'open') {
      if (at < this.retryAt) throw this.refuse(at);
      this.current = 'half-open';
      this.probeAt = undefined;
    }
    if (this.probeAt !== undefined && at - this.probeAt < this.cooldown) throw this.refuse(at);
    this.probeAt = at;
    this.log.info({ what }, 'circuit half-open: letting one probe through');
    return true;
  }

  succeeded(): void {
    if (!this.started) this.started = true;
    this.failures = 0;
    this.lastFailure = undefined;
    if (this.current === 'closed') return;
    this.log.info({ cause: this.cause, opened: this.opened }, 'circuit closed: the target recovered');
    this.current = 'closed';
    this.cooldown = this.policy.cooldownMs;
    this.probeAt = undefined;
    this.timeouts.clear();
  }

  startFailed(error: GatewayError): void {
    if (!START_FAILURES.has(error.code)) return;
    this.failures++;
    this.lastFailure = describe(error);
    const policy = this.policy;
    if (this.current === 'half-open' || (this.current === 'closed' && policy.startFailures > 0 && this.failures >= policy.startFailures)) {
      this.open('starts', this.lastFailure);
    }
  }

  timedOut(caller: string, probe = false): void {
    if (!this.sharedFate || this.current === 'open') return;
    // Half-open, the probe's timeout is the probe failing; anyone else's is counted as usual.
    if (probe && this.current === 'half-open') return this.open('timeouts', 'request timeouts');
    if (this.timeouts.add(caller, this.now())) this.open('timeouts', 'request timeouts');
  }

  snapshot(): BreakerSnapshot {
    // It turns half-open when the next use asks (admit); a reader sees it as it is by then.
    const state = this.current;
    const open = state === 'open' && this.now() < this.retryAt;
    const shown: CircuitState = state === 'open' && !open ? 'half-open' : state;
    return {
      state: shown,
      cause: this.cause,
      started: this.started,
      consecutiveStartFailures: this.failures,
      lastFailure: this.lastFailure,
      retryAt: open ? this.retryAt : undefined,
      opened: this.opened,
    };
  }

  private refuse(at: number): GatewayError {
    const { target } = this;
    const cause = this.cause ?? 'unknown';
    const retryAfterSec = Math.max(1, Math.ceil((Math.max(this.retryAt, (this.probeAt ?? 0) + this.cooldown) - at) / 1000));
    return new GatewayError('GW_CIRCUIT_OPEN', `Target "${target}" is failing (${cause}); it is not tried again for about ${retryAfterSec} s`, {
      target,
      reason: cause,
      retryAfterSec,
    });
  }

  private open(why: 'starts' | 'timeouts', text: string): void {
    const at = this.now();
    if (this.current === 'half-open') this.cooldown = Math.min(this.policy.maxCooldownMs, this.cooldown * 2);
    this.current = 'open';
    this.openedFor = why;
    this.cause = text;
    this.retryAt = at + this.cooldown;
    this.probeAt = undefined;
    this.opened++;
    this.log.warn({ cause: this.cause, cooldownMs: this.cooldown }, 'circuit opened: the target is not tried until the cooldown ends');
  }
}
