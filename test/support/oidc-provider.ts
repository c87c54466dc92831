/**
 * A real OAuth 2.1 / OpenID authorization server for tests: `oidc-provider` (a certified
 * implementation) on 127.0.0.1, port 0. What a resource server such as the gateway meets in the
 * field, and what the MCP SDK's OAuth client must get through:
 *
 * - authorization server metadata, dynamic client registration (RFC 7591), the authorization code
 *   grant with PKCE required (S256), and its own JWKS;
 * - resource indicators (RFC 8707): a token is issued for the `resource` the client asked for,
 *   as a JWT (`at+jwt`, RFC 9068) whose `aud` is exactly that URL;
 * - client credentials for the static clients `issue()` uses, to get tokens without a browser;
 * - token exchange (RFC 8693) through `registerGrantType`, for the gateway's upstream identity.
 *
 * Login and consent are automated by this module's own interaction handler (not the provider's
 * development pages): `/interaction/<uid>` logs in the configured account and grants what the
 * client asked for, then resumes the authorization. The test's user agent (`followAuthorization`)
 * follows the redirects over HTTP with a cookie jar until the redirect URI, and returns its `code`
 * (`followAuthorization`) or that URL itself (`consent`, for a client whose redirect URI is a real
 * callback, logging in the account the test names).
 *
 * `rotate()` swaps in a provider with a new signing key (the old one still published, as during a
 * real rotation): the same issuer, a new `kid`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, jwtVerify, createLocalJWKSet, type JWK } from 'jose';
import Provider, { errors, type AdapterPayload, type KoaContextWithOIDC } from 'oidc-provider';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

export interface AuthorizationServer {
  readonly issuer: string;
  readonly jwksUrl: string;
  readonly tokenEndpoint: string;
  /** Times the JWKS was fetched. */
  readonly jwksFetches: number;
  /** Token exchanges answered (successful or not). */
  readonly exchanges: number;
  /** The subject token of the last token exchange. */
  readonly lastSubjectToken: string | undefined;
  /** A static confidential client (client_secret_basic), allowed client credentials and token exchange. */
  client(id: string): { clientId: string; clientSecret: string };
  /** An access token from client credentials for `resource` (its `sub` is the client id). */
  issue(clientId: string, resource: string, scope?: string): Promise<string>;
  /** Follows an authorization URL through login and consent; resolves with the code. */
  followAuthorization(url: URL | string): Promise<string>;
  /**
   * A browser's way through an authorization URL: login as `account` (default: the server's),
   * consent, and resolves with the URL the server sends it back to (the client's redirect URI with
   * `code`, `state`, `iss`), not yet visited.
   */
  consent(url: URL | string, account?: string): Promise<URL>;
  /** Access and refresh tokens revoked through the revocation endpoint (RFC 7009). */
  readonly revocations: number;
  /** Publishes a new signing key and signs with it from now on; resolves with its kid. */
  rotate(): Promise<string>;
  close(): Promise<void>;
}

export interface AuthorizationServerOptions {
  /** The account the interaction handler logs in (default `alice`). */
  account?: string;
  /** Scopes a resource server grants (default `mcp`). */
  scopes?: string[];
  /** Lifetime of an access token (default 300 s). */
  accessTokenTtlSec?: number;
  /** Static clients for `issue()` and token exchange (default `gateway`, `svc-a`, `svc-b`). */
  clients?: string[];
  /** Issue refresh tokens to clients allowed the grant, without `offline_access` (default false). */
  refreshTokens?: boolean;
}

interface SigningKey {
  readonly kid: string;
  readonly privateJwk: JWK;
  readonly publicJwk: JWK;
}

async function newKey(kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateJwk: { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' }, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

/**
 * oidc-provider's storage, in memory, per server (its built-in one is process-wide and warns on
 * every start). Every model's records expire with their own TTL.
 */
function memoryAdapter() {
  const store = new Map<string, { payload: AdapterPayload; expiresAt: number }>();
  const live = (key: string) => {
    const entry = store.get(key);
    if (entry === undefined || Date.now() >= entry.expiresAt) return undefined;
    return entry.payload;
  };
  return class {
    readonly key: (id: string) => string;
    constructor(model: string) {
      this.key = (id) => `${model}:${id}`;
    }
    async upsert(id: string, payload: AdapterPayload, expiresIn: number) {
      store.set(this.key(id), { payload, expiresAt: Date.now() + expiresIn * 1000 });
    }
    async find(id: string) {
      return live(this.key(id));
    }
    async findByUid(uid: string) {
      return [...store.keys()].map((k) => live(k)).find((p) => p?.uid === uid);
    }
    async findByUserCode(userCode: string) {
      return [...store.keys()].map((k) => live(k)).find((p) => p?.userCode === userCode);
    }
    async consume(id: string) {
      const payload = live(this.key(id));
      if (payload !== undefined) payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      store.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const [k, entry] of store) if (entry.payload.grantId === grantId) store.delete(k);
    }
  };
}

const secretOf = (clientId: string) => `${clientId}-secret-0123456789abcdef`;

export async function startAuthorizationServer(options: AuthorizationServerOptions = {}): Promise<AuthorizationServer> {
  const account = options.account ?? 'alice';
  const scope = (options.scopes ?? ['mcp']).join(' ');
  const ttl = options.accessTokenTtlSec ?? 300;
  const clientIds = options.clients ?? ['gateway', 'svc-a', 'svc-b'];
  let jwksFetches = 0;
  let exchanges = 0;
  let lastSubjectToken: string | undefined;
  let revocations = 0;
  const keys: SigningKey[] = [await newKey('k1')];

  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => void res.writeHead(503).end();
  const server = createServer((req, res) => {
    if (req.url === '/jwks') jwksFetches++;
    if (req.url === '/token/revocation' && req.method === 'POST') revocations++;
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const adapter = memoryAdapter();
  const build = () => {
    const provider = new Provider(issuer, {
      adapter,
      // Lifetimes given, so the provider does not warn about its defaults on every run.
      ttl: { AccessToken: ttl, ClientCredentials: ttl, AuthorizationCode: 60, Interaction: 600, Session: 3_600, Grant: 3_600, RefreshToken: 3_600 },
      clients: clientIds.map((id) => ({
        client_id: id,
        client_secret: secretOf(id),
        grant_types: ['client_credentials', TOKEN_EXCHANGE],
        response_types: [],
        redirect_uris: [],
      })),
      // The newest key signs (the provider signs with the first key of the algorithm).
      jwks: { keys: [...keys].reverse().map((k) => k.privateJwk) },
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true },
        // A client revokes only its own tokens (RFC 7009 section 2.1).
        revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: (_ctx, _client, oneOf) => oneOf ?? undefined!,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, resource) => ({ scope, audience: resource, accessTokenTTL: ttl, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
        },
      },
      // Its keys are ES256 only (the default RS256 would need an RSA key).
      clientDefaults: { id_token_signed_response_alg: 'ES256', grant_types: ['authorization_code'], response_types: ['code'] },
      pkce: { required: () => true },
      ...(options.refreshTokens === true ? { issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token') } : {}),
      scopes: ['openid', 'offline_access', ...scope.split(' ')],
      findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      // Errors at the authorization endpoint as JSON, so a failing test shows why (not an HTML page).
      renderError: (ctx, out) => {
        ctx.type = 'json';
        ctx.body = out;
      },
    });
    provider.registerGrantType(TOKEN_EXCHANGE, exchangeHandler(provider), ['subject_token', 'subject_token_type', 'audience', 'resource', 'scope', 'requested_token_type']);
    return provider;
  };

  /** RFC 8693: the subject token must be one of ours; the new token is for `resource` (or `audience`). */
  const exchangeHandler = (provider: Provider) => async (ctx: KoaContextWithOIDC) => {
    exchanges++;
    const params = ctx.oidc.params as Record<string, string | undefined>;
    lastSubjectToken = params.subject_token;
    if (params.subject_token_type !== ACCESS_TOKEN_TYPE) throw new errors.InvalidRequest('subject_token_type must be an access token');
    let sub: string;
    try {
      const verified = await jwtVerify(params.subject_token ?? '', createLocalJWKSet({ keys: keys.map((k) => k.publicJwk) }), { issuer });
      sub = String(verified.payload.sub);
    } catch {
      throw new errors.InvalidGrant('subject_token is not valid');
    }
    const resource = params.resource ?? params.audience;
    if (resource === undefined) throw new errors.InvalidTarget('name the resource or audience');
    const client = ctx.oidc.client!;
    const grant = new provider.Grant({ accountId: sub, clientId: client.clientId });
    grant.addResourceScope(resource, params.scope ?? scope);
    const token = new provider.AccessToken({
      accountId: sub,
      client,
      grantId: await grant.save(),
      scope: params.scope ?? scope,
      gty: 'token-exchange',
      resourceServer: new provider.ResourceServer(resource, { scope, audience: resource, accessTokenTTL: ttl, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
    });
    ctx.body = { access_token: await token.save(), issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', expires_in: token.expiration };
  };

  let provider = build();
  const interactionPath = /^\/interaction\/([\w-]+)$/;
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET' && interactionPath.test(req.url ?? '')) return void autoApprove(req, res).catch(() => res.writeHead(500).end());
    provider.callback()(req, res);
  };
  handle = serve;

  /** Logs `account` in, then consents to every scope and resource asked for. */
  async function autoApprove(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      // The browser says who logs in (a cookie `consent()` sets), as a user typing their name would.
      const chosen = /(?:^|;\s*)test-account=([\w.-]+)/.exec(req.headers.cookie ?? '')?.[1] ?? account;
      return provider.interactionFinished(req, res, { login: { accountId: chosen } }, { mergeWithLastSubmission: false });
    }
    const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id as string });
    const asked = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (asked.missingOIDCScope) grant.addOIDCScope(asked.missingOIDCScope.join(' '));
    for (const [indicator, scopes] of Object.entries(asked.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  const tokenEndpoint = `${issuer}/token`;
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    tokenEndpoint,
    get jwksFetches() {
      return jwksFetches;
    },
    get exchanges() {
      return exchanges;
    },
    get lastSubjectToken() {
      return lastSubjectToken;
    },
    client: (clientId) => ({ clientId, clientSecret: secretOf(clientId) }),
    async issue(clientId, resource, asked = scope) {
      const res = await fetch(tokenEndpoint, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${clientId}:${secretOf(clientId)}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: asked }),
      });
      const body = (await res.json()) as { access_token?: string };
      if (!res.ok || body.access_token === undefined) throw new Error(`client credentials failed: ${res.status} ${JSON.stringify(body)}`);
      return body.access_token;
    },
    followAuthorization: async (url) => {
      const back = await followRedirects(new URL(url));
      const code = back.searchParams.get('code');
      if (code === null) throw new Error(`authorization failed: ${back.searchParams.get('error')} ${back.searchParams.get('error_description')}`);
      return code;
    },
    consent: (url, who) => followRedirects(new URL(url), who),
    get revocations() {
      return revocations;
    },
    async rotate() {
      const key = await newKey(`k${keys.length + 1}`);
      keys.push(key);
      provider = build();
      return key.kid;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * A user agent for the authorization endpoint: follows redirects (keeping cookies, as a browser
 * would) until one leaves the authorization server, at most 10 hops; resolves with where it leads.
 */
async function followRedirects(start: URL, account?: string): Promise<URL> {
  const jar = new Map<string, string>(account === undefined ? [] : [['test-account', account]]);
  let url = start;
  for (let hop = 0; hop < 10; hop++) {
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';', 1);
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    const location = res.headers.get('location');
    if (location === null) throw new Error(`authorization stopped at ${url.pathname}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
    url = new URL(location, url);
    if (url.origin !== start.origin) return url;
  }
  throw new Error('authorization did not finish within 10 redirects');
}
