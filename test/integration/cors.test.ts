/**
 * CORS for browser clients: off by default; a listed origin gets the headers, the exposed MCP
 * headers and preflight answers on every MCP path; any other origin is still refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildConfig, createTestLogger } from '../support/gateway.ts';
import { MCP_HEADERS, recorderServer } from '../support/recorder.ts';

const APP = 'https://app.example.com';
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'web', version: '1' } } });
let withCors: RunningGateway;
let without: RunningGateway;

async function start(corsOrigins: string[]): Promise<RunningGateway> {
  const config = { ...buildConfig({ targets: { rec: recorderServer() } }), corsOrigins };
  return startGateway(config, { logger: createTestLogger('silent', undefined) });
}

beforeAll(async () => {
  [withCors, without] = await Promise.all([start([APP]), start([])]);
});
afterAll(async () => {
  await Promise.all([withCors?.close(), without?.close()]);
});

const preflight = (base: string, path: string, origin: string) =>
  fetch(new URL(path, base), {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, mcp-session-id' },
  });

describe('CORS', () => {
  it('a listed origin: preflight 204 on every MCP path, with methods, headers and max-age', async () => {
    for (const path of ['/mcp', '/servers/rec/mcp', '/sse', '/messages']) {
      const res = await preflight(withCors.url, path, APP);
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(APP);
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('mcp-session-id');
    }
  });

  it('a listed origin: the answers (written by the session itself) carry the origin and expose Mcp-Session-Id', async () => {
    const res = await fetch(new URL('/mcp', withCors.url), { method: 'POST', headers: { ...MCP_HEADERS, origin: APP }, body: INIT });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    expect(res.headers.get('access-control-expose-headers')).toContain('Mcp-Session-Id');
    expect(res.headers.get('mcp-session-id')).toBeTruthy();
  });

  it('any other origin is refused (403), and without CORS configured nothing is added', async () => {
    expect((await preflight(withCors.url, '/mcp', 'https://evil.example')).status).toBe(403);
    const res = await fetch(new URL('/mcp', without.url), { method: 'POST', headers: { ...MCP_HEADERS, origin: APP }, body: INIT });
    expect(res.status).toBe(403);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});
