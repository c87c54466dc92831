/**
 * Remote server entries: `type: "http"` (also "streamable-http", or just a `url`) and `type: "sse"`,
 * their defaults, header checks, and that header values never reach the log.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.ts';
import type { GatewayConfig, RemoteTargetConfig } from '../../../src/config/types.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { problemsOf } from '../../support/config-problems.ts';

function parse(servers: Record<string, unknown>, env: Record<string, string> = {}): GatewayConfig {
  return parseConfig({ mcpServers: servers }, { env, baseDir: '/srv' });
}

function remote(server: Record<string, unknown>, env: Record<string, string> = {}): RemoteTargetConfig {
  const target = parse({ r: server }, env).targets.get('r');
  if (target === undefined || target.type === 'stdio') throw new Error('not a remote target');
  return target;
}

const problems = (server: Record<string, unknown>): string[] => problemsOf(() => parse({ r: server }));

describe('remote servers in the config', () => {
  it('fills every default of an http target', () => {
    expect(remote({ type: 'http', url: 'https://mcp.example.com/mcp' })).toEqual({
      type: 'http',
      name: 'r',
      url: 'https://mcp.example.com/mcp',
      headers: {},
      forwardAuthorization: false,
      principalHeaders: {},
      maxConnections: 0,
      timeouts: { requestMs: 300_000, resetOnProgress: true, maxTotalMs: 0, startupMs: 10_000 },
      restart: { onExit: 'end', maxRestarts: 3, initialBackoffMs: 250, maxBackoffMs: 10_000 },
      maxMessageBytes: 32 * 1024 * 1024,
      protocol: 'auto',
      circuitBreaker: { startFailures: 5, timeouts: 5, timeoutCallers: 2, windowMs: 60_000, cooldownMs: 10_000, maxCooldownMs: 300_000 },
    });
  });

  it('takes protocol auto, 2025 or 2026 on http targets only', () => {
    expect(remote({ type: 'http', url: 'http://h/mcp', protocol: '2026' }).protocol).toBe('2026');
    expect(remote({ url: 'http://h/mcp', protocol: '2025' }).protocol).toBe('2025');
    expect(() => remote({ type: 'http', url: 'http://h/mcp', protocol: '2027' })).toThrow(/"auto", "2025" or "2026"/);
    expect(() => remote({ type: 'sse', url: 'http://h/sse', protocol: '2025' })).toThrow(/protocol/);
  });

  it('reads "streamable-http" as http, and an entry with a url and no type as http (Cursor, VS Code)', () => {
    expect(remote({ type: 'streamable-http', url: 'http://localhost:3001/mcp' }).type).toBe('http');
    expect(remote({ url: 'http://localhost:3001/mcp' }).type).toBe('http');
    expect(remote({ type: 'sse', url: 'http://localhost:3001/sse' }).type).toBe('sse');
  });

  it('interpolates header values and lower-cases header names', () => {
    const target = remote({ type: 'http', url: 'https://x.example/mcp', headers: { Authorization: 'Bearer ${TOKEN}', 'X-Api-Key': '${KEY:-k}' } }, { TOKEN: 't0k' });
    expect(target.headers).toEqual({ authorization: 'Bearer t0k', 'x-api-key': 'k' });
  });

  it('takes the remote switches', () => {
    const target = remote({ type: 'sse', url: 'http://h/sse', forwardAuthorization: 'true', maxConnections: '8', onExit: 'restart', timeoutMs: 1000 });
    expect(target).toMatchObject({ forwardAuthorization: true, maxConnections: 8, restart: { onExit: 'restart' }, timeouts: { requestMs: 1000 } });
  });

  it('refuses bad URLs, credentials in the URL, and stdio keys on a remote entry', () => {
    expect(problems({ type: 'http', url: 'ftp://x/mcp' })).toEqual(['mcpServers.r.url: expected an absolute http:// or https:// URL without user:password@']);
    expect(problems({ type: 'http', url: '/relative' })[0]).toContain('mcpServers.r.url');
    expect(problems({ type: 'http', url: 'https://user:pw@x/mcp' })[0]).toContain('without user:password@');
    expect(problems({ type: 'http', url: 'https://x/mcp', command: 'node' })[0]).toContain('mcpServers.r.command');
    expect(problems({ type: 'http' })[0]).toContain('mcpServers.r.url');
    expect(problems({ type: 'websocket', url: 'https://x' })[0]).toContain('mcpServers.r');
  });

  it('refuses headers the transport owns, bad names, CR/LF in values and a name given twice', () => {
    const url = 'https://x/mcp';
    expect(problems({ type: 'http', url, headers: { 'Mcp-Session-Id': 'x' } })[0]).toContain('set by the gateway itself');
    expect(problems({ type: 'http', url, headers: { 'bad name': 'x' } })[0]).toContain('HTTP tokens');
    expect(problems({ type: 'http', url, headers: { 'x-a': 'one\r\nx-b: two' } })[0]).toContain('CR, LF or NUL');
    expect(problems({ type: 'http', url, headers: { 'X-A': '1', 'x-a': '2' } })[0]).toContain('given twice');
  });

  it('never writes configured header values to the log', () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: 'info',
      destination: new Writable({
        write(chunk: Buffer, _enc, cb) {
          lines.push(chunk.toString('utf8'));
          cb();
        },
      }),
    });
    const target = remote({ type: 'http', url: 'https://x/mcp', headers: { 'x-api-key': 'super-secret-value' } });
    logger.info({ target }, 'target');
    logger.child({ session: 's' }).info({ upstream: { target } }, 'nested');
    expect(lines).toHaveLength(2);
    expect(lines.join('')).not.toContain('super-secret-value');
    expect(lines.join('')).toContain('[redacted]');
  });
});
