/**
 * The OpenTelemetry SDK for one gateway: its own TracerProvider (never registered as the global
 * one, so two gateways in a process, or a host application with its own, stay apart), a parent-
 * based sampler, a batch processor and the OTLP/HTTP (JSON) exporter. Only the composition root
 * (main.ts) calls this file; everything else sees the `Tracing` of tracing.ts (@opentelemetry/api).
 *
 * Bounded: the batch processor holds at most OTEL_BSP_MAX_QUEUE_SIZE spans (2048) and drops newer
 * ones past it; an export waits at most OTEL_EXPORTER_OTLP_TIMEOUT (10 s). A collector that is
 * down costs log lines (one when exports start failing, one when they recover), never requests.
 *
 * The audit trail's OTLP sink (`createOtlpAuditSink`) is the logs half: its own LoggerProvider with
 * a batch processor (OTEL_BLRP_MAX_QUEUE_SIZE, 2048, bounds it) and the OTLP/HTTP (JSON) logs
 * exporter; one log record per audit record, its JSON as the body, so a receiver can
 * check the chain (observe/audit/chain.ts), and the fields one filters by as attributes.
 */
import { SeverityNumber } from '@opentelemetry/api-logs';
import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { AuditOtlpSink, TracesConfig } from '../config/types.ts';
import type { AuditOutlet, AuditRecord } from '../log/audit-record.ts';
import type { Logger } from '../log/logger.ts';
import { resolveLogsSettings, resolveTraceSettings, type TraceSettings } from './settings.ts';
import type { Tracing } from './tracing.ts';

/** A gateway's tracing with its SDK: flush and stop it when the gateway closes. */
export interface TracingSdk extends Tracing {
  readonly settings: TraceSettings;
  /** Exports what is buffered and stops; resolves within `timeoutMs` whatever the collector does. */
  shutdown(timeoutMs: number): Promise<void>;
}

/** Reports export failures to the gateway's log on a change of state, not per batch. */
function loggingExporter(inner: SpanExporter, logger: Logger, endpoint: string): SpanExporter {
  let failing = false;
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      inner.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS && !failing) {
          failing = true;
          logger.warn({ endpoint, spans: spans.length, err: result.error?.message }, 'could not export traces; spans are dropped until the collector answers');
        } else if (result.code === ExportResultCode.SUCCESS && failing) {
          failing = false;
          logger.info({ endpoint }, 'exporting traces again');
        }
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

/** The resource of a gateway's spans and log records: OTEL_RESOURCE_ATTRIBUTES, then its name and version. */
const resourceOf = (serviceName: string, version: string) =>
  defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName, [ATTR_SERVICE_VERSION]: version }));

/**
 * The gateway's tracing, or undefined when it is off (telemetry/settings.ts decides from the
 * config and `env`). `version`: the gateway's, for the resource.
 */
export function createTracingSdk(config: TracesConfig | undefined, env: Readonly<Record<string, string | undefined>>, logger: Logger, version: string): TracingSdk | undefined {
  const settings = resolveTraceSettings(config, env);
  if (settings === undefined) return undefined;
  const exporter = loggingExporter(new OTLPTraceExporter({ url: settings.endpoint }), logger, settings.endpoint);
  // OTEL_RESOURCE_ATTRIBUTES adds to the resource; the service name settled above wins over it.
  const resource = resourceOf(settings.serviceName, version);
  const provider = new BasicTracerProvider({
    resource,
    // Parent-based: a client that sampled its trace gets the gateway's spans in it, one that did
    // not gets none; the ratio applies to traces the gateway starts. Unset: OTEL_TRACES_SAMPLER.
    ...(settings.sampleRatio === undefined ? {} : { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }) }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  let stopped: Promise<void> | undefined;
  logger.info({ endpoint: settings.endpoint, serviceName: settings.serviceName, from: settings.from }, 'tracing on: exporting spans over OTLP/HTTP');
  return {
    settings,
    tracer: provider.getTracer('switchboard', version),
    propagator: new W3CTraceContextPropagator(),
    shutdown(timeoutMs) {
      stopped ??= (async () => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, timeoutMs, 'late')));
        const outcome = await Promise.race([provider.shutdown().then(() => 'done' as const, () => 'done' as const), late]);
        clearTimeout(timer);
        if (outcome === 'late') logger.warn({ endpoint: settings.endpoint, timeoutMs }, 'traces not flushed in time at shutdown; the rest are dropped');
      })();
      return stopped;
    },
  };
}

/** The attributes of an audit log record: what a collector filters by (the body has the rest). */
const ATTRIBUTE_FIELDS = ['principal', 'credential', 'endpoint', 'era', 'transport', 'method', 'server', 'tool', 'prompt', 'uri', 'decision', 'outcome', 'code', 'latencyMs', 'traceId', 'chain', 'seq'] as const;

/** The audit trail's OTLP logs sink (gateway.audit.sinks `type: otlp`). */
export function createOtlpAuditSink(config: AuditOtlpSink, env: Readonly<Record<string, string | undefined>>, logger: Logger, version: string): AuditOutlet {
  const settings = resolveLogsSettings(config, env);
  const log = logger.child({ component: 'audit', sink: 'otlp' });
  let written = 0;
  let sent = 0;
  let dropped = 0;
  let failing = false;
  const inner = new OTLPLogExporter({ url: settings.endpoint });
  const exporter: LogRecordExporter = {
    export(records: ReadableLogRecord[], done: (result: ExportResult) => void) {
      inner.export(records, (result) => {
        if (result.code === ExportResultCode.SUCCESS) sent += records.length;
        else dropped += records.length;
        if (result.code !== ExportResultCode.SUCCESS && !failing) log.warn({ endpoint: settings.endpoint, err: result.error?.message }, 'could not export audit records over OTLP; they are dropped and counted');
        if (result.code === ExportResultCode.SUCCESS && failing) log.info({ endpoint: settings.endpoint }, 'exporting audit records over OTLP again');
        failing = result.code !== ExportResultCode.SUCCESS;
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush(),
  };
  const provider = new LoggerProvider({ resource: resourceOf(settings.serviceName, version), processors: [new BatchLogRecordProcessor({ exporter })] });
  const emitter = provider.getLogger('switchboard.audit', version);
  log.info({ endpoint: settings.endpoint }, 'audit records go to OTLP/HTTP logs');
  return {
    name: 'otlp',
    write(record: AuditRecord) {
      const attributes: Record<string, string | number> = {};
      for (const field of ATTRIBUTE_FIELDS) {
        const value = record[field];
        if (value !== undefined && value !== null) attributes[`switchboard.audit.${field}`] = value;
      }
      written++;
      emitter.emit({ eventName: 'switchboard.audit', severityNumber: SeverityNumber.INFO, severityText: 'INFO', timestamp: new Date(record.timestamp), body: JSON.stringify(record), attributes });
    },
    stats: () => ({ sink: 'otlp', sent, queued: Math.max(0, written - sent - dropped), dropped }),
    async close(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, timeoutMs, 'late')));
      const outcome = await Promise.race([provider.shutdown().then(() => 'done' as const, () => 'done' as const), late]);
      clearTimeout(timer);
      if (outcome === 'late') log.warn({ endpoint: settings.endpoint, timeoutMs }, 'audit records not exported in time at shutdown; the rest are dropped');
    },
  };
}
