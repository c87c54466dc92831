/**
 * The token-exchange request and how each kind of failure is reported, against a small token
 * endpoint over real HTTP that answers as each test tells it to (and records what it was sent).
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors/gateway-error.ts';
import { exchangeToken } from '../../../src/transport/token-exchange.ts';

let answer: { status: number; body: string } = { status: 200, body: '{}' };
let seen: { authorization: string | undefined; form: URLSearchParams } | undefined;
let endpoint: string;
const server = createServer((req: IncomingMessage, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    seen = { authorization: req.headers.authorization, form: new URLSearchParams(body) };
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const request = (over: Record<string, string> = {}) =>
  exchangeToken({ target: 'up', tokenEndpoint: endpoint, clientId: 'gw id', clientSecret: 's3cret:x', subjectToken: 'subject.jwt.value', resource: 'https://up.example/mcp', audience: undefined, scope: 'a b', ...over });

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(GatewayError);
  return err as GatewayError;
}

describe('token exchange request (RFC 8693)', () => {
  it('posts the grant with client_secret_basic and returns the token and its lifetime', async () => {
    answer = { status: 200, body: JSON.stringify({ access_token: 'new.token', token_type: 'Bearer', expires_in: 120, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' }) };
    expect(await request()).toEqual({ accessToken: 'new.token', expiresInSec: 120 });
    expect(seen!.authorization).toBe(`Basic ${Buffer.from('gw%20id:s3cret%3Ax').toString('base64')}`);
    expect(Object.fromEntries(seen!.form)).toEqual({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: 'subject.jwt.value',
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: 'https://up.example/mcp',
      scope: 'a b',
    });
  });

  it('an error answer is "refused" with its status; the server text goes to the log side only', async () => {
    answer = { status: 400, body: JSON.stringify({ error: 'invalid_grant', error_description: 'subject_token subject.jwt.value expired' }) };
    const err = await failure(request());
    expect(err.code).toBe('GW_TOKEN_EXCHANGE_FAILED');
    expect(err.details).toMatchObject({ target: 'up', reason: 'refused', status: 400, correlationId: expect.any(String) });
    expect(JSON.stringify(err.toJsonRpc())).not.toContain('subject.jwt.value');
    expect(JSON.stringify(err.toJsonRpc())).not.toContain('s3cret');
    expect(err.internal).toEqual({ oauthError: 'invalid_grant' });
  });

  it.each([
    ['no access_token', { token_type: 'Bearer' }],
    ['a token with a line break', { access_token: 'a\r\nX-Injected: 1', token_type: 'Bearer' }],
    ['a token of another type', { access_token: 'x', token_type: 'DPoP' }],
  ])('%s is a "bad response"', async (_label, body) => {
    answer = { status: 200, body: JSON.stringify(body) };
    expect((await failure(request())).details.reason).toBe('bad response');
  });

  it('a body that is not JSON is a "bad response"; an endpoint that cannot be reached is "unreachable"', async () => {
    answer = { status: 200, body: '<html>' };
    expect((await failure(request())).details.reason).toBe('bad response');
    expect((await failure(request({ tokenEndpoint: 'http://127.0.0.1:1/token' }))).details.reason).toBe('unreachable');
  });
});
