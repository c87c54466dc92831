/**
 * Attacks on the audit trail (issue 35). An attacker who can edit the log file but wants the edit
 * to pass `switchboard audit verify`: a forked record (a second record with the same seq, its hash
 * recomputed as docs/operations.md tells anyone how), two records swapped, an edit hidden in
 * whitespace, a record whose schema field is removed so it is skipped, a duplicate key that a
 * reader sees and the verifier does not. And a caller who puts a credential in a resource URI
 * (a token in a query string): no sink, nor the admin API, may keep it. Real gateway, real children,
 * the real CLI.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { AUDIT_SCHEMA } from '../../src/log/audit-record.ts';
import { verifyLines } from '../../src/observe/audit/chain.ts';
import { buildAggregateConfig, colliderServer } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { run, useCliProcesses } from '../support/cli.ts';
import { createTestLogger } from '../support/gateway.ts';
import { modern } from '../support/modern.ts';

useCliProcesses();

const KEYS = { alice: 'alice-key-0123456789abcdef', ops: 'ops-key-0123456789abcdef0' };
// Credential shapes a client may put in a URI's query string.
const GITHUB_TOKEN = 'ghp_0123456789abcdefghijABCDEFGHIJ012345';
const CLOUD_KEY = 'AKIAABCDEFGHIJKLMNOP';
// Credentials of no known shape: found by where they stand (a credential-named parameter, userinfo).
const OPAQUE = 'opaque-credential-value-4711';
const PASSWORD = 'hunter2-userinfo-password';
const ENVELOPE = ['level', 'time', 'pid', 'hostname', 'name', 'msg', 'audit'];

const lines: string[] = [];
let gw: RunningGateway;
let dir: string;

/** The hash docs/operations.md describes: SHA-256 of the canonical JSON (keys sorted at every depth, no spaces) without `hash`. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
const recordOf = (line: string) => Object.fromEntries(Object.entries(JSON.parse(line) as Record<string, unknown>).filter(([k]) => !ENVELOPE.includes(k)));
const rehash = (record: Record<string, unknown>) => {
  const { hash: _drop, ...body } = record;
  return { ...body, hash: createHash('sha256').update(canonical(body)).digest('hex') };
};
const SCHEMA_FIELD = `"schema":${JSON.stringify(AUDIT_SCHEMA)}`;
const auditLines = () => lines.filter((l) => l.includes(SCHEMA_FIELD));

/** What `switchboard audit verify` decides (its own function, in process: the CLI is run once below). */
async function verify(_name: string, text: string) {
  const report = verifyLines(text);
  return { code: report.ok ? 0 : 1, stdout: JSON.stringify(report.broken ?? {}), stderr: '' };
}
async function verifyCli(name: string, text: string) {
  const file = join(dir, name);
  await writeFile(file, text);
  return run(['audit', 'verify', file]);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-attack-audit-'));
  const base = buildAggregateConfig({ targets: { col: colliderServer() } });
  const auth = keyAuth(KEYS);
  const apiKeys = auth.apiKeys.map((k) => (k.name === 'ops' ? { ...k, scopes: ['switchboard:admin'] } : k));
  gw = await startGateway(
    { ...base, auth: { ...auth, apiKeys }, logging: { level: 'warn', audit: false }, audit: { sinks: [{ type: 'log' }], recent: 100, capture: { arguments: false, results: false, maxBytes: 4096, patterns: [] } } },
    { logger: createTestLogger('warn', lines), env: {} },
  );
  const alice = new Client({ name: 'attacker', version: '1' });
  await alice.connect(new StreamableHTTPClientTransport(new URL('/servers/col/mcp', gw.url), { requestInit: { headers: { authorization: `Bearer ${KEYS.alice}` } } }));
  for (let i = 0; i < 4; i++) await alice.callTool({ name: 'echo', arguments: { message: `call ${i}` } });
  await alice.readResource({ uri: `https://api.example.com/repo?access_token=${GITHUB_TOKEN}&key=${CLOUD_KEY}` }).catch(() => undefined);
  await alice.close();
  await modern(new URL('/servers/col/mcp', gw.url), 'resources/read', { uri: `https://bob:${PASSWORD}@files.example.com/x?page=2&API_Key=${OPAQUE}&sig=${OPAQUE}#top` }, { headers: { authorization: `Bearer ${KEYS.alice}` } });
  await modern(new URL('/servers/col/mcp', gw.url), 'tools/call', { name: 'echo', arguments: { message: 'last' } }, { headers: { authorization: `Bearer ${KEYS.alice}` } });
  for (let i = 0; i < 100 && auditLines().length < 7; i++) await new Promise((r) => setTimeout(r, 50));
});
afterAll(async () => {
  await gw?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('attack: the audit chain', () => {
  it('the intact log verifies, and the hash is the one the docs describe (so an attacker can compute it too)', async () => {
    const records = auditLines();
    expect(records.length).toBeGreaterThanOrEqual(7);
    const first = recordOf(records[0]!);
    expect(rehash(first).hash).toBe(first.hash);
    const ok = await verifyCli('intact.jsonl', `${lines.join('\n')}\n`);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
  });

  it('a forked record (same seq and prev, edited, its hash recomputed) right after the original is BROKEN', async () => {
    const records = auditLines();
    const second = recordOf(records[1]!);
    const fork = rehash({ ...second, outcome: 'denied', decision: 'deny' });
    const text = [records[0], records[1], JSON.stringify(fork), ...records.slice(2)].join('\n');
    const answer = await verify('fork.jsonl', text);
    expect(answer.code, answer.stdout).toBe(1);
    // And the fork placed instead of the rest of the chain after it (a truncation then a rewrite).
    const replaced = await verify('fork-only.jsonl', [records[0], JSON.stringify(fork), ...records.slice(2)].join('\n'));
    expect(replaced.code, replaced.stdout).toBe(1);
  });

  it('two records swapped, a record repeated, and one skipped by removing its schema are each BROKEN', async () => {
    const records = auditLines();
    const swapped = [records[0], records[2], records[1], ...records.slice(3)].join('\n');
    expect((await verify('swap.jsonl', swapped)).code).toBe(1);
    const repeated = [records[0], records[1], records[1], ...records.slice(2)].join('\n');
    expect((await verify('repeat.jsonl', repeated)).code).toBe(1);
    const unschema = [records[0], records[1]!.replace(`${SCHEMA_FIELD},`, ''), ...records.slice(2)].join('\n');
    expect(unschema).not.toBe(records.join('\n'));
    expect((await verify('unschema.jsonl', unschema)).code).toBe(1);
    const otherSchema = [records[0], records[1]!.replace(SCHEMA_FIELD, '"schema":"switchboard.audit/v2"'), ...records.slice(2)].join('\n');
    expect((await verify('v2.jsonl', otherSchema)).code).toBe(1);
  });

  it('an edit padded with whitespace or written with other key order is judged by its content', async () => {
    const records = auditLines();
    const second = recordOf(records[1]!);
    // Same content, other bytes: still intact (the hash is of the canonical form).
    const reformatted = JSON.stringify(Object.fromEntries(Object.entries(second).reverse()), null, 0).replace(/,"/g, ', "');
    expect((await verify('reformatted.jsonl', [records[0], reformatted, ...records.slice(2)].join('\n'))).code).toBe(0);
    // Other content padded to look alike: broken.
    const padded = records[1]!.replace('"outcome":"ok"', '"outcome" : "error" ');
    expect(padded).not.toBe(records[1]);
    expect((await verify('padded.jsonl', [records[0], padded, ...records.slice(2)].join('\n'))).code).toBe(1);
  });

  it('a duplicate key (what a reader sees differs from what the verifier hashes) is BROKEN', async () => {
    const records = auditLines();
    // JSON.parse keeps the last of two equal keys; a person or grep reads the first.
    const shadowed = records[1]!.replace(/^\{/, '{"outcome":"denied","principal":"key:mallory",');
    expect(JSON.parse(shadowed).outcome).toBe(JSON.parse(records[1]!).outcome);
    const answer = await verifyCli('duplicate-key.jsonl', [records[0], shadowed, ...records.slice(2)].join('\n'));
    expect(answer.code, answer.stdout).toBe(1);
  });
});

describe('attack: a credential in a resource URI', () => {
  it('never reaches the log sink nor the admin API, on a 2025 session and a 2026 request', async () => {
    const reads = auditLines().filter((l) => l.includes('"method":"resources/read"'));
    expect(reads.length).toBe(2);
    expect(reads.map((l) => JSON.parse(l).uri)).toEqual([
      'https://api.example.com/repo?access_token=[REDACTED]&key=[REDACTED]',
      'https://bob:[REDACTED]@files.example.com/x?page=2&API_Key=[REDACTED]&sig=[REDACTED]#top',
    ]);
    for (const line of reads) {
      expect(line).not.toContain(OPAQUE);
      expect(line).not.toContain(PASSWORD);
      expect(line).not.toContain(GITHUB_TOKEN);
      expect(line).not.toContain(CLOUD_KEY);
    }
    const api = await fetch(new URL('/admin/api/audit', gw.url), { headers: { authorization: `Bearer ${KEYS.ops}` } });
    const text = await api.text();
    expect(api.status, text).toBe(200);
    expect(text).toContain('resources/read');
    expect(text).not.toContain(GITHUB_TOKEN);
    expect(text).not.toContain(CLOUD_KEY);
    expect(text).not.toContain(OPAQUE);
    // The redacted records still chain.
    expect((await verify('after-uris.jsonl', lines.join('\n'))).code).toBe(0);
  });
});
