import { describe, expect, it } from 'vitest';
import { checkModernRequest, classifyPost, decodeHeaderValue, META, withoutEnvelope } from '../../../src/jsonrpc/era.ts';
import type { JsonRpcRequest } from '../../../src/jsonrpc/types.ts';

const envelope = { [META.protocolVersion]: '2026-07-28', [META.clientCapabilities]: {} };
const request = (method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope } });
const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' };

describe('classifyPost', () => {
  it('keeps 2025 messages, batches and responses on the 2025 path', () => {
    expect(classifyPost({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, {})).toEqual({ era: '2025' });
    expect(classifyPost({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, {})).toEqual({ era: '2025' });
    expect(classifyPost([{ jsonrpc: '2.0', id: 1, method: 'ping' }], {})).toEqual({ era: '2025' });
    expect(classifyPost({ jsonrpc: '2.0', id: 1, result: {} }, headers)).toEqual({ era: '2025' });
    expect(classifyPost({ jsonrpc: '2.0', id: 1, method: 'x', params: { _meta: { ...envelope, [META.protocolVersion]: '2025-11-25' } } }, {})).toEqual({ era: '2025' });
  });

  it('a request with the envelope is 2026, with its meta and version', () => {
    const out = classifyPost(request('tools/list'), headers);
    expect(out).toMatchObject({ era: '2026', version: '2026-07-28', meta: envelope });
  });

  it('walks the ladder in the spec order', () => {
    expect(classifyPost({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, headers)).toMatchObject({ reject: 'GW_INVALID_ENVELOPE' });
    expect(classifyPost({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { [META.protocolVersion]: '2026-07-28' } } }, headers)).toMatchObject({ reject: 'GW_INVALID_ENVELOPE' });
    expect(classifyPost(request('tools/list'), { ...headers, 'mcp-protocol-version': '2027-01-01' })).toMatchObject({ reject: 'GW_HEADER_MISMATCH' });
    expect(classifyPost(request('tools/list'), { ...headers, 'mcp-method': 'prompts/list' })).toMatchObject({ reject: 'GW_HEADER_MISMATCH' });
    expect(classifyPost({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, headers)).toMatchObject({ reject: 'GW_HEADER_MISMATCH' });
    expect(classifyPost([request('tools/list')], {})).toMatchObject({ reject: 'GW_INVALID_REQUEST' });
  });

  it('notifications: 2026 with a claim or a 2026 header, else 2025', () => {
    expect(classifyPost({ jsonrpc: '2.0', method: 'notifications/x' }, {})).toEqual({ era: '2025' });
    expect(classifyPost({ jsonrpc: '2.0', method: 'notifications/x' }, headers)).toMatchObject({ era: '2026' });
    expect(classifyPost({ jsonrpc: '2.0', method: 'n', params: { _meta: { [META.protocolVersion]: 7 } } }, {})).toMatchObject({ reject: 'GW_INVALID_ENVELOPE' });
  });
});

describe('checkModernRequest', () => {
  const call = request('tools/call', { name: 'echo' }) as unknown as JsonRpcRequest;
  const callHeaders = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' };
  it('passes a request whose headers agree', () => {
    expect(checkModernRequest(call, '2026-07-28', callHeaders)).toBeUndefined();
    expect(checkModernRequest(call, '2026-07-28', { ...callHeaders, 'mcp-name': `=?base64?${Buffer.from('echo').toString('base64')}?=` })).toBeUndefined();
  });
  it('refuses missing or disagreeing headers, unknown versions and removed methods', () => {
    expect(checkModernRequest(call, '2026-07-28', { ...callHeaders, 'mcp-protocol-version': undefined })).toMatchObject({ reject: 'GW_HEADER_MISMATCH' });
    expect(checkModernRequest(call, '2026-07-28', { ...callHeaders, 'mcp-method': undefined })).toMatchObject({ reject: 'GW_HEADER_MISMATCH' });
    expect(checkModernRequest(call, '2026-07-28', { ...callHeaders, 'mcp-name': undefined })).toMatchObject({ reject: 'GW_HEADER_MISMATCH' });
    expect(checkModernRequest(call, '2026-07-28', { ...callHeaders, 'mcp-name': 'other' })).toMatchObject({ reject: 'GW_HEADER_MISMATCH' });
    expect(checkModernRequest(call, 'v9', callHeaders)).toMatchObject({ reject: 'GW_PROTOCOL_VERSION_NOT_SUPPORTED', data: { supported: ['2026-07-28'], requested: 'v9' } });
    const ping = request('ping') as unknown as JsonRpcRequest;
    expect(checkModernRequest(ping, '2026-07-28', { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'ping' })).toMatchObject({ reject: 'GW_METHOD_NOT_FOUND' });
  });
});

describe('checkModernRequest: Mcp-Param-* headers', () => {
  const args = { region: 'eu-west', nested: { verbose: true, count: 3 }, text: 'héllo' };
  const call = request('tools/call', { name: 'region', arguments: args }) as unknown as JsonRpcRequest;
  const base = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'region' };
  const b64 = (text: string) => `=?base64?${Buffer.from(text).toString('base64')}?=`;
  it('passes headers that mirror an argument: plain, base64, nested, boolean, number, surrounding whitespace', () => {
    const ok = { 'mcp-param-region': ' eu-west ', 'mcp-param-where': b64('eu-west'), 'mcp-param-verbose': 'true', 'mcp-param-count': '3', 'mcp-param-text': b64('héllo') };
    expect(checkModernRequest(call, '2026-07-28', { ...base, ...ok })).toBeUndefined();
  });
  it.each([
    ['a different value', { 'mcp-param-region': 'us-east' }],
    ['no such argument', { 'mcp-param-zone': 'a' }],
    ['characters a header may not carry', { 'mcp-param-text': 'hÃ©llo' }],
    ['a control character', { 'mcp-param-region': 'eu\x01west' }],
    ['bad base64 padding', { 'mcp-param-region': '=?base64?ZXUtd2VzdA?=' }],
    ['base64 of non-UTF-8', { 'mcp-param-region': `=?base64?${Buffer.from([0xff]).toString('base64')}?=` }],
    ['the raw base64 of the value (literal, so different)', { 'mcp-param-region': Buffer.from('eu-west').toString('base64') }],
  ])('refuses %s with -32020', (_what, extra) => {
    expect(checkModernRequest(call, '2026-07-28', { ...base, ...extra })).toMatchObject({ reject: 'GW_HEADER_MISMATCH' });
  });
  it('refuses one on a method without arguments, before the version rung', () => {
    const list = request('tools/list') as unknown as JsonRpcRequest;
    expect(checkModernRequest(list, 'v9', { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list', 'mcp-param-x': 'a' })).toMatchObject({ reject: 'GW_HEADER_MISMATCH' });
  });
});

describe('decodeHeaderValue and withoutEnvelope', () => {
  it('decodes the base64 form and refuses a broken one', () => {
    expect(decodeHeaderValue('plain')).toBe('plain');
    expect(decodeHeaderValue(`=?base64?${Buffer.from('héllo/wörld').toString('base64')}?=`)).toBe('héllo/wörld');
    expect(decodeHeaderValue('=?base64?!!!?=')).toBeUndefined();
    expect(decodeHeaderValue(`=?base64?${Buffer.from([0xff, 0xfe]).toString('base64')}?=`)).toBeUndefined();
  });
  it('strips only the reserved keys, keeping progressToken and others', () => {
    const params = { name: 'x', _meta: { ...envelope, progressToken: 7, 'vendor/key': 1 } };
    expect(withoutEnvelope(params)).toEqual({ name: 'x', _meta: { progressToken: 7, 'vendor/key': 1 } });
    expect(withoutEnvelope({ _meta: envelope })).toEqual({});
    expect(params._meta[META.protocolVersion]).toBe('2026-07-28');
  });
  it('drops the keys asked for, and keeps a peer\'s __proto__ key as data', () => {
    const params = JSON.parse('{"name":"x","requestState":"s","inputResponses":{},"__proto__":{"polluted":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}');
    const copy = withoutEnvelope(params, new Set(['requestState', 'inputResponses'])) as Record<string, unknown>;
    expect(Object.keys(copy)).toEqual(['name', '__proto__']);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe('{"name":"x","__proto__":{"polluted":1}}');
    expect(withoutEnvelope({ name: 'y' }, new Set(['requestState']))).toEqual({ name: 'y' });
  });
});
