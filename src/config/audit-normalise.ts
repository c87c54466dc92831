/**
 * `gateway.audit` to the AuditConfig the gateway reads. Written, the section turns the trail on with
 * its sinks; absent, `logging.audit` (resolved from "auto") turns it on with the log sink alone, as
 * audit lines were written before the section existed.
 */
import type { AuditSection } from './audit-schema.ts';
import type { AuditConfig, AuditSinkConfig } from './audit-types.ts';
import type { GatewayConfig } from './types.ts';

const LOG_ONLY: AuditConfig = {
  sinks: [{ type: 'log' }],
  recent: 1_000,
  capture: { arguments: false, results: false, maxBytes: 4_096, patterns: [] },
};

/**
 * The trail the console keeps where none is configured (docs/operations.md, "The console"): no
 * sinks, its recent ring only, so the console's recent calls and its actions are audit records.
 */
export const RING_ONLY: AuditConfig = { ...LOG_ONLY, sinks: [] };

export function toAuditConfig(section: AuditSection | undefined, loggingAudit: boolean): AuditConfig | undefined {
  if (section === undefined) return loggingAudit ? LOG_ONLY : undefined;
  const sinks = section.sinks.map((sink): AuditSinkConfig => {
    if (sink.type === 'log') return { type: 'log' };
    if (sink.type === 'otlp') return { type: 'otlp', endpoint: sink.endpoint, serviceName: sink.serviceName };
    return { ...sink, secret: sink.secret };
  });
  return { sinks, recent: section.recent, capture: { ...section.capture, patterns: [...section.capture.patterns] } };
}

/** The trail a config asks for: its `audit`, or (a config built in code with `logging.audit` only) the log sink alone. */
export function auditConfigOf(config: GatewayConfig): AuditConfig | undefined {
  return config.audit ?? (config.logging.audit === true ? LOG_ONLY : undefined);
}
