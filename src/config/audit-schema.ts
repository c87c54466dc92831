/**
 * The `gateway.audit` section (docs/operations.md, "Audit"; config/audit-types.ts). Strict like
 * the rest of the config; every default with its reason. Absent: `logging.audit` decides whether
 * records are written, to the log stream only.
 */
import { z } from 'zod';
import { anObject, boolean, isPlainHttpUrl, isRegExp, MAX_DURATION_MS, MiB, nonEmptyString, nonNegative, positive, scalarString } from './schema-kit.ts';

const url = (example: string) =>
  nonEmptyString().refine(isPlainHttpUrl, { error: `expected an absolute http:// or https:// URL without user:password@ (e.g. ${example})` });

const logSink = z.strictObject({ type: z.literal('log') }, anObject);

const otlpSink = z.strictObject(
  {
    type: z.literal('otlp'),
    /** Unset: OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/logs, else http://localhost:4318/v1/logs. */
    endpoint: url('http://127.0.0.1:4318/v1/logs').optional(),
    /** Unset: OTEL_SERVICE_NAME, else "switchboard". */
    serviceName: nonEmptyString().optional(),
  },
  anObject,
);

const httpSink = z.strictObject(
  {
    type: z.literal('http'),
    /** Where batches are POSTed; no user:password@ (a secret in a URL ends up in logs). */
    url: url('https://siem.example/ingest'),
    /** Unset: unsigned. The hooks' signature (X-Switchboard-Signature); usually `${ENV_VAR}`. Never logged. */
    secret: scalarString().pipe(z.string().min(16, { error: 'use a secret of at least 16 characters' })).optional(),
    /** 100 records per POST: few requests under load, small bodies. */
    batchSize: positive(10_000).default(100),
    /** 1 s: a record waits at most this long for its batch to fill. */
    flushMs: positive(MAX_DURATION_MS).default(1_000),
    /** 10,000 records (a few MiB) wait while the receiver is down; past it the oldest are dropped and counted. */
    maxQueue: positive(1_000_000).default(10_000),
    /** 5 s per POST, connect to answer. */
    timeoutMs: positive(MAX_DURATION_MS).default(5_000),
    /** 30 s: retries back off from 250 ms, doubling, to at most this. */
    maxBackoffMs: positive(MAX_DURATION_MS).default(30_000),
  },
  anObject,
);

const sinkSchema = z.discriminatedUnion('type', [logSink, otlpSink, httpSink], { error: 'expected a sink with "type": "log", "otlp" or "http"' });

export const auditSchema = z.strictObject(
  {
    /** [log]: the log stream, as `logging.audit` writes it. */
    sinks: z.array(sinkSchema, { error: 'expected a list of sinks' }).min(1, { error: 'list at least one sink' }).max(8, { error: 'at most 8 sinks' }).default([{ type: 'log' }]),
    /** 1000 records in memory for the console: a few hundred KiB. 0: none kept. */
    recent: nonNegative(100_000).default(1_000),
    capture: z
      .strictObject(
        {
          /** false: arguments may hold personal data or secrets; capturing them is a decision. */
          arguments: boolean().default(false),
          /** false: results are larger still, and as sensitive. */
          results: boolean().default(false),
          /** 4 KiB per value: a record stays a line, a file's content does not fill the trail. */
          maxBytes: positive(1 * MiB).default(4_096),
          /** []: the built-in secret shapes only (keys, tokens: session/hooks/redact.ts); these are added. */
          patterns: z.array(nonEmptyString().refine(isRegExp, { error: 'not a valid regular expression' }), { error: 'expected a list of regular expressions' }).default([]),
        },
        anObject,
      )
      .prefault({}),
  },
  anObject,
);

export type AuditSection = z.output<typeof auditSchema>;
