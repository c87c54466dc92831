import { describe, expect, it } from 'vitest';
import { headerValueOf, mcpNameOf, withoutReservedMeta } from '../../../src/jsonrpc/modern.ts';

const b64 = (s: string) => `=?base64?${Buffer.from(s, 'utf8').toString('base64')}?=`;

describe('2026-07-28 header values', () => {
  it('keeps plain printable ASCII as it is', () => {
    expect(headerValueOf('get_weather')).toBe('get_weather');
    expect(headerValueOf('file:///tmp/a b.txt')).toBe('file:///tmp/a b.txt');
  });

  it('uses the =?base64?...?= form for non-ASCII, control characters, edge spaces, empty and sentinel-looking values', () => {
    for (const value of ['grüße', '工具', 'a\nb', ' lead', 'trail ', '', '=?base64?abc?=']) expect(headerValueOf(value)).toBe(b64(value));
  });

  it('names the tool, prompt or resource of the methods that carry Mcp-Name, and nothing else', () => {
    expect(mcpNameOf({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't' } })).toBe('t');
    expect(mcpNameOf({ jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'p' } })).toBe('p');
    expect(mcpNameOf({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'u://x' } })).toBe('u://x');
    expect(mcpNameOf({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { name: 't' } })).toBeUndefined();
    expect(mcpNameOf({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 3 } })).toBeUndefined();
  });

  it('drops the reserved _meta keys a previous hop set, and keeps the rest', () => {
    const meta = { progressToken: 5, 'io.modelcontextprotocol/protocolVersion': 'x', 'io.modelcontextprotocol/clientInfo': {}, 'com.example/k': 1 };
    expect(withoutReservedMeta(meta)).toEqual({ progressToken: 5, 'com.example/k': 1 });
    expect(withoutReservedMeta(undefined)).toEqual({});
  });
});
