/**
 * The audit trail of one gateway, from `config.audit` (config/audit-types.ts): its sinks made in
 * config order, the OTLP one by the composition root (only it reaches the OpenTelemetry SDK,
 * telemetry/sdk.ts), the HTTP ones each with its own connection (transport/audit-post.ts).
 */
import type { AuditConfig, AuditOtlpSink } from '../../config/audit-types.ts';
import type { AuditOutlet } from '../../log/audit-record.ts';
import type { Logger } from '../../log/logger.ts';
import { createAuditPoster } from '../../transport/audit-post.ts';
import { createHttpSink } from './http-sink.ts';
import { createAuditTrail, createLogSink, type AuditTrail } from './trail.ts';

export type { AuditTrail } from './trail.ts';

export function createAuditTrailOf(config: AuditConfig | undefined, logger: Logger, otlp: (sink: AuditOtlpSink) => AuditOutlet): AuditTrail | undefined {
  if (config === undefined) return undefined;
  const outlets = config.sinks.map((sink): AuditOutlet => {
    if (sink.type === 'log') return createLogSink(logger);
    if (sink.type === 'otlp') return otlp(sink);
    return createHttpSink(sink, createAuditPoster(sink.url), logger);
  });
  return createAuditTrail(config, outlets, logger);
}
