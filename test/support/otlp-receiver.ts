/**
 * A real OTLP/HTTP trace and logs receiver for tests: node:http on 127.0.0.1 (port 0) taking POST
 * /v1/traces and /v1/logs in the JSON encoding (OTLP specification, "OTLP/HTTP" and "JSON Protobuf Encoding"),
 * gzip or not. It answers as a collector does (200 with an empty partial-success body) and keeps
 * every span and log record, flattened with its resource attributes. Any other path, method or a protobuf body
 * gets an error status and is counted in `refused`, so a test sees an exporter it cannot read.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One received span; ids as lower-case hex, attributes as plain values. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  readonly status: { readonly code: number; readonly message?: string };
  readonly resource: Record<string, unknown>;
}

/** One received log record; body and attributes as plain values. */
export interface ReceivedLog {
  readonly eventName: string;
  readonly severityText: string;
  readonly body: unknown;
  readonly attributes: Record<string, unknown>;
  readonly resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The traces URL to configure (`…/v1/traces`). */
  readonly url: string;
  /** The base URL (what OTEL_EXPORTER_OTLP_ENDPOINT takes). */
  readonly base: string;
  readonly spans: ReceivedSpan[];
  /** The logs URL to configure (`…/v1/logs`). */
  readonly logsUrl: string;
  readonly logs: ReceivedLog[];
  /** Resolves once `count` log records arrived; rejects after `timeoutMs`. */
  waitForLogs(count: number, timeoutMs?: number): Promise<ReceivedLog[]>;
  /** Requests that were not OTLP/HTTP JSON trace or log exports. */
  readonly refused: string[];
  /** Resolves once a span matching `predicate` arrived; rejects after `timeoutMs`. */
  waitFor(predicate: (span: ReceivedSpan) => boolean, timeoutMs?: number): Promise<ReceivedSpan>;
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpKeyValue {
  key: string;
  value?: OtlpValue;
}

function valueOf(value: OtlpValue | undefined): unknown {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

const attributesOf = (list: OtlpKeyValue[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));

/** OTLP/JSON ids are hex; a base64 id (the proto3 JSON default) is turned into hex too. */
function hexId(id: string | undefined, bytes: number): string {
  if (id === undefined || id === '') return '';
  if (new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(id)) return id.toLowerCase();
  return Buffer.from(id, 'base64').toString('hex');
}

interface LogsExportRequest {
  resourceLogs?: Array<{
    resource?: { attributes?: OtlpKeyValue[] };
    scopeLogs?: Array<{ logRecords?: Array<{ eventName?: string; severityText?: string; body?: OtlpValue; attributes?: OtlpKeyValue[] }> }>;
  }>;
}

function toLogs(body: LogsExportRequest): ReceivedLog[] {
  const out: ReceivedLog[] = [];
  for (const rl of body.resourceLogs ?? []) {
    const resource = attributesOf(rl.resource?.attributes);
    for (const sl of rl.scopeLogs ?? []) {
      for (const r of sl.logRecords ?? []) {
        out.push({ eventName: r.eventName ?? '', severityText: r.severityText ?? '', body: valueOf(r.body), attributes: attributesOf(r.attributes), resource });
      }
    }
  }
  return out;
}

interface ExportRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId?: string;
        spanId?: string;
        parentSpanId?: string;
        name?: string;
        kind?: number;
        attributes?: OtlpKeyValue[];
        status?: { code?: number; message?: string };
      }>;
    }>;
  }>;
}

function toSpans(body: ExportRequest): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const resource = attributesOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: hexId(s.traceId, 16),
          spanId: hexId(s.spanId, 8),
          parentSpanId: hexId(s.parentSpanId, 8),
          name: s.name ?? '',
          kind: s.kind ?? 0,
          attributes: attributesOf(s.attributes),
          status: { code: s.status?.code ?? 0, ...(s.status?.message === undefined ? {} : { message: s.status.message }) },
          resource,
        });
      }
    }
  }
  return out;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const logs: ReceivedLog[] = [];
  const logWaiters = new Set<{ count: number; resolve: (logs: ReceivedLog[]) => void }>();
  const refused: string[] = [];
  const waiters = new Set<{ predicate: (span: ReceivedSpan) => boolean; resolve: (span: ReceivedSpan) => void }>();

  const server = createServer((req, res) => {
    void (async () => {
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
      if (req.method === 'POST' && req.url === '/v1/logs' && type === 'application/json') {
        try {
          logs.push(...toLogs(JSON.parse((await bodyOf(req)).toString('utf8')) as LogsExportRequest));
        } catch (err) {
          refused.push(`unreadable body: ${String(err)}`);
          res.writeHead(400, { 'content-type': 'application/json' }).end('{}');
          return;
        }
        for (const waiter of [...logWaiters]) {
          if (logs.length >= waiter.count) {
            logWaiters.delete(waiter);
            waiter.resolve(logs);
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/traces' || type !== 'application/json') {
        refused.push(`${req.method} ${req.url} ${type}`);
        await bodyOf(req).catch(() => undefined);
        res.writeHead(type === 'application/x-protobuf' ? 415 : 404).end();
        return;
      }
      let received: ReceivedSpan[];
      try {
        received = toSpans(JSON.parse((await bodyOf(req)).toString('utf8')) as ExportRequest);
      } catch (err) {
        refused.push(`unreadable body: ${String(err)}`);
        res.writeHead(400, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      spans.push(...received);
      for (const span of received) {
        for (const waiter of [...waiters]) {
          if (waiter.predicate(span)) {
            waiters.delete(waiter);
            waiter.resolve(span);
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;

  return {
    url: `${base}/v1/traces`,
    base,
    spans,
    logsUrl: `${base}/v1/logs`,
    logs,
    waitForLogs(count, timeoutMs = 15_000) {
      if (logs.length >= count) return Promise.resolve(logs);
      return new Promise((resolve, reject) => {
        const waiter = { count, resolve };
        logWaiters.add(waiter);
        setTimeout(() => {
          if (logWaiters.delete(waiter)) reject(new Error(`${logs.length} of ${count} log records within ${timeoutMs} ms`));
        }, timeoutMs).unref();
      });
    },
    refused,
    waitFor(predicate, timeoutMs = 10_000) {
      const found = spans.find(predicate);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = { predicate, resolve };
        waiters.add(waiter);
        setTimeout(() => {
          if (waiters.delete(waiter)) reject(new Error(`no matching span within ${timeoutMs} ms; got ${spans.map((s) => s.name).join(', ') || 'none'}`));
        }, timeoutMs).unref();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
