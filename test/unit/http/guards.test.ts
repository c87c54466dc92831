import { describe, expect, it } from 'vitest';
import { accepts, createOriginPolicy, isLoopbackAddress } from '../../../src/http/guards.ts';
import { buildConfig } from '../../support/gateway.ts';

const base = buildConfig({ targets: { t: { command: 'x' } } });

describe('accepts', () => {
  it('matches exact, major wildcard and */* with parameters', () => {
    expect(accepts('application/json, text/event-stream', 'text/event-stream')).toBe(true);
    expect(accepts('text/*;q=0.5', 'text/event-stream')).toBe(true);
    expect(accepts('*/*', 'application/json')).toBe(true);
    expect(accepts('application/json', 'text/event-stream')).toBe(false);
    expect(accepts(undefined, 'application/json')).toBe(false);
  });
});

describe('origin policy', () => {
  const port = () => 8080;

  it('by default on loopback: loopback Host at our own port and loopback Origins only; no Origin is fine', () => {
    const policy = createOriginPolicy(base, port);
    expect(() => policy.check({ host: '127.0.0.1:8080' })).not.toThrow();
    expect(() => policy.check({ host: 'localhost:8080', origin: 'http://localhost:5173' })).not.toThrow();
    expect(() => policy.check({ host: '[::1]:8080' })).not.toThrow();
    expect(() => policy.check({ host: 'evil.example:8080' })).toThrow(/Host/);
    expect(() => policy.check({ host: '127.0.0.1:9000' })).toThrow(/Host/);
    expect(() => policy.check({ host: 'localhost' })).toThrow(/Host/);
    expect(() => policy.check({ host: 'localhost:8080', origin: 'https://evil.example' })).toThrow(/Origin/);
    expect(() => policy.check({ host: 'localhost:8080', origin: 'null' })).toThrow(/Origin/);
  });

  it('allow-lists replace the defaults; an entry without a port is that name bare or at our own port; "*" allows any Origin', () => {
    const policy = createOriginPolicy({ ...base, allowedOrigins: ['https://app.example'], allowedHosts: ['mcp.example', 'alt.example:443'] }, port);
    expect(() => policy.check({ host: 'mcp.example', origin: 'https://app.example' })).not.toThrow();
    expect(() => policy.check({ host: 'mcp.example:8080' })).not.toThrow();
    expect(() => policy.check({ host: 'alt.example:443' })).not.toThrow();
    expect(() => policy.check({ host: 'mcp.example:443' })).toThrow(/Host/);
    expect(() => policy.check({ host: 'alt.example' })).toThrow(/Host/);
    expect(() => policy.check({ host: 'alt.example:8080' })).toThrow(/Host/);
    expect(() => policy.check({ host: 'localhost:8080' })).toThrow(/Host/);
    expect(() => policy.check({ host: 'mcp.example', origin: 'http://localhost' })).toThrow(/Origin/);
    const any = createOriginPolicy({ ...base, allowedOrigins: ['*'] }, port);
    expect(() => any.check({ host: 'localhost:8080', origin: 'https://anything.example' })).not.toThrow();
  });

  it('does not check Host when listening on a public address without a list', () => {
    const policy = createOriginPolicy({ ...base, listen: { host: '0.0.0.0', port: 8080 } }, port);
    expect(() => policy.check({ host: 'mcp.example.com' })).not.toThrow();
  });

  it("names the gateway's own origin, never another port's or name's", () => {
    const policy = createOriginPolicy(base, port);
    expect(policy.originOf('127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(policy.originOf('LOCALHOST:08080')).toBe('http://localhost:8080');
    expect(policy.originOf('[0:0:0:0:0:0:0:1]:8080')).toBe('http://[::1]:8080');
    for (const host of ['127.0.0.1:9000', 'localhost', 'localhost:80', '127.0.0.1:8080.evil', '127.0.0.1:8080@evil', '127.0.0.1:', 'evil.example:8080', undefined]) {
      expect(policy.originOf(host), String(host)).toBeUndefined();
    }
    const listed = createOriginPolicy({ ...base, allowedHosts: ['mcp.example'] }, port);
    expect(listed.originOf('mcp.example')).toBe('http://mcp.example');
    expect(listed.originOf('mcp.example:9000')).toBeUndefined();
  });
});

describe('isLoopbackAddress', () => {
  it.each(['localhost', 'LOCALHOST', 'localhost.', 'app.localhost', '127.0.0.1', '127.255.0.9', '::1', '[::1]', '[0:0:0:0:0:0:0:1]', '[::ffff:127.0.0.1]'])(
    '%s is loopback',
    (host) => expect(isLoopbackAddress(host)).toBe(true),
  );
  it.each([
    '127.0.0.1.evil.com',
    '127.evil.com',
    '127.1',
    '0x7f.0.0.1',
    '2130706433',
    'localhost.evil.com',
    '.localhost',
    '128.0.0.1',
    '0.0.0.0',
    '::',
    '[::2]',
    '[::ffff:10.0.0.1]',
    '[fe80::1%lo]',
    '',
  ])('%s is not', (host) => expect(isLoopbackAddress(host)).toBe(false));
});
