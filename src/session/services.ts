/**
 * The session services: what every session of one gateway shares, built once by the Runtime
 * (runtime.ts) and handed to each session by reference through the store's seed, in place of the
 * same optional fields on every option type from the store down to the supervisor. What differs
 * per session (its id, logger, audit logger, caller, per-tool limit) stays on the seed.
 */
import type { GatewayConfig } from '../config/types.ts';
import { NOOP_OBSERVER } from '../log/observer.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import type { SpareRoom, SpareSource } from '../upstream/spares.ts';
import type { UpstreamServices } from '../upstream/supervisor.ts';
import type { ConsentWaiters } from './consent-waiters.ts';
import { createInflightBudget, type InflightBudget } from './inflight.ts';

export interface SessionServices extends UpstreamServices {
  /** The gateway's tracer (telemetry/tracing.ts); undefined: tracing off, nothing is made. */
  readonly tracing: Tracing | undefined;
  /** The gateway's count of requests in flight, against `limits.maxInflight`. */
  readonly inflight: InflightBudget;
  /** Warm spares: the store ends them before any session for room and refills them as sessions end. */
  readonly spares: (SpareRoom & SpareSource) | undefined;
  /** Sessions waiting for a per-user upstream consent (consent-waiters.ts); undefined: no `gateway.oauth`. */
  readonly consents?: ConsentWaiters | undefined;
}

/** What a Runtime (or a test) lends; every part but `open` may be left out (none, nobody). */
export type SessionServiceParts = Pick<SessionServices, 'open'> & { readonly [K in 'observer' | 'tracing' | 'breakers' | 'spares' | 'consents']?: SessionServices[K] | undefined };

/** The services of one gateway, with an empty in-flight count under `limits`' caps. */
export function createSessionServices(limits: GatewayConfig['limits'], parts: SessionServiceParts): SessionServices {
  const { open, observer = NOOP_OBSERVER, tracing, breakers, spares, consents } = parts;
  return { open, observer, tracing, breakers, spares, consents, inflight: createInflightBudget(limits) };
}
