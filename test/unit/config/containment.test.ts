import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.ts';
import type { StdioTargetConfig } from '../../../src/config/types.ts';

const parse = (server: Record<string, unknown>) => parseConfig({ mcpServers: { s: { command: 'node', ...server } } }, { env: {}, baseDir: '/srv/switchboard' });
const target = (server: Record<string, unknown>) => parse(server).targets.get('s') as StdioTargetConfig;

describe('sandbox and limits in the config', () => {
  it('are absent unless configured (nothing changes for existing entries)', () => {
    const t = target({});
    expect(t.sandbox).toBeUndefined();
    expect(t.limits).toBeUndefined();
  });

  it('the sandbox defaults to no writable path, the whole system read-only, no network', () => {
    expect(target({ sandbox: {} }).sandbox).toEqual({ writable: [], readable: undefined, network: false });
    expect(target({ sandbox: { writable: ['/srv/data'], readable: ['/usr', '/etc/ssl'], network: true } }).sandbox).toEqual({
      writable: ['/srv/data'], readable: ['/usr', '/etc/ssl'], network: true,
    });
  });

  it('takes limits as positive integers (strings from ${VAR} too)', () => {
    expect(target({ limits: { memoryMiB: '256', processes: 64, cpuSeconds: 600, openFiles: 1024 } }).limits).toEqual({ memoryMiB: 256, processes: 64, cpuSeconds: 600, openFiles: 1024 });
    expect(() => parse({ limits: { memoryMiB: 0 } })).toThrow(/mcpServers\.s\.limits\.memoryMiB/);
    expect(() => parse({ limits: { swap: 1 } })).toThrow(/mcpServers\.s\.limits/);
  });

  it('refuses relative, dotted and unknown sandbox paths and keys', () => {
    expect(() => parse({ sandbox: { writable: ['data'] } })).toThrow(/sandbox\.writable\[0\].*absolute path/);
    expect(() => parse({ sandbox: { readable: ['/srv/../etc'] } })).toThrow(/sandbox\.readable\[0\]/);
    expect(() => parse({ sandbox: { writeable: ['/srv'] } })).toThrow(/mcpServers\.s\.sandbox/);
    expect(() => parse({ sandbox: { env: 'all' } })).toThrow(/sandbox\.env/);
  });

  it('refuses inheritEnv: true with sandbox.env "minimal" (the default), allows it with "inherit"', () => {
    expect(() => parse({ inheritEnv: true, sandbox: {} })).toThrow(/inheritEnv.*sandbox\.env "minimal"/);
    expect(target({ inheritEnv: true, sandbox: { env: 'inherit' } }).inheritEnv).toBe('all');
    expect(target({ inheritEnv: ['API_KEY'], sandbox: {} }).inheritEnv).toContain('API_KEY');
  });

  it('is not accepted on remote servers', () => {
    expect(() => parseConfig({ mcpServers: { r: { url: 'http://x/mcp', sandbox: {} } } }, { env: {} })).toThrow(/mcpServers\.r/);
  });
});
