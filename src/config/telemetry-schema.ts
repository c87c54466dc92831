/**
 * The `gateway.telemetry` section: OpenTelemetry traces (docs/operations.md, "Traces"). Every key
 * is optional and none has a default of its own: a key left unset is taken from the standard
 * `OTEL_*` environment variables (telemetry/settings.ts), so a key that is set always wins.
 */
import { z } from 'zod';
import { anObject, isPlainHttpUrl } from './schema-kit.ts';

/** The `${VAR}` spelling of a boolean or a decimal number (interpolation yields strings). */
const fromWord = (value: unknown): unknown => (value === 'true' ? true : value === 'false' ? false : value);
const fromDecimal = (value: unknown): unknown => (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value) ? Number(value) : value);

/** An absolute http(s) URL without credentials (an OTLP endpoint's own key goes in OTEL_EXPORTER_OTLP_HEADERS). */
const otlpUrl = z
  .string({ error: 'expected a string' })
  .refine(isPlainHttpUrl, { error: 'expected an absolute http:// or https:// URL without user:password@ (e.g. http://127.0.0.1:4318/v1/traces)' });

const tracesSchema = z.strictObject(
  {
    /**
     * Unset: on when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT names a
     * collector (and OTEL_SDK_DISABLED is not "true"), off otherwise: a gateway exports nothing
     * nobody asked for, and tracing costs on every request.
     */
    enabled: z.preprocess(fromWord, z.boolean({ error: 'expected true or false' })).optional(),
    /** Unset: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else http://localhost:4318/v1/traces. */
    endpoint: otlpUrl.optional(),
    /** Unset: OTEL_SERVICE_NAME, else "switchboard". */
    serviceName: z.string({ error: 'expected a string' }).min(1, { error: 'must not be empty' }).optional(),
    /** Unset: OTEL_TRACES_SAMPLER (and _ARG), else parentbased_always_on. */
    sampleRatio: z
      .preprocess(fromDecimal, z.number({ error: 'expected a number from 0 to 1' }).min(0, { error: 'expected a number from 0 to 1' }).max(1, { error: 'expected a number from 0 to 1' }))
      .optional(),
  },
  anObject,
);

export const telemetrySchema = z.strictObject({ traces: tracesSchema.optional() }, anObject);

export type TelemetrySection = z.output<typeof telemetrySchema>;
