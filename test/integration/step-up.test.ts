/**
 * Acceptance of per-tool step-up (SEP-2350, the 2026-07-28 authorization rule) with the real
 * authorization server the auth tests use (oidc-provider) and the SDK v2 and v1 clients: a call to
 * a tool that needs `files:write` with a token holding only `mcp` gets 403 insufficient_scope
 * naming every scope the call needs (`mcp files:write`); the SDK v2 re-authorizes with the union
 * of scopes, the SDK v1 with exactly the challenged ones (so the base scope must be named), and
 * the call succeeds on the same session. With `stepUp: jsonrpc` the same
 * call gets the documented JSON-RPC error at HTTP 200. What the refused calls never did is read
 * from what the recorder children received.
 */
import { Client, ClientCredentialsProvider, ProtocolError, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/client';
import type { OAuthClientProvider as OAuthClientProviderV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as StreamableHTTPV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';
import { rpc, textOf } from '../support/recorder.ts';
import { callsMarked, SCOPES, startStepUpGateway, type StepUpGateway } from '../support/step-up.ts';

let as: AuthorizationServer;
let http: StepUpGateway;
let jsonrpc: StepUpGateway;
const clients: Client[] = [];

beforeAll(async () => {
  as = await startAuthorizationServer({ scopes: SCOPES });
  http = await startStepUpGateway(as, 'http');
  jsonrpc = await startStepUpGateway(as, 'jsonrpc');
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await http?.close();
  await jsonrpc?.close();
  await as?.close();
});

interface Seen {
  readonly method: string;
  readonly status: number;
  readonly challenge: string | null;
}

/** The SDK v2 client for `svc-a` with the client-credentials provider; every gateway answer's status recorded. */
async function sdkClient(base: string, path: string, era: '2025-11-25' | '2026-07-28') {
  const seen: Seen[] = [];
  const recording: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const url = input instanceof Request ? input.url : String(input);
    if (url.startsWith(base)) seen.push({ method: init?.method ?? 'GET', status: res.status, challenge: res.headers.get('www-authenticate') });
    return res;
  };
  const { clientSecret } = as.client('svc-a');
  const provider = new ClientCredentialsProvider({ clientId: 'svc-a', clientSecret, expectedIssuer: as.issuer });
  const transport = new StreamableHTTPClientTransport(new URL(path, base), { authProvider: provider, fetch: recording });
  const options = era === '2026-07-28' ? { versionNegotiation: { mode: { pin: era } } } : {};
  const client = new Client({ name: 'step-up', version: '1.0.0' }, options);
  await client.connect(transport);
  clients.push(client);
  return { client, transport, provider, seen };
}

const scopesOf = (scope: string | undefined) => (scope ?? '').split(' ').filter(Boolean).sort();

const REDIRECT = 'http://127.0.0.1:1/callback';

/**
 * A user's OAuth client (authorization code + PKCE, consent by the server's test handler), in
 * memory, registered ahead (RFC 7591) with every scope it may ask for: the SDK registers a client
 * dynamically with the scope of its first request only, and an authorization server that holds a
 * client to its registered scopes (oidc-provider does) then refuses the union with invalid_scope.
 */
async function userClient() {
  const discovered = (await (await fetch(`${as.issuer}/.well-known/openid-configuration`)).json()) as { registration_endpoint: string };
  const clientMetadata = { client_name: 'step-up-user', redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none', scope: SCOPES.join(' ') };
  const registered = await fetch(discovered.registration_endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(clientMetadata) });
  let info = (await registered.json()) as Parameters<OAuthClientProvider['saveClientInformation'] & object>[0] | undefined;
  let saved: Parameters<OAuthClientProvider['saveTokens']>[0] | undefined;
  let discovery: unknown;
  let verifier = '';
  const authorizations: URL[] = [];
  let pending: Promise<string> | undefined;
  const provider: OAuthClientProvider = {
    redirectUrl: REDIRECT,
    clientMetadata,
    clientInformation: () => info,
    saveClientInformation: (value) => void (info = value),
    tokens: () => saved,
    saveTokens: (value) => void (saved = value),
    redirectToAuthorization: (url) => {
      authorizations.push(new URL(url));
      pending = as.followAuthorization(url);
    },
    saveCodeVerifier: (value) => void (verifier = value),
    codeVerifier: () => verifier,
    saveDiscoveryState: (state) => void (discovery = state),
    discoveryState: () => discovery as never,
  };
  return { provider, authorizations, code: () => pending as Promise<string>, scope: () => saved?.scope };
}

describe('step-up over HTTP (the default)', () => {
  it('the SDK v2 client gets 403, re-authorizes with the union of scopes and the call succeeds on the same session', async () => {
    const { client, transport, provider, seen } = await sdkClient(http.gw.url, '/servers/files/mcp', '2025-11-25');
    expect(scopesOf(provider.tokens()?.scope), 'the first token holds what every request needs').toEqual(['mcp']);
    const session = transport.sessionId;
    expect(session).toBeTruthy();
    // The tool stays listed: only calling it needs more.
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');

    const result = await client.callTool({ name: 'echo', arguments: { text: 'stepped-up-2025' } });
    expect(textOf(result)).toBe('stepped-up-2025');
    const refused = seen.filter((s) => s.status === 403);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.challenge).toBe(
      `Bearer error="insufficient_scope", resource_metadata="${http.gw.url}/.well-known/oauth-protected-resource/servers/files/mcp", scope="mcp files:write"`,
    );
    expect(scopesOf(provider.tokens()?.scope), 'the new token holds the union').toEqual(['files:write', 'mcp']);
    expect(transport.sessionId, 'the same session carries on').toBe(session);
    // The refused attempt never reached the upstream; the retry did, once.
    expect(callsMarked(http.received(), 'stepped-up-2025')).toHaveLength(1);
  });

  it('the SDK v1 client asks for exactly the challenged scopes: the challenge names the base scope too, so the user consents once and the call succeeds', async () => {
    const url = new URL('/servers/files/mcp', http.gw.url);
    const user = await userClient();
    // The same in-memory user agent: the two SDKs' provider interfaces agree on what it implements.
    const provider = user.provider as unknown as OAuthClientProviderV1;
    const first = new StreamableHTTPV1(url, { authProvider: provider });
    await expect(new ClientV1({ name: 'step-up-v1', version: '1' }).connect(first)).rejects.toThrow(/unauthorized/i);
    await first.finishAuth(await user.code());
    expect(scopesOf(user.scope())).toEqual(['mcp']);

    const transport = new StreamableHTTPV1(url, { authProvider: provider });
    const client = new ClientV1({ name: 'step-up-v1', version: '1' });
    await client.connect(transport);
    clients.push(client as unknown as Client);
    const session = transport.sessionId;
    await expect(client.callTool({ name: 'echo', arguments: { text: 'v1-stepped-up' } })).rejects.toThrow(/unauthorized/i);
    // The SDK v1 asks for what the challenge names and nothing else: the base scope must be in it.
    expect(scopesOf(user.authorizations.at(-1)?.searchParams.get('scope') ?? '')).toEqual(['files:write', 'mcp']);
    await transport.finishAuth(await user.code());
    expect(scopesOf(user.scope())).toEqual(['files:write', 'mcp']);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'v1-stepped-up' } }))).toBe('v1-stepped-up');
    expect(transport.sessionId).toBe(session);
    expect(callsMarked(http.received(), 'v1-stepped-up')).toHaveLength(1);
  });

  it('a user re-consents: the SDK v2 client sends the user to authorize the union, then the call succeeds on the same session', async () => {
    const url = new URL('/servers/files/mcp', http.gw.url);
    const user = await userClient();
    const first = new StreamableHTTPClientTransport(url, { authProvider: user.provider });
    await expect(new Client({ name: 'step-up-user', version: '1' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    await first.finishAuth(await user.code(), as.issuer);
    expect(scopesOf(user.scope())).toEqual(['mcp']);

    const transport = new StreamableHTTPClientTransport(url, { authProvider: user.provider });
    const client = new Client({ name: 'step-up-user', version: '1' });
    await client.connect(transport);
    clients.push(client);
    const session = transport.sessionId;
    // The 403 makes the SDK ask for the union; the user agent has to go through consent again.
    await expect(client.callTool({ name: 'echo', arguments: { text: 'user-stepped-up' } })).rejects.toBeInstanceOf(UnauthorizedError);
    expect(scopesOf(user.authorizations.at(-1)?.searchParams.get('scope') ?? '')).toEqual(['files:write', 'mcp']);
    await transport.finishAuth(await user.code(), as.issuer);
    expect(scopesOf(user.scope())).toEqual(['files:write', 'mcp']);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'user-stepped-up' } }))).toBe('user-stepped-up');
    expect(transport.sessionId).toBe(session);
    expect(callsMarked(http.received(), 'user-stepped-up')).toHaveLength(1);
  });

  it('a 2026 request through the aggregate: 403, re-authorization, success', async () => {
    const { client, provider, seen } = await sdkClient(http.gw.url, '/mcp', '2026-07-28');
    const result = await client.callTool({ name: 'files__echo', arguments: { text: 'stepped-up-2026' } });
    expect(textOf(result)).toBe('stepped-up-2026');
    const refused = seen.filter((s) => s.status === 403);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.challenge).toContain(`resource_metadata="${http.gw.url}/.well-known/oauth-protected-resource/mcp"`);
    expect(refused[0]!.challenge).toContain('scope="mcp files:write"');
    expect(scopesOf(provider.tokens()?.scope)).toEqual(['files:write', 'mcp']);
    expect(callsMarked(http.received(), 'stepped-up-2026')).toHaveLength(1);
  });

  it('judges the token of each request: the narrower token is refused again on the stepped-up session', async () => {
    const wide = await http.token('svc-a', '/servers/files/mcp', 'mcp files:write');
    const narrow = await http.token('svc-a', '/servers/files/mcp', 'mcp');
    // Opened with the wide token: a later request with the narrow one must not inherit its scopes.
    const session = await rpc.initialize(new URL('/servers/files/mcp', http.gw.url), '2025-11-25', { authorization: `Bearer ${wide}` });
    const call = (text: string, token: string) =>
      session.request({ jsonrpc: '2.0', id: text, method: 'tools/call', params: { name: 'echo', arguments: { text } } }, { authorization: `Bearer ${token}` });
    const denied = await call('narrow-after-wide', narrow);
    expect(denied.status).toBe(403);
    expect(denied.headers.get('mcp-session-id')).toBe(session.id);
    expect(denied.json).toMatchObject({ id: 'narrow-after-wide', error: { code: -32600, data: { code: 'GW_STEP_UP_REQUIRED', requiredScopes: ['mcp', 'files:write'], missingScopes: ['files:write'] } } });
    const allowed = await call('wide-again', wide);
    expect(allowed.status).toBe(200);
    expect(textOf(allowed.json.result)).toBe('wide-again');
    expect(callsMarked(http.received(), 'narrow-after-wide')).toEqual([]);
    expect(await session.delete()).toBe(200);
  });

  it('lists the step-up scopes in the protected-resource metadata', async () => {
    const metadata = (await (await fetch(`${http.gw.url}/.well-known/oauth-protected-resource/servers/files/mcp`)).json()) as { scopes_supported: string[] };
    expect([...metadata.scopes_supported].sort()).toEqual(['files:admin', 'files:write', 'mcp']);
  });
});

describe('stepUp: jsonrpc', () => {
  it('answers the documented JSON-RPC error at HTTP 200 with data.requiredScopes, and nothing reaches the upstream', async () => {
    const narrow = await jsonrpc.token('svc-a', '/servers/files/mcp', 'mcp');
    const session = await rpc.initialize(new URL('/servers/files/mcp', jsonrpc.gw.url), '2025-11-25', { authorization: `Bearer ${narrow}` });
    const answer = await session.request({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'jsonrpc-mode' } } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('www-authenticate')).toBeNull();
    expect(answer.json).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32600, message: 'Forbidden: this call needs scopes the token lacks; re-authorize with them', data: { code: 'GW_STEP_UP_REQUIRED', requiredScopes: ['mcp', 'files:write'], missingScopes: ['files:write'] } },
    });
    expect(callsMarked(jsonrpc.received(), 'jsonrpc-mode')).toEqual([]);
    expect(await session.delete()).toBe(200);
  });

  it('the SDK v2 client sees the error as the call\'s own, on a session that stays usable', async () => {
    const { client, seen } = await sdkClient(jsonrpc.gw.url, '/servers/files/mcp', '2025-11-25');
    const refused = await client.callTool({ name: 'echo', arguments: { text: 'sdk-jsonrpc' } }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ProtocolError);
    expect(refused).toMatchObject({ code: -32600, data: { code: 'GW_STEP_UP_REQUIRED', requiredScopes: ['mcp', 'files:write'], missingScopes: ['files:write'] } });
    expect(seen.some((s) => s.status === 403)).toBe(false);
    // The session goes on: a tool needing nothing more still works.
    expect(textOf(await client.callTool({ name: 'whoami', arguments: {} }))).toContain('pid');
    expect(callsMarked(jsonrpc.received(), 'sdk-jsonrpc')).toEqual([]);
  });

  it('a reload changes the rules for live sessions and the metadata', async () => {
    const narrow = await jsonrpc.token('svc-a', '/mcp', 'mcp');
    const session = await rpc.initialize(new URL('/mcp', jsonrpc.gw.url), '2025-11-25', { authorization: `Bearer ${narrow}` });
    const call = (id: string, name: string) => session.request({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { text: id } } });
    expect((await call('before-files', 'files__echo')).json).toMatchObject({ error: { data: { code: 'GW_STEP_UP_REQUIRED' } } });
    jsonrpc.gw.reload({ ...jsonrpc.config, requiredScopes: new Map([['other', { tools: {}, prompts: {}, resources: { 'x:*': ['other:read'] } }]]) });
    expect(textOf((await call('reloaded-files', 'files__echo')).json.result)).toBe('reloaded-files');
    const metadata = (await (await fetch(`${jsonrpc.gw.url}/.well-known/oauth-protected-resource/mcp`)).json()) as { scopes_supported: string[] };
    expect([...metadata.scopes_supported].sort()).toEqual(['mcp', 'other:read']);
    expect(await session.delete()).toBe(200);
  });
});
