/**
 * Every 2026-07-28 validation rule on a real gateway (fixture over stdio), over real sockets: the
 * HTTP status, the JSON-RPC code, the GW name, and the request's own id echoed in every error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFORMANCE_FIXTURE } from '../support/conformance.ts';
import { startGateway } from '../../src/main.ts';
import { buildConfig, createTestLogger, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { envelope, errorOf, MODERN, modern, resultOf, standardHeaders } from '../support/modern.ts';
import { MCP_HEADERS, post } from '../support/recorder.ts';

let gw: TestGateway;
let url: URL;

beforeAll(async () => {
  gw = await startTestGateway({ targets: { conformance: { command: process.execPath, args: [CONFORMANCE_FIXTURE, 'stdio'] } } });
  url = gw.mcpUrl();
});
afterAll(async () => {
  await gw?.close();
});

interface Case {
  name: string;
  send: () => Promise<Awaited<ReturnType<typeof modern>>>;
  status: number;
  code: number;
  gw: string;
}

const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const VERSION = 'io.modelcontextprotocol/protocolVersion';

const cases: Case[] = [
  { name: 'no _meta at all', send: () => post(url, JSON.stringify({ jsonrpc: '2.0', id: 11, method: 'tools/list', params: {} }), standardHeaders('tools/list', {})), status: 400, code: -32602, gw: 'GW_INVALID_ENVELOPE' },
  { name: '_meta without the protocol version (2026 header)', send: () => modern(url, 'tools/list', {}, { id: 12, meta: { [VERSION]: undefined } }), status: 400, code: -32602, gw: 'GW_INVALID_ENVELOPE' },
  { name: '_meta without clientCapabilities', send: () => modern(url, 'tools/list', {}, { id: 13, meta: { [CAPS]: undefined } }), status: 400, code: -32602, gw: 'GW_INVALID_ENVELOPE' },
  { name: 'a malformed clientInfo', send: () => modern(url, 'tools/list', {}, { id: 14, meta: { 'io.modelcontextprotocol/clientInfo': 'me' } }), status: 400, code: -32602, gw: 'GW_INVALID_ENVELOPE' },
  { name: 'header version differs from the envelope', send: () => modern(url, 'tools/list', {}, { id: 15, meta: { [VERSION]: '2027-01-01' } }), status: 400, code: -32020, gw: 'GW_HEADER_MISMATCH' },
  { name: 'no MCP-Protocol-Version header', send: () => modern(url, 'tools/list', {}, { id: 16, headers: { 'mcp-protocol-version': undefined } }), status: 400, code: -32020, gw: 'GW_HEADER_MISMATCH' },
  { name: 'no Mcp-Method header', send: () => modern(url, 'tools/list', {}, { id: 17, headers: { 'mcp-method': undefined } }), status: 400, code: -32020, gw: 'GW_HEADER_MISMATCH' },
  { name: 'Mcp-Method names another method', send: () => modern(url, 'tools/list', {}, { id: 18, headers: { 'mcp-method': 'prompts/list' } }), status: 400, code: -32020, gw: 'GW_HEADER_MISMATCH' },
  { name: 'no Mcp-Name on tools/call', send: () => modern(url, 'tools/call', { name: 'test_simple_text' }, { id: 19, headers: { 'mcp-name': undefined } }), status: 400, code: -32020, gw: 'GW_HEADER_MISMATCH' },
  { name: 'Mcp-Name names another tool', send: () => modern(url, 'tools/call', { name: 'test_simple_text' }, { id: 20, headers: { 'mcp-name': 'other' } }), status: 400, code: -32020, gw: 'GW_HEADER_MISMATCH' },
  { name: 'Mcp-Name with broken base64', send: () => modern(url, 'tools/call', { name: 'test_simple_text' }, { id: 21, headers: { 'mcp-name': '=?base64?@@@?=' } }), status: 400, code: -32020, gw: 'GW_HEADER_MISMATCH' },
  { name: 'Mcp-Name mismatch on resources/read', send: () => modern(url, 'resources/read', { uri: 'test://static-text' }, { id: 22, headers: { 'mcp-name': 'test://other' } }), status: 400, code: -32020, gw: 'GW_HEADER_MISMATCH' },
  { name: 'an unsupported revision', send: () => modern(url, 'tools/list', {}, { id: 23, meta: { [VERSION]: 'v999.0.0' }, headers: { 'mcp-protocol-version': 'v999.0.0' } }), status: 400, code: -32022, gw: 'GW_PROTOCOL_VERSION_NOT_SUPPORTED' },
  { name: 'initialize (removed)', send: () => modern(url, 'initialize', {}, { id: 24 }), status: 404, code: -32601, gw: 'GW_METHOD_NOT_FOUND' },
  { name: 'ping (removed)', send: () => modern(url, 'ping', {}, { id: 25 }), status: 404, code: -32601, gw: 'GW_METHOD_NOT_FOUND' },
  { name: 'logging/setLevel (removed)', send: () => modern(url, 'logging/setLevel', { level: 'info' }, { id: 26 }), status: 404, code: -32601, gw: 'GW_METHOD_NOT_FOUND' },
  { name: 'resources/subscribe (removed)', send: () => modern(url, 'resources/subscribe', { uri: 'test://x' }, { id: 27 }), status: 404, code: -32601, gw: 'GW_METHOD_NOT_FOUND' },
  { name: 'resources/unsubscribe (removed)', send: () => modern(url, 'resources/unsubscribe', { uri: 'test://x' }, { id: 28 }), status: 404, code: -32601, gw: 'GW_METHOD_NOT_FOUND' },
  {
    name: 'initialize without an envelope but with a 2026 header',
    send: () => post(url, JSON.stringify({ jsonrpc: '2.0', id: 29, method: 'initialize', params: { protocolVersion: MODERN, capabilities: {}, clientInfo: { name: 'x', version: '1' } } }), { 'mcp-protocol-version': MODERN }),
    status: 400,
    code: -32020,
    gw: 'GW_HEADER_MISMATCH',
  },
  { name: 'a forged requestState', send: () => modern(url, 'tools/call', { name: 'test_simple_text', requestState: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', inputResponses: {} }, { id: 30 }), status: 400, code: -32602, gw: 'GW_INVALID_REQUEST_STATE' },
];

describe('2026-07-28 requests that break a rule', () => {
  it.each(cases)('$name: HTTP $status, $code ($gw), the request id echoed', async ({ send, status, code, gw: name }) => {
    const answer = await send();
    expect(answer.status, answer.text).toBe(status);
    const error = errorOf(answer);
    expect(error.code).toBe(code);
    expect(error.data?.code).toBe(name);
    expect(answer.json.id).not.toBeNull();
    expect(answer.json.id).toBe(JSON.parse(answer.text).id);
    expect(answer.headers.get('mcp-session-id')).toBeNull();
  });

  it.each([
    ['header version differs from the envelope', 'tools/list', {}, { [VERSION]: '2027-01-01' }, {}, 400],
    ['no Mcp-Method header', 'tools/list', {}, {}, { 'mcp-method': undefined }, 400],
    ['Mcp-Name names another tool', 'tools/call', { name: 'test_simple_text' }, {}, { 'mcp-name': 'other' }, 400],
    ['an envelope without clientCapabilities', 'tools/list', {}, { [CAPS]: undefined }, {}, 400],
    ['an unsupported revision', 'tools/list', {}, { [VERSION]: 'v999.0.0' }, { 'mcp-protocol-version': 'v999.0.0' }, 400],
    ['ping (removed)', 'ping', {}, {}, {}, 404],
    ['a forged requestState', 'tools/call', { name: 'test_simple_text', requestState: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', inputResponses: {} }, {}, {}, 400],
  ] as const)('%s: a big-integer id is echoed as its exact text', async (_name, method, params, meta, headers, status) => {
    const BIG = '123456789012345678901234567890';
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'BIG-ID', method, params: { ...params, _meta: envelope(meta) } }).replace('"BIG-ID"', BIG);
    const sent: Record<string, string> = { ...standardHeaders(method, params) };
    for (const [key, value] of Object.entries(headers as Record<string, string | undefined>)) {
      if (value === undefined) delete sent[key];
      else sent[key] = value;
    }
    const answer = await post(url, body, sent);
    expect(answer.status, answer.text).toBe(status);
    expect(answer.text).toContain(`"id":${BIG}`);
    expect(answer.json.error).toBeDefined();
  });

  it('an unsupported revision lists what is supported and echoes what was asked', async () => {
    const answer = await modern(url, 'server/discover', {}, { id: 'v', meta: { [VERSION]: 'v999.0.0' }, headers: { 'mcp-protocol-version': 'v999.0.0' } });
    expect(answer.json.id).toBe('v');
    expect(errorOf(answer).data).toMatchObject({ supported: [MODERN], requested: 'v999.0.0' });
  });

  it('an unknown method is 404 / -32601 with its id', async () => {
    const answer = await modern(url, 'unknown/method', {}, { id: 601 });
    expect(answer.status).toBe(404);
    expect(errorOf(answer).code).toBe(-32601);
    expect(answer.json.id).toBe(601);
  });

  it('a batch with a 2026 request is 400 / -32600', async () => {
    const item = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } };
    const answer = await post(url, JSON.stringify([item]), { 'mcp-protocol-version': MODERN });
    expect(answer.status).toBe(400);
    expect(errorOf(answer).code).toBe(-32600);
  });

  it('GET and DELETE from a 2026 client are 405 with Allow: POST', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(url, { method, headers: { accept: 'text/event-stream', 'mcp-protocol-version': MODERN } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32600);
    }
  });

  it('a 2026 notification is accepted (202) and goes nowhere', async () => {
    const res = await fetch(url, { method: 'POST', headers: { ...MCP_HEADERS, 'mcp-protocol-version': MODERN, 'mcp-method': 'notifications/initialized' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized', params: { _meta: envelope() } }) });
    expect(res.status).toBe(202);
  });

  it('Mcp-Name in the =?base64?...?= form is decoded before it is compared', async () => {
    const name = 'test_simple_text';
    const answer = await modern(url, 'tools/call', { name }, { headers: { 'mcp-name': `=?base64?${Buffer.from(name).toString('base64')}?=` } });
    expect(answer.status).toBe(200);
    expect(resultOf(answer).resultType).toBe('complete');
  });

  it('a valid request still works after all of that, and carries no session id', async () => {
    const answer = await modern(url, 'tools/call', { name: 'test_simple_text', arguments: {} }, { id: 'ok' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('mcp-session-id')).toBeNull();
    expect(answer.json.id).toBe('ok');
    expect(resultOf(answer)).toMatchObject({ resultType: 'complete', content: [{ type: 'text' }] });
  });
});

describe('2026-07-28 requests refused before the ladder', () => {
  const BIG = '123456789012345678901234567890';
  const bigRequest = (method: string, params: Record<string, unknown>) =>
    JSON.stringify({ jsonrpc: '2.0', id: 'BIG-ID', method, params: { ...params, _meta: envelope({}) } }).replace('"BIG-ID"', BIG);

  it('an unknown server path: 404 that echoes the big-integer id as its exact text', async () => {
    const answer = await post(new URL('/servers/nope/mcp', url), bigRequest('tools/list', {}), standardHeaders('tools/list', {}));
    expect(answer.status, answer.text).toBe(404);
    expect(answer.text).toContain(`"id":${BIG}`);
    expect(errorOf(answer).data?.code).toBe('GW_ROUTE_NOT_FOUND');
  });

  it('a per-principal rate limit: 429 that echoes the big-integer id as its exact text', async () => {
    const rateLimits = { perPrincipal: { perSecond: 0.01, burst: 1 }, perTool: undefined, maxKeys: 10 };
    const gwLimited = await startGateway({ ...buildConfig({ targets: { conformance: { command: process.execPath, args: [CONFORMANCE_FIXTURE, 'stdio'] } } }), rateLimits }, { logger: createTestLogger('silent', undefined) });
    try {
      const target = new URL('/mcp', gwLimited.url);
      const answers = [];
      for (let i = 0; i < 3; i += 1) answers.push(await post(target, bigRequest('tools/list', {}), standardHeaders('tools/list', {})));
      const refused = answers.find((a) => a.status === 429);
      expect(refused, answers.map((a) => a.status).join(',')).toBeDefined();
      expect(refused?.text).toContain(`"id":${BIG}`);
      expect(refused === undefined ? undefined : errorOf(refused).data?.code).toBe('GW_RATE_LIMITED');
    } finally {
      await gwLimited.close();
    }
  });
});
