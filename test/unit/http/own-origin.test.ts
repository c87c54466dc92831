import { describe, expect, it } from 'vitest';
import { createOwnOrigin, parseHost } from '../../../src/http/own-origin.ts';

describe('parseHost', () => {
  it('splits name and port, lower-casing the name; IPv6 stays in brackets', () => {
    expect(parseHost('LocalHost:8080')).toEqual({ name: 'localhost', port: 8080 });
    expect(parseHost('mcp.example.com')).toEqual({ name: 'mcp.example.com', port: undefined });
    expect(parseHost('[::1]:80')).toEqual({ name: '[::1]', port: 80 });
  });

  it.each(['', ':8080', '127.0.0.1:', '127.0.0.1:80a', '127.0.0.1:99999', '[::1', '[::1]x', '[::1]:80:1', 'a b:80', 'evil@127.0.0.1:80', 'a/b:80'])('refuses %j', (host) => {
    expect(parseHost(host)).toBeUndefined();
  });
});

describe('createOwnOrigin', () => {
  const port = () => 8080;

  it('on loopback: a loopback name at the port the gateway listens on, nothing else', () => {
    const own = createOwnOrigin(undefined, '127.0.0.1', port);
    expect(own.checked).toBe(true);
    expect(own.of('127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(own.of('localhost:8080')).toBe('http://localhost:8080');
    for (const host of ['127.0.0.1:9000', 'localhost', '127.0.0.1', 'example.com:8080', undefined]) expect(own.of(host), String(host)).toBeUndefined();
    // The answer for the last Host is remembered; a different one is judged afresh.
    expect(own.of('127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(own.of('127.0.0.1:8081')).toBeUndefined();
  });

  it('follows the port the gateway really listens on, read when asked', () => {
    let listening = 0;
    const own = createOwnOrigin(undefined, 'localhost', () => listening);
    listening = 41234;
    expect(own.of('localhost:41234')).toBe('http://localhost:41234');
  });

  it('allowedHosts: a port-less entry is the bare name or our own port; one with a port is exactly that', () => {
    const own = createOwnOrigin(['mcp.example.com', 'edge.example.com:443'], '0.0.0.0', port);
    expect(own.of('mcp.example.com')).toBe('http://mcp.example.com');
    expect(own.of('MCP.example.com:8080')).toBe('http://mcp.example.com:8080');
    expect(own.of('edge.example.com:443')).toBe('http://edge.example.com:443');
    for (const host of ['mcp.example.com:9000', 'edge.example.com', 'edge.example.com:8080', 'other.example.com:8080']) expect(own.of(host), host).toBeUndefined();
  });

  it('beyond loopback without a list: unchecked, every Host stands for itself', () => {
    const own = createOwnOrigin(undefined, '0.0.0.0', port);
    expect(own.checked).toBe(false);
    expect(own.of('anything.example:9000')).toBe('http://anything.example:9000');
  });
});
