/**
 * One start of an upstream (spawn or dial, then the handshake) as its circuit breaker sees it: the
 * supervisor reports what happened, this decides what the breaker is told, once.
 *
 * A failure of the exchange itself (the initialize timed out, the process exited, the connection
 * was refused) is what the breaker counts, as it was, before the supervisor wraps it as
 * GW_TARGET_UNAVAILABLE. An exit during the start counts even when that exit then ends the session
 * (a transparent session ends with its upstream). A failure that only follows from the session
 * ending (the client deleted it while its upstream started) says nothing about the target.
 */
import type { GatewayError } from '../errors/gateway-error.ts';
import type { RestartPolicy, TargetConfig } from '../config/types.ts';
import type { CircuitBreaker } from './circuit-breaker.ts';

/**
 * The wait before start number `failures + 1` after `failures` failed ones: the target's
 * `initialBackoffMs`, doubled per failure, at most `maxBackoffMs` (none without a policy).
 */
export function backoffMs(policy: RestartPolicy | undefined, failures: number): number {
  return Math.min(policy?.maxBackoffMs ?? 0, (policy?.initialBackoffMs ?? 0) * 2 ** failures);
}

export interface StartAttempt {
  /** The handshake's request failed (askUpstream's `failed`). Ignored once the session is ending. */
  failed(error: GatewayError): void;
  /** The connection exited while starting. */
  exited(error: GatewayError): void;
  /** The handshake succeeded. */
  succeeded(): void;
  /** The start did not succeed (`error`: what was thrown, if anything): the breaker hears the cause, if there is one. */
  ended(error?: GatewayError): void;
}

/**
 * A 401 or 403 to one user's own token (`oauth.perUser`) says that user must connect or refresh,
 * not that the target is down: counted, one user whose grant is gone would open the circuit for all.
 */
export function countsForTarget(target: TargetConfig): ((error: GatewayError) => boolean) | undefined {
  if (target.type === 'stdio' || target.oauth === undefined) return undefined;
  return (error) => !(error.code === 'GW_UPSTREAM_HTTP_ERROR' && (error.details.status === 401 || error.details.status === 403));
}

/** `closing`: the session is ending (its own close, not the upstream's failure); `counts`: whether a cause is the target's. */
export function createStartAttempt(breaker: CircuitBreaker | undefined, closing: () => boolean, counts?: (error: GatewayError) => boolean): StartAttempt {
  let failure: GatewayError | undefined;
  let done = false;
  return {
    failed(error) {
      if (!done && !closing()) failure ??= error;
    },
    exited(error) {
      if (!done) failure ??= error;
    },
    succeeded() {
      if (done) return;
      done = true;
      breaker?.succeeded();
    },
    ended(error) {
      if (done) return;
      done = true;
      const cause = failure ?? (closing() ? undefined : error);
      if (cause !== undefined && counts?.(cause) !== false) breaker?.startFailed(cause);
    },
  };
}
