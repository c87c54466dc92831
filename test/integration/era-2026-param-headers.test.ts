/**
 * `Mcp-Param-*` headers of a 2026-07-28 client checked at the gateway's 2026 entry (SEP-2243, the
 * custom-headers rule): a header that disagrees with the argument it mirrors, names no argument,
 * carries characters a header may not, or has a broken base64 form is refused with 400 / -32020
 * (GW_HEADER_MISMATCH) and the request's own id, and never reaches the upstream. Over real sockets,
 * to a 2026-only upstream (test/fixtures/modern-upstream.ts, whose `region` tool declares
 * `x-mcp-header: Region`) on a target's URL and on the aggregate; a 2025 session is unaffected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModernFixture, type ModernFixture } from '../fixtures/modern-upstream.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { errorOf, modern, MODERN, resultOf, envelope } from '../support/modern.ts';
import { rawRequest } from '../support/raw-http.ts';
import { rpc, textOf } from '../support/recorder.ts';

let fixture: ModernFixture;
let gw: TestGateway;

beforeAll(async () => {
  fixture = await startModernFixture();
  gw = await startTestGateway({ targets: { m: { type: 'http', url: fixture.url } } });
});
afterAll(async () => {
  await gw?.close();
  await fixture?.close();
});

const b64 = (text: string) => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
const args = { region: 'eu-west', text: 'hi' };
const call = (url: URL, id: unknown, headers: Record<string, string>, callArgs: Record<string, unknown> = args) =>
  modern(url, 'tools/call', { name: 'region', arguments: callArgs }, { id, headers });
const regionCalls = () => fixture.calls('tools/call', 'region').length;

describe.each([
  { where: 'a target URL', url: () => gw.mcpUrl('m') },
  { where: 'the aggregate', url: () => gw.mcpUrl() },
])('Mcp-Param-* at the 2026 entry ($where)', ({ url }) => {
  it('headers that mirror the arguments (plain, base64, any case) pass and the tool runs', async () => {
    for (const headers of [{ 'mcp-param-region': 'eu-west' }, { 'Mcp-Param-Region': b64('eu-west') }, { 'MCP-PARAM-TEXT': 'hi', 'mcp-param-region': ' eu-west ' }]) {
      const answer = await call(url(), 7, headers);
      expect(answer.status, answer.text).toBe(200);
      expect(textOf(resultOf(answer))).toBe('eu-west:hi');
    }
  });

  it.each([
    { what: 'a mismatched value', id: 'mismatch-1', headers: { 'mcp-param-region': 'us-east' } },
    { what: 'a header for an absent argument', id: 42, headers: { 'mcp-param-zone': 'a' } },
    { what: 'bad base64 padding', id: 'pad', headers: { 'mcp-param-region': '=?base64?ZXUtd2VzdA?=' } },
    { what: 'non-alphabet base64', id: 'chars', headers: { 'mcp-param-region': '=?base64?ZXUt!!!d2VzdA=?=' } },
  ])('$what: 400 / -32020 with the request id, and the upstream never sees it', async ({ id, headers }) => {
    const before = regionCalls();
    const answer = await call(url(), id, headers);
    expect(answer.status, answer.text).toBe(400);
    const error = errorOf(answer);
    expect(error.code).toBe(-32020);
    expect(error.data?.code).toBe('GW_HEADER_MISMATCH');
    expect(answer.json.id).toBe(id);
    expect(regionCalls()).toBe(before);
  });

  it('invalid characters (raw non-ASCII bytes in the value): 400 / -32020 with the request id', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'raw-9', method: 'tools/call', params: { name: 'region', arguments: { region: 'é', text: 'hi' }, _meta: envelope() } });
    const target = url();
    const answer = await rawRequest(target, 'POST', target.pathname, {
      Host: target.host,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN,
      'Mcp-Method': 'tools/call',
      'Mcp-Name': 'region',
      'Mcp-Param-Region': 'é',
    }, body);
    expect(answer.status, answer.body).toBe(400);
    const json = JSON.parse(answer.body) as { id: unknown; error: { code: number; data: { code: string } } };
    expect(json).toMatchObject({ id: 'raw-9', error: { code: -32020, data: { code: 'GW_HEADER_MISMATCH' } } });
  });
});

describe('a 2025 session is unaffected', () => {
  it('a stray Mcp-Param header on a 2025 request is not checked', async () => {
    const session = await rpc.initialize(gw.mcpUrl('m'));
    try {
      const answer = await session.request({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'region', arguments: args } }, { 'mcp-param-region': 'us-east' });
      expect(answer.status, answer.text).toBe(200);
      expect(textOf(answer.json.result)).toBe('eu-west:hi');
    } finally {
      await session.delete();
    }
  });
});
