/**
 * Acceptance: the whole MCP authorization flow against a real authorization server (oidc-provider
 * on 127.0.0.1, test/support/oidc-provider.ts) with the MCP SDK v1 client and its OAuth client
 * provider. From the gateway's 401 the SDK discovers the protected-resource metadata (RFC 9728),
 * then the authorization server's metadata, registers itself (RFC 7591), runs the authorization
 * code grant with PKCE for the gateway's exact resource URL (RFC 8707), login and consent
 * approved by the server's test interaction handler, and gets a JWT access token; then lists and
 * calls tools of a real stdio child through the gateway.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig, colliderServer, textOf } from '../support/aggregate.ts';
import { createTestLogger } from '../support/gateway.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';
import { jwtAuth } from '../support/auth-server.ts';

const REDIRECT = 'http://127.0.0.1:1/callback';

let as: AuthorizationServer;
let gw: RunningGateway;
const logLines: string[] = [];

/** The SDK's OAuth client state for one user, in memory; the "browser" is the server's user agent. */
function oauthClient(): OAuthClientProvider & { readonly pending: Promise<string> | undefined; readonly saved: OAuthTokens | undefined } {
  let info: OAuthClientInformationMixed | undefined;
  let saved: OAuthTokens | undefined;
  let verifier = '';
  let pending: Promise<string> | undefined;
  const metadata: OAuthClientMetadata = { client_name: 'switchboard-test', redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  return {
    get redirectUrl() {
      return REDIRECT;
    },
    get clientMetadata() {
      return metadata;
    },
    get pending() {
      return pending;
    },
    get saved() {
      return saved;
    },
    clientInformation: () => info,
    saveClientInformation: (value) => void (info = value),
    tokens: () => saved,
    saveTokens: (value) => void (saved = value),
    redirectToAuthorization: (url) => void (pending = as.followAuthorization(url)),
    saveCodeVerifier: (value) => void (verifier = value),
    codeVerifier: () => verifier,
  };
}

beforeAll(async () => {
  as = await startAuthorizationServer();
  const base = buildAggregateConfig({ targets: { col: colliderServer() } });
  const auth: AuthConfig = jwtAuth(as, ['mcp']);
  gw = await startGateway({ ...base, auth }, { logger: createTestLogger('debug', logLines) });
});

afterAll(async () => {
  await gw?.close();
  await as?.close();
});

describe('OAuth against a real authorization server', () => {
  it('the SDK client goes from 401 through discovery, registration and PKCE to calling tools', async () => {
    const url = new URL('/servers/col/mcp', gw.url);
    // The gateway's RFC 9728 document names the provider as the authorization server for this URL.
    const metadata = await (await fetch(new URL('/.well-known/oauth-protected-resource/servers/col/mcp', gw.url))).json();
    expect(metadata).toMatchObject({ resource: url.href, authorization_servers: [as.issuer] });
    const provider = oauthClient();
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(new Client({ name: 'oauth-test', version: '1' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.pending, 'the SDK sent the user to the authorization server').toBeDefined();
    const code = await provider.pending!;
    await first.finishAuth(code);

    const token = provider.saved!.access_token;
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ iss: as.issuer, aud: url.href, sub: 'alice', scope: 'mcp' });

    const client = new Client({ name: 'oauth-test', version: '1' });
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'through oauth' } }))).toContain('through oauth');
    await transport.terminateSession();
    await client.close();
    expect(logLines.some((line) => line.includes(token)), 'the token never reaches the log').toBe(false);
  });

  it('a token of the same server for another resource is refused (audience)', async () => {
    const elsewhere = await as.issue('svc-a', 'https://elsewhere.example/mcp');
    const here = await as.issue('svc-a', new URL('/servers/col/mcp', gw.url).href);
    const post = (token: string) =>
      fetch(new URL('/servers/col/mcp', gw.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
    const refused = await post(elsewhere);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('resource_metadata=');
    expect(await refused.json()).toMatchObject({ error: { data: { code: 'GW_UNAUTHORIZED' } } });
    // The same kind of token for the right resource passes authentication (then wants a session).
    expect((await post(here)).status).toBe(400);
  });

  it("picks up a rotated JWKS: a token signed with the provider's new key works", async () => {
    const path = new URL('/servers/col/mcp', gw.url).href;
    const before = await as.issue('svc-b', path);
    const kid = await as.rotate();
    const after = await as.issue('svc-b', path);
    expect(JSON.parse(Buffer.from(after.split('.')[0]!, 'base64url').toString())).toMatchObject({ kid });
    // An unknown kid refetches the JWKS at most once per jwksRefetchSec (1 s here).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    for (const token of [before, after]) {
      const client = new Client({ name: 'rotation', version: '1' });
      const transport = new StreamableHTTPClientTransport(new URL(path), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
      await client.connect(transport);
      expect(textOf(await client.callTool({ name: 'whoami', arguments: {} }))).toBeTruthy();
      await transport.terminateSession();
      await client.close();
    }
  });
});
