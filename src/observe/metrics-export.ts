/**
 * The per-gateway prom-client Registry (never the global one: two gateways in one process share
 * nothing) over the tallies of metrics.ts, read at scrape time. Counters and gauges are refilled
 * from the tallies in their `collect`; histograms report the buckets kept by histogram.ts.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram as PromHistogram, Registry } from 'prom-client';
import type { AuditOutletStats } from '../log/audit-record.ts';
import type { Histogram } from './histogram.ts';
import { HOOK_OUTCOMES, OUTCOMES, PIN_DECISIONS, SESSION_SLOTS, UPSTREAM_EVENTS, type Tallies } from './metrics.ts';
import { leaves, type Tree } from './tally.ts';

/** What the gateway holds now, counted when scraped. */
export interface Census {
  /** Live stdio children per target name. */
  children(): Iterable<readonly [string, number]>;
  /** The config generation now (it follows reloads); undefined: no such metric. */
  generation?: (() => string) | undefined;
  /** The audit trail's sinks now (observe/audit/); undefined: no trail, no such metrics. */
  auditSinks?: (() => readonly AuditOutletStats[]) | undefined;
}

export interface MetricsRegistry {
  readonly registry: Registry;
  readonly contentType: string;
  /** The exposition text. */
  render(): Promise<string>;
}

type Labels = Record<string, string>;

/** A counter refilled from `rows` at every scrape. */
function counter(registry: Registry, name: string, help: string, labelNames: string[], rows: () => Iterable<[Labels, number]>): void {
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const [labels, value] of rows()) this.inc(labels, value);
    },
  });
}

function gauge(registry: Registry, name: string, help: string, labelNames: string[], rows: () => Iterable<[Labels, number]>): void {
  new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const [labels, value] of rows()) this.set(labels, value);
    },
  });
}

/** A histogram whose series are the tree's histograms, one per value of `label`. */
function histogram(registry: Registry, name: string, help: string, label: string, tree: Tree<Histogram>): void {
  const metric = new PromHistogram({ name, help, labelNames: [label], registers: [registry] });
  const get = async () => {
    const values: Array<{ labels: Labels; value: number; metricName: string }> = [];
    for (const [[key], h] of leaves(tree)) {
      let cumulative = 0;
      h.bounds.forEach((bound, i) => {
        cumulative += h.counts[i] as number;
        values.push({ labels: { [label]: key as string, le: String(bound) }, value: cumulative, metricName: `${name}_bucket` });
      });
      values.push({ labels: { [label]: key as string, le: '+Inf' }, value: h.count, metricName: `${name}_bucket` });
      values.push({ labels: { [label]: key as string }, value: h.sum, metricName: `${name}_sum` });
      values.push({ labels: { [label]: key as string }, value: h.count, metricName: `${name}_count` });
    }
    return { name, help, type: 'histogram', values, aggregator: 'sum' };
  };
  // The registry reads `getForPromString` where a metric has one, else `get`.
  Object.assign(metric, { get, getForPromString: get });
}

function* perSlot(tree: Tree<Float64Array>, names: string[], slot: string, slotNames: readonly string[]): Generator<[Labels, number]> {
  for (const [keys, slots] of leaves(tree)) {
    for (let i = 0; i < slotNames.length; i++) {
      const labels: Labels = { [slot]: slotNames[i] as string };
      names.forEach((n, j) => (labels[n] = keys[j] as string));
      yield [labels, slots[i] as number];
    }
  }
}

export function createMetricsRegistry(t: Tallies, census: Census): MetricsRegistry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const p = 'switchboard_';
  counter(registry, `${p}requests_total`, 'JSON-RPC requests served, by endpoint, era, downstream transport, method and outcome', ['endpoint', 'era', 'transport', 'method', 'outcome'], () =>
    perSlot(t.requests, ['endpoint', 'era', 'transport', 'method'], 'outcome', OUTCOMES),
  );
  counter(registry, `${p}tool_calls_total`, 'tools/call requests by target, tool and outcome', ['target', 'tool', 'outcome'], () => perSlot(t.toolCalls, ['target', 'tool'], 'outcome', OUTCOMES));
  counter(registry, `${p}request_errors_total`, 'Requests the gateway failed, by GW_* code and target', ['code', 'target'], function* () {
    for (const [[code, target], v] of leaves(t.errors)) yield [{ code: code as string, target: target as string }, v[0] as number];
  });
  histogram(registry, `${p}gateway_duration_seconds`, 'Time the gateway added to a request (arrival to answer, minus upstream time)', 'transport', t.gatewayTime);
  histogram(registry, `${p}upstream_duration_seconds`, 'Time from sending a request upstream to its answer', 'target', t.upstreamTime);
  gauge(registry, `${p}sessions_open`, 'Open downstream sessions by endpoint and transport', ['endpoint', 'transport'], function* () {
    for (const [[endpoint, transport], v] of leaves(t.sessions)) {
      yield [{ endpoint: endpoint as string, transport: transport as string }, (v[0] as number) - (v[1] as number) - (v[2] as number) - (v[3] as number)];
    }
  });
  counter(registry, `${p}sessions_closed_total`, 'Sessions ended, by cause: ended (client, upstream, shutdown), evicted (room for a new one), reaped (idle or never initialized)', ['endpoint', 'transport', 'cause'], function* () {
    for (const [labels, value] of perSlot(t.sessions, ['endpoint', 'transport'], 'cause', SESSION_SLOTS)) if (labels.cause !== 'opened') yield [labels, value];
  });
  counter(registry, `${p}sessions_opened_total`, 'Sessions created, by endpoint and transport', ['endpoint', 'transport'], function* () {
    for (const [[endpoint, transport], v] of leaves(t.sessions)) yield [{ endpoint: endpoint as string, transport: transport as string }, v[0] as number];
  });
  gauge(registry, `${p}children_live`, 'Live stdio children per target (per-session and shared)', ['target'], function* () {
    for (const [target, n] of census.children()) yield [{ target }, n];
  });
  const generation = census.generation;
  if (generation !== undefined) {
    gauge(registry, `${p}config_generation_info`, 'The config generation this process runs (a hash of its effective config; 1 on the current one)', ['generation'], function* () {
      yield [{ generation: generation() }, 1];
    });
  }
  const auditSinks = census.auditSinks;
  if (auditSinks !== undefined) {
    counter(registry, `${p}audit_records_total`, 'Audit records handed on by each sink (gateway.audit.sinks)', ['sink'], () => auditSinks().map((s): [Labels, number] => [{ sink: s.sink }, s.sent]));
    counter(registry, `${p}audit_dropped_total`, 'Audit records a sink dropped: its queue was full, or its receiver refused them', ['sink'], () => auditSinks().map((s): [Labels, number] => [{ sink: s.sink }, s.dropped]));
    gauge(registry, `${p}audit_queued`, 'Audit records waiting in a sink for its receiver', ['sink'], () => auditSinks().map((s): [Labels, number] => [{ sink: s.sink }, s.queued]));
  }
  counter(registry, `${p}upstream_events_total`, 'Upstream starts, restarts, unexpected exits and failed starts, per target', ['target', 'event'], () => perSlot(t.upstreams, ['target'], 'event', UPSTREAM_EVENTS));
  counter(registry, `${p}auth_failures_total`, 'Requests refused by client authentication, by GW_* code', ['code'], function* () {
    for (const [[code], v] of leaves(t.authFailures)) yield [{ code: code as string }, v[0] as number];
  });
  counter(registry, `${p}rate_limit_rejections_total`, 'Requests refused by gateway.rateLimits', [], function* () {
    yield [{}, t.rateLimited[0] as number];
  });
  counter(registry, `${p}pin_decisions_total`, 'Pinning decisions per target: recorded (first sight), blocked, warned, approved, refused (a call)', ['target', 'decision'], () =>
    perSlot(t.pins, ['target'], 'decision', PIN_DECISIONS),
  );
  counter(registry, `${p}hook_outcomes_total`, 'Guardrail hook decisions per target and phase: allow, deny, modify, failed-open, failed-closed, redacted (mcpServers.<name>.hooks, .redact)', ['target', 'phase', 'outcome'], () =>
    perSlot(t.hooks, ['target', 'phase'], 'outcome', HOOK_OUTCOMES),
  );
  counter(registry, `${p}downstream_bytes_total`, 'Bytes read from and written to downstream connections', ['direction'], function* () {
    yield [{ direction: 'in' }, t.bytes[0] as number];
    yield [{ direction: 'out' }, t.bytes[1] as number];
  });
  counter(registry, `${p}label_values_folded_total`, 'Label values reported as "other" because their label reached gateway.admin.maxLabelValues', ['label'], function* () {
    for (const [label, c] of Object.entries(t.caps)) yield [{ label }, c.folded];
  });
  return { registry, contentType: registry.contentType, render: () => registry.metrics() };
}
