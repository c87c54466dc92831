/**
 * The audit trail end to end (docs/operations.md, "Audit"): one gateway with gateway.auth, a policy
 * and all three sinks (the log stream, OTLP logs to a real OTLP/HTTP receiver, a signed HTTP sink to
 * a real receiver), capture of arguments and results on. Real clients call through a server path,
 * the aggregate and a 2026 request, as two principals; one call is denied by the policy. Then: every
 * sink holds the same records, each valid against docs/audit-record.schema.json and chained; no
 * secret (API keys, a cloud key and an operator pattern in the arguments) in any of them; the admin
 * API filters them for an operator and refuses everyone else; the real CLI passes the chain, and
 * fails it at the line where one record was edited, or one removed.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyRule } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { verifyLines } from '../../src/observe/audit/chain.ts';
import { buildAggregateConfig, colliderServer } from '../support/aggregate.ts';
import { startAuditReceiver, type AuditReceiver } from '../support/audit-receiver.ts';
import { keyAuth } from '../support/auth-server.ts';
import { run, useCliProcesses } from '../support/cli.ts';
import { createTestLogger } from '../support/gateway.ts';
import { modern } from '../support/modern.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.ts';
import { openWs, wsUrl } from '../support/ws-client.ts';

useCliProcesses();

const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef0', ops: 'ops-key-0123456789abcdef0' };
const SECRET = 'audit-receiver-secret-0123456789';
const CLOUD_KEY = 'AKIAABCDEFGHIJKLMNOP';
const OPERATOR_SECRET = 'hunter2-pattern-secret';
const rule = (r: Partial<PolicyRule>): PolicyRule => ({ effect: 'allow', principals: ['*'], scopes: [], claims: {}, servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'], ...r });
const RULES = [rule({ principals: ['key:alice'] }), rule({ principals: ['key:bob'], servers: ['col'], tools: ['echo'] })];
/** Pino's own fields around a record on the log stream. */
const ENVELOPE = ['level', 'time', 'pid', 'hostname', 'name', 'msg', 'audit'];

const lines: string[] = [];
let gw: RunningGateway;
let otlp: OtlpReceiver;
let receiver: AuditReceiver;
let dir: string;

const auditLines = () => lines.filter((l) => (JSON.parse(l) as { audit?: unknown; schema?: unknown }).schema !== undefined);
const recordsOfLog = () =>
  auditLines().map((l) => Object.fromEntries(Object.entries(JSON.parse(l) as Record<string, unknown>).filter(([k]) => !ENVELOPE.includes(k))));

async function client(path: string, key: string): Promise<Client> {
  const c = new Client({ name: 'audit-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(path, gw.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return c;
}

const admin = (query: string, key = KEYS.ops) => fetch(new URL(`/admin/api/audit${query}`, gw.url), { headers: { authorization: `Bearer ${key}` } });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-audit-'));
  otlp = await startOtlpReceiver();
  receiver = await startAuditReceiver(SECRET);
  const base = buildAggregateConfig({ targets: { col: colliderServer(), other: colliderServer() } });
  const auth = keyAuth(KEYS);
  const apiKeys = auth.apiKeys.map((k) => (k.name === 'ops' ? { ...k, scopes: ['switchboard:admin'] } : k));
  gw = await startGateway(
    {
      ...base,
      auth: { ...auth, apiKeys },
      policy: { rules: RULES },
      logging: { level: 'warn', audit: false },
      audit: {
        sinks: [
          { type: 'log' },
          { type: 'otlp', endpoint: otlp.logsUrl, serviceName: 'audit-test' },
          { type: 'http', url: receiver.url, secret: SECRET, batchSize: 2, flushMs: 50, maxQueue: 100, timeoutMs: 5_000, maxBackoffMs: 200 },
        ],
        recent: 100,
        capture: { arguments: true, results: true, maxBytes: 300, patterns: ['hunter2-[a-z-]+'] },
      },
    },
    { logger: createTestLogger('warn', lines), env: {} },
  );
  const alice = await client('/servers/col/mcp', KEYS.alice);
  await alice.callTool({ name: 'echo', arguments: { message: `key ${CLOUD_KEY} and ${OPERATOR_SECRET}` } });
  await alice.callTool({ name: 'echo', arguments: { message: 'x'.repeat(1_000) } });
  await alice.close();
  const aggregate = await client('/mcp', KEYS.alice);
  await aggregate.callTool({ name: 'other__echo', arguments: { message: 'via the aggregate' } });
  await aggregate.close();
  const stateless = await modern(new URL('/servers/col/mcp', gw.url), 'tools/call', { name: 'whoami', arguments: {} }, { headers: { authorization: `Bearer ${KEYS.alice}` } });
  expect(stateless.json.result).toBeDefined();
  const bob = await client('/servers/col/mcp', KEYS.bob);
  expect(await bob.callTool({ name: 'whoami', arguments: {} }).catch((err: unknown) => err)).toBeInstanceOf(Error);
  await bob.close();
  // WebSocket: the credential rides in the subprotocol.
  const ws = await openWs(wsUrl(gw.url, '/servers/col/ws'), ['mcp', `bearer.${KEYS.alice}`]);
  ws.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ws', version: '1' } } });
  await ws.until(0);
  ws.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  ws.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'over a socket' } } });
  expect((await ws.until(1)).at(-1)?.result).toBeDefined();
  ws.socket.close();
  await ws.closed;
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await otlp?.close();
  await receiver?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('the audit trail', () => {
  it('writes one record per call to the log stream, valid against the documented JSON Schema and chained, whatever logging.level says', () => {
    const records = recordsOfLog();
    expect(records).toHaveLength(6);
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
    addFormats.default(ajv);
    const validate = ajv.compile(JSON.parse(readFileSync(new URL('../../docs/audit-record.schema.json', import.meta.url), 'utf8')) as object);
    for (const record of records) expect(validate(record), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...records[0], extra: 1 })).toBe(false);
    expect(verifyLines(auditLines().join('\n'))).toMatchObject({ ok: true, records: 6 });
    expect(records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('names who, how, where and what, and the decision, on every path and era', () => {
    const records = recordsOfLog();
    expect(records[0]).toMatchObject({ principal: 'key:alice', subject: 'alice', credential: 'api-key', endpoint: 'target:col', era: '2025', transport: 'streamable-http', method: 'tools/call', server: 'col', tool: 'echo', decision: 'allow', outcome: 'ok', upstreamAccount: null, requestId: expect.anything() });
    expect(records[2]).toMatchObject({ principal: 'key:alice', server: 'other', tool: 'other__echo', era: '2025' });
    expect(records[3]).toMatchObject({ principal: 'key:alice', server: 'col', tool: 'whoami', era: '2026' });
    expect(records[4]).toMatchObject({ principal: 'key:bob', tool: 'whoami', decision: 'deny', reason: 'policy', outcome: 'denied', server: null });
    expect(records[5]).toMatchObject({ principal: 'key:alice', credential: 'api-key', transport: 'websocket', era: '2025', server: 'col', tool: 'echo', outcome: 'ok' });
    expect(new Set(records.map((r) => r.session)).size).toBe(5);
  });

  it('captures arguments and results redacted and size-bounded; no secret reaches any sink or the admin API', async () => {
    const records = recordsOfLog();
    const first = records[0]?.capture as { arguments: { message: string }; result: unknown };
    expect(first.arguments.message).toBe('key [REDACTED] and [REDACTED]');
    expect(JSON.stringify(first.result)).toContain('[REDACTED]');
    expect(records[1]?.capture).toMatchObject({ truncated: ['arguments', 'result'] });
    expect(Buffer.byteLength((records[1]?.capture as { arguments: string }).arguments)).toBeLessThanOrEqual(300);
    await otlp.waitForLogs(6);
    await receiver.waitForRecords(6);
    const api = await (await admin('?limit=100')).text();
    const everything = [lines.join('\n'), JSON.stringify(otlp.logs), receiver.batches.join('\n'), api].join('\n');
    for (const secret of [CLOUD_KEY, OPERATOR_SECRET, ...Object.values(KEYS), SECRET]) expect(everything).not.toContain(secret);
  });

  it('sends the same records over OTLP logs and to the signed HTTP sink, in order', async () => {
    const hashes = recordsOfLog().map((r) => r.hash);
    const logs = await otlp.waitForLogs(6);
    expect(logs.map((l) => (JSON.parse(l.body as string) as { hash: string }).hash).sort()).toEqual([...hashes].sort());
    expect(logs[0]).toMatchObject({ eventName: 'switchboard.audit', resource: { 'service.name': 'audit-test' } });
    expect(logs.find((l) => l.attributes['switchboard.audit.principal'] === 'key:bob')?.attributes).toMatchObject({ 'switchboard.audit.outcome': 'denied', 'switchboard.audit.decision': 'deny' });
    await receiver.waitForRecords(6);
    expect(receiver.records.map((r) => r.hash)).toEqual(hashes);
    expect(receiver.unsigned).toBe(0);
    expect(verifyLines(receiver.records.map((r) => JSON.stringify(r)).join('\n'))).toMatchObject({ ok: true, records: 6 });
  });

  it('answers the recent records to an operator, filtered, newest first; refuses anyone else and bad queries', async () => {
    const all = (await (await admin('')).json()) as { records: Array<{ seq: number; principal: string; tool: string; outcome: string }> };
    expect(all.records.map((r) => r.seq)).toEqual([6, 5, 4, 3, 2, 1]);
    const alice = (await (await admin('?principal=key:alice&tool=echo&outcome=ok')).json()) as typeof all;
    expect(alice.records.map((r) => r.seq)).toEqual([6, 2, 1]);
    const denied = (await (await admin('?outcome=denied&limit=1')).json()) as typeof all;
    expect(denied.records).toMatchObject([{ principal: 'key:bob', outcome: 'denied' }]);
    expect(((await (await admin('?server=other')).json()) as typeof all).records.map((r) => r.seq)).toEqual([3]);
    expect((await admin('', KEYS.alice)).status).toBe(403);
    expect((await fetch(new URL('/admin/api/audit', gw.url))).status).toBe(401);
    for (const bad of ['?outcome=maybe', '?limit=0', '?limit=5000', '?color=red', '?tool=a&tool=b']) expect((await admin(bad)).status, bad).toBe(400);
  });

  it('`switchboard audit verify` passes the chain and names the first broken record when one is edited or removed (the real CLI)', async () => {
    const log = lines.join('\n');
    const intact = join(dir, 'intact.jsonl');
    await writeFile(intact, `${log}\n`);
    const ok = await run(['audit', 'verify', intact]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('OK: 6 record(s) in 1 chain(s)');

    const all = log.split('\n');
    const third = all.findIndex((l) => l.includes('"seq":3'));
    const edited = [...all];
    edited[third] = (edited[third] as string).replace('"outcome":"ok"', '"outcome":"error"');
    expect(edited[third]).not.toBe(all[third]);
    await writeFile(join(dir, 'edited.jsonl'), edited.join('\n'));
    const broken = await run(['audit', 'verify', join(dir, 'edited.jsonl')]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain(`BROKEN at line ${third + 1}`);
    expect(broken.stdout).toContain('seq 3: its hash does not match its content');

    await writeFile(join(dir, 'removed.jsonl'), all.filter((_, i) => i !== third).join('\n'));
    const removed = await run(['audit', 'verify', join(dir, 'removed.jsonl')]);
    expect(removed.code).toBe(1);
    expect(removed.stdout).toMatch(/seq 4: expected seq 3/);

    const usage = await run(['audit', 'verify']);
    expect(usage.code).toBe(2);
    const missing = await run(['audit', 'verify', join(dir, 'nope.jsonl')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('ENOENT');
  });
});
