import { describe, expect, it } from 'vitest';
import { toHttpError, toNetworkError } from '../../../src/transport/http-errors.ts';
import { createTestLogger } from '../../support/gateway.ts';

const withCode = (code: string) => Object.assign(new Error(code), { code });

describe('remote failures as gateway errors', () => {
  it('names connect failures without an HTTP exchange as GW_UPSTREAM_UNREACHABLE', () => {
    expect(toNetworkError('t', withCode('ECONNREFUSED')).toJsonRpc().data).toEqual({ code: 'GW_UPSTREAM_UNREACHABLE', target: 't', reason: 'connection refused' });
    expect(toNetworkError('t', withCode('ENOTFOUND')).details.reason).toBe('DNS lookup failed');
    expect(toNetworkError('t', withCode('UND_ERR_CONNECT_TIMEOUT')).details.reason).toBe('connect timeout');
    expect(toNetworkError('t', withCode('DEPTH_ZERO_SELF_SIGNED_CERT')).details).toMatchObject({ reason: 'TLS handshake failed', tlsError: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    expect(toNetworkError('t', withCode('ERR_SSL_WRONG_VERSION_NUMBER')).details.reason).toBe('TLS handshake failed');
  });

  it('looks into an AggregateError (several addresses tried) and a cause', () => {
    expect(toNetworkError('t', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')])).code).toBe('GW_UPSTREAM_UNREACHABLE');
    expect(toNetworkError('t', new Error('wrapped', { cause: withCode('ENOTFOUND') })).details.reason).toBe('DNS lookup failed');
  });

  it('treats a broken connection mid-exchange as GW_UPSTREAM_CLOSED', () => {
    expect(toNetworkError('t', withCode('UND_ERR_SOCKET')).toJsonRpc().data).toEqual({ code: 'GW_UPSTREAM_CLOSED', target: 't', reason: 'UND_ERR_SOCKET' });
  });

  it('carries the HTTP status and a correlation id; the upstream\'s own message goes to the log only, briefly', () => {
    const lines: string[] = [];
    const logger = createTestLogger('warn', lines);
    const error = toHttpError('t', 401, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'x'.repeat(500) } }), logger);
    const data = error.toJsonRpc().data as Record<string, unknown>;
    expect(data).toEqual({ code: 'GW_UPSTREAM_HTTP_ERROR', target: 't', status: 401, correlationId: expect.any(String) });
    expect(error.message).not.toContain('xxx');
    expect(error.internal).toEqual({ upstreamMessage: 'x'.repeat(200) });
    const logged = JSON.parse(lines.at(-1) ?? '{}') as Record<string, unknown>;
    expect(logged).toMatchObject({ correlationId: data.correlationId, upstreamMessage: 'x'.repeat(200), status: 401 });
    expect(toHttpError('t', 502, '<html>bad gateway</html>', logger).toJsonRpc().data).toEqual({
      code: 'GW_UPSTREAM_HTTP_ERROR',
      target: 't',
      status: 502,
      correlationId: expect.any(String),
    });
  });
});
