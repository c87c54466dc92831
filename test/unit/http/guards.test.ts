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
  it('by default on loopback: loopback Host and Origin only; no Origin is fine', () => {
    const policy = createOriginPolicy(base);
    expect(() => policy.check({ host: '127.0.0.1:8080' })).not.toThrow();
    expect(() => policy.check({ host: 'localhost:8080', origin: 'http://localhost:5173' })).not.toThrow();
    expect(() => policy.check({ host: '[::1]:8080' })).not.toThrow();
    expect(() => policy.check({ host: 'evil.example' })).toThrow(/Host/);
    expect(() => policy.check({ host: 'localhost', origin: 'https://evil.example' })).toThrow(/Origin/);
    expect(() => policy.check({ host: 'localhost', origin: 'null' })).toThrow(/Origin/);
  });

  it('allow-lists replace the defaults; "*" allows any Origin', () => {
    const policy = createOriginPolicy({ ...base, allowedOrigins: ['https://app.example'], allowedHosts: ['mcp.example'] });
    expect(() => policy.check({ host: 'mcp.example:443', origin: 'https://app.example' })).not.toThrow();
    expect(() => policy.check({ host: 'localhost' })).toThrow(/Host/);
    expect(() => policy.check({ host: 'mcp.example', origin: 'http://localhost' })).toThrow(/Origin/);
    const any = createOriginPolicy({ ...base, allowedOrigins: ['*'] });
    expect(() => any.check({ host: 'localhost', origin: 'https://anything.example' })).not.toThrow();
  });

  it('does not check Host when listening on a public address without a list', () => {
    const policy = createOriginPolicy({ ...base, listen: { host: '0.0.0.0', port: 8080 } });
    expect(() => policy.check({ host: 'mcp.example.com' })).not.toThrow();
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
