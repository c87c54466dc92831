/**
 * What tracing does, from `gateway.telemetry.traces` and the standard OpenTelemetry environment
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/). A key set in
 * the config wins; a key left unset is read from its variable; an empty variable counts as unset
 * (as the specification says). Pure, so the rules are tested without a process environment.
 */
import type { TracesConfig } from '../config/types.ts';

/** Where spans go and what they are called; undefined from `resolveTraceSettings`: tracing off. */
export interface TraceSettings {
  /** The OTLP/HTTP (JSON) traces URL. */
  readonly endpoint: string;
  readonly serviceName: string;
  /** Root share of new traces (parent-based); undefined: the SDK's OTEL_TRACES_SAMPLER rule. */
  readonly sampleRatio: number | undefined;
  /** Where each setting came from, for the start-up log line. */
  readonly from: { readonly enabled: 'config' | 'env'; readonly endpoint: 'config' | 'env' | 'default' };
}

/** The OTLP/HTTP default: a collector on this host (OTLP exporter specification). */
export const DEFAULT_OTLP_TRACES_ENDPOINT = 'http://localhost:4318/v1/traces';
export const DEFAULT_SERVICE_NAME = 'switchboard';

type Env = Readonly<Record<string, string | undefined>>;

const read = (env: Env, name: string): string | undefined => {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
};

/** OTEL_EXPORTER_OTLP_ENDPOINT is a base URL: the signal's path is appended to it (OTLP exporter spec). */
function endpointFromEnv(env: Env): string | undefined {
  const traces = read(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (traces !== undefined) return traces;
  const base = read(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (base === undefined) return undefined;
  return base.endsWith('/') ? `${base}v1/traces` : `${base}/v1/traces`;
}

/**
 * Tracing is on when the config says `enabled: true`; with `enabled` unset, when the environment
 * names a collector (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT) and neither
 * OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none says no.
 */
export function resolveTraceSettings(config: TracesConfig | undefined, env: Env): TraceSettings | undefined {
  const fromEnv = endpointFromEnv(env);
  let enabled: 'config' | 'env';
  if (config?.enabled !== undefined) {
    if (!config.enabled) return undefined;
    enabled = 'config';
  } else {
    const disabled = read(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true' || read(env, 'OTEL_TRACES_EXPORTER')?.toLowerCase() === 'none';
    if (disabled || fromEnv === undefined) return undefined;
    enabled = 'env';
  }
  const endpoint = config?.endpoint ?? fromEnv ?? DEFAULT_OTLP_TRACES_ENDPOINT;
  return {
    endpoint,
    serviceName: config?.serviceName ?? read(env, 'OTEL_SERVICE_NAME') ?? DEFAULT_SERVICE_NAME,
    sampleRatio: config?.sampleRatio,
    from: { enabled, endpoint: config?.endpoint !== undefined ? 'config' : fromEnv !== undefined ? 'env' : 'default' },
  };
}

/** The OTLP/HTTP logs default: a collector on this host. */
export const DEFAULT_OTLP_LOGS_ENDPOINT = 'http://localhost:4318/v1/logs';

/**
 * Where the audit trail's OTLP sink sends (gateway.audit.sinks, `type: otlp`): its `endpoint`, else
 * OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/logs, else this host.
 * The sink is on because the config lists it: OTEL_SDK_DISABLED does not silence an audit trail.
 */
export function resolveLogsSettings(config: { readonly endpoint: string | undefined; readonly serviceName: string | undefined }, env: Env): { endpoint: string; serviceName: string } {
  const base = read(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const fromBase = base === undefined ? undefined : base.endsWith('/') ? `${base}v1/logs` : `${base}/v1/logs`;
  return {
    endpoint: config.endpoint ?? read(env, 'OTEL_EXPORTER_OTLP_LOGS_ENDPOINT') ?? fromBase ?? DEFAULT_OTLP_LOGS_ENDPOINT,
    serviceName: config.serviceName ?? read(env, 'OTEL_SERVICE_NAME') ?? DEFAULT_SERVICE_NAME,
  };
}
