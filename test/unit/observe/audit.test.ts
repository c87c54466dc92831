/**
 * The pure parts of the audit trail: the chain (stamp and verify: every way a file of records can
 * be tampered with), the recent ring and its query, the trail's capture (redaction before cutting),
 * the documented JSON Schema kept equal to the code's, and the `gateway.audit` config section.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.ts';
import { AUDIT_SCHEMA, auditRecordJsonSchema, type AuditEntry, type AuditOutlet, type AuditRecord } from '../../../src/log/audit-record.ts';
import { canonicalJson } from '../../../src/governance/canonical.ts';
import { canonicalRecord, createChain, GENESIS, verifyLines } from '../../../src/observe/audit/chain.ts';
import { createAuditRing } from '../../../src/observe/audit/ring.ts';
import { createAuditTrail, MAX_TEXT } from '../../../src/observe/audit/trail.ts';
import { createTestLogger } from '../../support/gateway.ts';

const entry = (over: Partial<AuditEntry> = {}): AuditEntry => ({
  principal: 'key:alice',
  subject: 'alice',
  credential: 'api-key',
  endpoint: 'target:col',
  era: '2025',
  transport: 'streamable-http',
  session: 's1',
  method: 'tools/call',
  server: 'col',
  tool: 'echo',
  upstreamAccount: null,
  decision: 'allow',
  rule: null,
  reason: null,
  outcome: 'ok',
  code: null,
  latencyMs: 1.5,
  requestId: 1,
  traceId: null,
  correlationId: null,
  ...over,
});

function records(n: number, chainId = 'c1'): AuditRecord[] {
  const chain = createChain(chainId);
  return Array.from({ length: n }, (_, i) => chain.stamp({ schema: AUDIT_SCHEMA, timestamp: new Date(0).toISOString(), ...entry({ requestId: i + 1 }) }));
}
const text = (list: readonly unknown[]) => list.map((r) => JSON.stringify(r)).join('\n');

describe('the audit chain', () => {
  it('numbers records from 1, links each to the one before, and passes an intact file', () => {
    const list = records(3);
    expect(list.map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(list[0]?.prev).toBe(GENESIS);
    expect(list[1]?.prev).toBe(list[0]?.hash);
    expect(verifyLines(text(list))).toMatchObject({ ok: true, records: 3, startsLate: [] });
  });

  it.each([
    ['an edited field', (l: AuditRecord[]) => [l[0], { ...l[1], outcome: 'denied' }, l[2]], 2, 'edited'],
    ['an edit rehashed without relinking', (l: AuditRecord[]) => [l[0], l[1], { ...l[2], prev: 'f'.repeat(64) }], 3, 'edited'],
    ['a removed record', (l: AuditRecord[]) => [l[0], l[2]], 2, 'expected seq 2'],
    ['a repeated record', (l: AuditRecord[]) => [l[0], l[1], l[1], l[2]], 3, 'expected seq 3'],
    ['two records swapped', (l: AuditRecord[]) => [l[0], l[2], l[1]], 2, 'expected seq 2'],
    ['an added field', (l: AuditRecord[]) => [l[0], { ...l[1], note: 'hi' }, l[2]], 2, 'not a switchboard.audit/v1.1 record'],
    ['a record cut short', (l: AuditRecord[]) => [l[0], JSON.stringify(l[1]).slice(0, 80), l[2]], 2, 'not valid JSON'],
  ])('names the first broken record: %s', (_label, tamper, line, why) => {
    const lines = tamper(records(3)).map((r) => (typeof r === 'string' ? r : JSON.stringify(r)));
    const report = verifyLines(lines.join('\n'));
    expect(report.ok).toBe(false);
    expect(report.broken).toMatchObject({ line, why: expect.stringContaining(why) });
  });

  it('catches a record rebuilt with a valid hash but the wrong prev (a forged insertion)', () => {
    const list = records(2);
    const forged = createChain('c1').stamp({ schema: AUDIT_SCHEMA, timestamp: new Date(0).toISOString(), ...entry({ tool: 'forged' }) });
    const report = verifyLines(text([list[0], { ...forged, seq: 2 }, list[1]]));
    expect(report.broken?.line).toBe(2);
  });

  it('hashes the same canonical text as canonicalJson, captured values included', () => {
    const [record] = records(1);
    const { hash: _hash, ...body } = { ...(record as AuditRecord), capture: { arguments: { z: 1, a: { y: [2, { b: 1, a: 0 }], x: null } }, truncated: ['result' as const] } };
    expect(canonicalRecord(body)).toBe(canonicalJson(body));
  });

  it('checks interleaved chains each on its own, skips lines that carry no record, and says which start late', () => {
    const a = records(3, 'a');
    const b = records(2, 'b');
    const mixed = [a[0], 'not json at all', b[0], { level: 30, msg: 'listening' }, a[1], { audit: true, event: 'pin', decision: 'recorded' }, b[1], a[2]];
    expect(verifyLines(mixed.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join('\n'))).toMatchObject({ ok: true, records: 5 });
    expect(verifyLines(text(a.slice(1)))).toMatchObject({ ok: true, startsLate: ['a'] });
  });

  it('reads records inside log lines, whatever the envelope adds', () => {
    const lines = records(2).map((r) => JSON.stringify({ level: 30, time: 1, pid: 2, hostname: 'h', name: 'switchboard', audit: true, ...r, msg: 'audit' }));
    expect(verifyLines(lines.join('\n'))).toMatchObject({ ok: true, records: 2 });
  });
});

describe('the recent ring', () => {
  it('keeps the newest `capacity` records and answers queries newest first, bounded', () => {
    const ring = createAuditRing(3);
    const list = records(5);
    list.forEach((r, i) => ring.push(i === 3 ? { ...r, principal: 'key:bob', outcome: 'denied' } : r));
    expect(ring.query().map((r) => r.seq)).toEqual([5, 4, 3]);
    expect(ring.query({ principal: 'key:bob' }).map((r) => r.seq)).toEqual([4]);
    expect(ring.query({ outcome: 'ok', limit: 1 }).map((r) => r.seq)).toEqual([5]);
    expect(ring.query({ tool: 'nope' })).toEqual([]);
    expect(createAuditRing(0).query()).toEqual([]);
  });
});

describe('the trail', () => {
  const collect = (): AuditOutlet & { got: AuditRecord[] } => {
    const got: AuditRecord[] = [];
    return { name: 'test', got, write: (r) => void got.push(r), stats: () => ({ sink: 'test', sent: got.length, queued: 0, dropped: 0 }), close: async () => undefined };
  };

  it('redacts before it cuts, copies what it captures, and captures nothing unless asked', () => {
    const out = collect();
    const capture = { arguments: true, results: true, maxBytes: 64, patterns: ['s3cr[e]t-[0-9]+'] };
    const trail = createAuditTrail({ sinks: [], recent: 10, capture }, [out], createTestLogger('silent', undefined));
    const args = { token: 'ghp_' + 'a'.repeat(36), note: 's3cret-42' };
    const result = { content: [{ type: 'text', text: `${'x'.repeat(50)} AKIAABCDEFGHIJKLMNOP` }] };
    trail.record(entry({ arguments: args, result }));
    const record = out.got[0] as AuditRecord;
    expect(record.capture?.arguments).toEqual({ token: '[REDACTED]', note: '[REDACTED]' });
    expect(args.token.startsWith('ghp_')).toBe(true);
    expect(record.capture?.truncated).toEqual(['result']);
    expect(JSON.stringify(record)).not.toContain('AKIA');
    expect(Buffer.byteLength(record.capture?.result as string)).toBeLessThanOrEqual(64);

    const quiet = collect();
    const off = createAuditTrail({ sinks: [], recent: 10, capture: { ...capture, arguments: false, results: false } }, [quiet], createTestLogger('silent', undefined));
    off.record(entry({ arguments: args, result }));
    expect(quiet.got[0]?.capture).toBeUndefined();
    expect(off.capture).toEqual({ arguments: false, results: false });
  });
});

describe('the trail, bounded', () => {
  it('cuts free text a client or a token chooses (a huge tool name, request id, subject)', () => {
    const got: AuditRecord[] = [];
    const out: AuditOutlet = { name: 't', write: (r) => void got.push(r), stats: () => ({ sink: 't', sent: 0, queued: 0, dropped: 0 }), close: async () => undefined };
    const trail = createAuditTrail({ sinks: [], recent: 10, capture: { arguments: false, results: false, maxBytes: 10, patterns: [] } }, [out], createTestLogger('silent', undefined));
    trail.record(entry({ tool: 't'.repeat(100_000), requestId: 'i'.repeat(50_000), subject: 's'.repeat(10_000) }));
    const record = got[0] as AuditRecord;
    expect(record.tool?.length).toBe(MAX_TEXT + 1);
    expect(String(record.requestId).length).toBe(MAX_TEXT + 1);
    expect(record.subject?.length).toBe(MAX_TEXT + 1);
    expect(verifyLines(JSON.stringify(record)).ok).toBe(true);
  });
});

describe('docs/audit-record.schema.json', () => {
  it('is the JSON Schema of the code (regenerate it from auditRecordJsonSchema when the record changes)', () => {
    const documented = JSON.parse(readFileSync(new URL('../../../docs/audit-record.schema.json', import.meta.url), 'utf8')) as unknown;
    expect(documented).toEqual(auditRecordJsonSchema());
  });
});

describe('gateway.audit', () => {
  const withAudit = (audit: unknown, gateway: Record<string, unknown> = {}) => () => parseConfig({ mcpServers: { a: { command: 'x' } }, gateway: { ...gateway, audit } });

  it('is off without auth or the section, the log sink alone with logging.audit, the section when written', () => {
    expect(parseConfig({ mcpServers: { a: { command: 'x' } } }).audit).toBeUndefined();
    expect(parseConfig({ mcpServers: { a: { command: 'x' } }, gateway: { logging: { audit: 'on' } } }).audit?.sinks).toEqual([{ type: 'log' }]);
    const config = withAudit({ sinks: [{ type: 'http', url: 'https://siem.example/in', secret: 'x'.repeat(16), maxQueue: '50' }, { type: 'otlp' }], capture: { arguments: 'true' } }, { logging: { audit: 'off' } })();
    expect(config.audit?.sinks[0]).toMatchObject({ type: 'http', maxQueue: 50, batchSize: 100 });
    expect(config.audit?.sinks[1]).toEqual({ type: 'otlp', endpoint: undefined, serviceName: undefined });
    expect(config.audit?.capture).toEqual({ arguments: true, results: false, maxBytes: 4096, patterns: [] });
  });

  it.each([
    ['an unknown key', { color: 'red' }, 'unknown key'],
    ['an unknown sink', { sinks: [{ type: 'syslog' }] }, 'expected "log" or "otlp" or "http"'],
    ['a sink key of another kind', { sinks: [{ type: 'log', url: 'http://x' }] }, 'unknown key'],
    ['no sinks', { sinks: [] }, 'list at least one sink'],
    ['credentials in a URL', { sinks: [{ type: 'http', url: 'https://u:p@siem/in' }] }, 'without user:password@'],
    ['a short secret', { sinks: [{ type: 'http', url: 'https://siem/in', secret: 'short' }] }, 'at least 16 characters'],
    ['a bad pattern', { capture: { patterns: ['('] } }, 'not a valid regular expression'],
    ['a huge maxBytes', { capture: { maxBytes: 10_000_000 } }, 'expected an integer from 1 to'],
  ])('refuses %s, saying how to fix it', (_label, audit, message) => {
    expect(withAudit(audit)).toThrow(message);
  });
});
