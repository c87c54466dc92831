import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { catalog } from '../../../src/errors/catalog.ts';
import { GatewayError, toGatewayError } from '../../../src/errors/gateway-error.ts';

const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
const rows = new Map(
  [...doc.matchAll(/^\| (GW_[A-Z_]+) \| (-?\d+) \| (\d+) \|/gm)].map((m) => [m[1]!, { jsonrpc: Number(m[2]), http: Number(m[3]) }]),
);

describe('error catalog and docs/errors.md', () => {
  it('documents every catalog code with the same JSON-RPC code and HTTP status', () => {
    for (const [code, entry] of Object.entries(catalog)) {
      expect(rows.get(code), `${code} missing from docs/errors.md`).toEqual({ jsonrpc: entry.jsonrpc, http: entry.http });
    }
  });

  it('documents no code the catalog does not have', () => {
    for (const code of rows.keys()) expect(Object.keys(catalog), `${code} is documented but not in the catalog`).toContain(code);
  });

  it('uses no invented code in the spec-reserved -32020..-32099 range or -32000..-32019', () => {
    // The only codes there are the spec's own (2026-07-28; -32042 is 2025-11-25's URL elicitation required), each for the meaning the spec gives it.
    const spec = new Map<string, number>([
      ['GW_UPSTREAM_AUTH_REQUIRED', -32042],
      ['GW_HEADER_MISMATCH', -32020],
      ['GW_PROTOCOL_VERSION_NOT_SUPPORTED', -32022],
    ]);
    for (const [code, entry] of Object.entries(catalog)) {
      if (entry.jsonrpc <= -32000 && entry.jsonrpc >= -32099) expect(spec.get(code), code).toBe(entry.jsonrpc);
    }
  });
});

describe('GatewayError', () => {
  it('puts the GW name and details in error.data', () => {
    const err = new GatewayError('GW_UPSTREAM_EXITED', 'Upstream "x" exited with code 3', { target: 'x', exitCode: 3 });
    expect(err.toJsonRpc()).toEqual({ code: -32603, message: 'Upstream "x" exited with code 3', data: { code: 'GW_UPSTREAM_EXITED', target: 'x', exitCode: 3 } });
    expect(err.httpStatus).toBe(502);
  });

  it('masks anything not raised on purpose, with a correlation id', () => {
    const masked = toGatewayError(new Error('secret path /etc/shadow'));
    const json = masked.toJsonRpc();
    expect(json.message).toBe('Internal error');
    expect(JSON.stringify(json)).not.toContain('shadow');
    expect((json.data as { correlationId: string }).correlationId).toMatch(/^[0-9a-f-]{36}$/);
  });
});
