/**
 * The audit trail's settings (`gateway.audit`, docs/configuration.md; config/audit-schema.ts):
 * where records go, what of each call they capture, how many stay in memory for the console.
 */

/** The gateway's own log stream: one JSON line per record, `"audit":true`, whatever `logging.level` says. */
export interface AuditLogSink {
  readonly type: 'log';
}

/** OTLP/HTTP logs through the OpenTelemetry SDK; unset keys come from the OTEL_* variables. */
export interface AuditOtlpSink {
  readonly type: 'otlp';
  /** The OTLP/HTTP logs URL (`.../v1/logs`). */
  readonly endpoint: string | undefined;
  readonly serviceName: string | undefined;
}

/** Batches POSTed as JSON, signed like hooks, retried with back-off, from a bounded queue. */
export interface AuditHttpSink {
  readonly type: 'http';
  readonly url: string;
  /** The X-Switchboard-Signature key (session/hooks/signature.ts); undefined: unsigned. */
  readonly secret: string | undefined;
  readonly batchSize: number;
  readonly flushMs: number;
  /** Records waiting at most; past it the oldest are dropped and counted. */
  readonly maxQueue: number;
  readonly timeoutMs: number;
  readonly maxBackoffMs: number;
}

export type AuditSinkConfig = AuditLogSink | AuditOtlpSink | AuditHttpSink;

export interface AuditConfig {
  readonly sinks: readonly AuditSinkConfig[];
  /** Records kept in memory for the console and `/admin/api/audit`. */
  readonly recent: number;
  readonly capture: {
    readonly arguments: boolean;
    readonly results: boolean;
    /** A captured value whose JSON is longer is cut to this many bytes. */
    readonly maxBytes: number;
    /** The operator's own patterns, besides the built-in secret shapes (session/hooks/redact.ts). */
    readonly patterns: readonly string[];
  };
}
