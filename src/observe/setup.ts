/**
 * What `gateway.admin` turns on, built once by the composition root: the metrics collector and
 * its Registry, the status board, and the one Observer the Runtime hands to everything that
 * reports. Off (or not servable: admin-routes.ts), nothing observes and the hot path pays nothing.
 */
import { ADMIN_DEFAULTS, type GatewayConfig } from '../config/types.ts';
import { combineObservers, NOOP_OBSERVER, type Observer } from '../log/observer.ts';
import { createMetricsCollector } from './metrics.ts';
import { createMetricsRegistry, type Census, type MetricsRegistry } from './metrics-export.ts';
import { createStatusBoard, type StatusBoard, type StatusSources } from './status.ts';

export interface Observability {
  readonly observer: Observer;
  readonly metrics: MetricsRegistry | undefined;
  readonly status: StatusBoard | undefined;
}

/** `served`: whether the pages will be served at all (no reader, no collection). */
export function createObservability(config: GatewayConfig, sources: StatusSources & Pick<Census, 'auditSinks'>, served: boolean): Observability {
  const admin = config.admin ?? ADMIN_DEFAULTS;
  if (!served) return { observer: NOOP_OBSERVER, metrics: undefined, status: undefined };
  const collector = admin.metrics ? createMetricsCollector(admin.maxLabelValues) : undefined;
  const status = admin.status ? createStatusBoard(sources, admin.recentErrors) : undefined;
  const observers: Observer[] = [];
  if (collector !== undefined) observers.push(collector.observer);
  if (status !== undefined) observers.push(status.observer);
  return {
    observer: combineObservers(observers),
    metrics: collector === undefined ? undefined : createMetricsRegistry(collector.tallies, { children: () => sources.children(), generation: sources.generation, auditSinks: sources.auditSinks }),
    status,
  };
}
