/**
 * Client authentication at the HTTP edge (docs/security.md): an `onRequest` hook on every MCP route
 * (Streamable HTTP, WebSocket upgrade, legacy SSE and its POSTs), so nothing is read of a body
 * before the credential is checked; and the RFC 9728 protected-resource metadata, one document per
 * MCP path, whose `resource` is the URL the client calls there.
 *
 * The principal's id is set on the request for the routes (sessions are bound to it). A refused
 * request gets 401 (or 403 insufficient_scope) with `WWW-Authenticate` pointing at the metadata;
 * the reason is logged, never the credential, and never told to the client.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createAuthenticator, type Credentials } from '../auth/authenticator.ts';
import { AuthFailure } from '../auth/principal.ts';
import type { Principal } from '../upstream/caller.ts';
import type { AuthConfig } from '../config/types.ts';
import { GatewayError, toErrorResponse } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import { NOOP_OBSERVER, type Observer } from '../log/observer.ts';
import type { OriginPolicy } from './guards.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated principal; undefined when the gateway has no client authentication. */
    principal: Principal | undefined;
  }
}

const METADATA_PREFIX = '/.well-known/oauth-protected-resource';
/** A WebSocket client that cannot set headers offers its token as a subprotocol `bearer.<token>`. */
const WS_TOKEN_PREFIX = 'bearer.';
const RESOURCE_PATH = /^(?:\/(?:servers|groups)\/[^/]+)?\/(?:mcp|ws|sse)$/;

/** The resource a request path belongs to: `/messages` is the POST half of its `/sse`. */
export function resourcePathOf(url: string): string {
  const path = url.split('?', 1)[0] as string;
  return path.endsWith('/messages') ? `${path.slice(0, -'/messages'.length)}/sse` : path;
}

/**
 * The gateway's own origin as this request names it: gateway.auth.publicUrl, else the origin its
 * Host stands for (with the port the gateway listens on). The Host check runs first on every
 * route that asks, so a Host that is not the gateway's never gets here; if one did, it is
 * refused as that check would.
 */
export function originOf(request: Pick<FastifyRequest, 'headers'>, auth: AuthConfig, origins: OriginPolicy): string {
  const origin = auth.publicUrl ?? origins.originOf(request.headers.host);
  if (origin === undefined) throw new GatewayError('GW_FORBIDDEN_HOST', `Forbidden: Host ${JSON.stringify(request.headers.host)} is not allowed`);
  return origin;
}

/** The bearer token or API key a request presents (never logged). */
export function credentialsOf(request: FastifyRequest, auth: AuthConfig): Credentials {
  const header = request.headers.authorization;
  let bearer = header !== undefined && /^bearer /i.test(header) ? header.slice(7).trim() : undefined;
  if (bearer === undefined && request.headers.upgrade?.toLowerCase() === 'websocket') {
    const offered = String(request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
    bearer = offered.find((p) => p.startsWith(WS_TOKEN_PREFIX))?.slice(WS_TOKEN_PREFIX.length);
  }
  const keyHeader = auth.apiKeyHeader === 'authorization' ? undefined : request.headers[auth.apiKeyHeader];
  return { bearer: bearer || undefined, apiKey: typeof keyHeader === 'string' && keyHeader !== '' ? keyHeader : undefined };
}

/**
 * The Authorization the session records for its upstreams (forwardAuthorization, token exchange):
 * the header, or for a browser's WebSocket the token it carried as a subprotocol, in header form,
 * so a token is a token whichever way it came.
 */
export function downstreamAuthorization(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header !== undefined || request.headers.upgrade?.toLowerCase() !== 'websocket') return header;
  const offered = String(request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  const token = offered.find((p) => p.startsWith(WS_TOKEN_PREFIX))?.slice(WS_TOKEN_PREFIX.length);
  return token ? `Bearer ${token}` : undefined;
}

function challenge(auth: AuthConfig, origin: string, resourcePath: string, failure: AuthFailure, presented: boolean): string {
  const parts = [`resource_metadata="${origin}${METADATA_PREFIX}${resourcePath}"`];
  if (failure.status === 403) parts.unshift('error="insufficient_scope"');
  else if (presented) parts.unshift('error="invalid_token"');
  const scopes = failure.status === 403 ? failure.missing : auth.scopes;
  if (scopes.length > 0) parts.push(`scope="${scopes.join(' ')}"`);
  return `Bearer ${parts.join(', ')}`;
}

/** What a step-up challenge reads of a request: its Host (the origin) and URL (the resource path); a raw IncomingMessage will do. */
export type StepUpRequest = Pick<FastifyRequest, 'headers'> & { readonly url?: string | undefined };

/**
 * The step-up challenge (SEP-2350) of a request whose call needs `required` scopes (some of which
 * its token lacks): 403's `WWW-Authenticate` naming every one of them, the base scopes included
 * (session/chain/step-up.ts), so a client asking for exactly these keeps what it had; and the
 * metadata of the path the request came by.
 */
export function stepUpChallenge(request: StepUpRequest, auth: AuthConfig, origins: OriginPolicy, required: readonly string[]): string {
  return challenge(auth, originOf(request, auth, origins), resourcePathOf(request.url ?? ''), new AuthFailure(403, 'step-up', required), true);
}

/** 401 (or 403 insufficient_scope) with its challenge and a JSON-RPC error body. */
export function refuse(reply: FastifyReply, failure: AuthFailure, wwwAuthenticate: string): FastifyReply {
  const error = new GatewayError(failure.status === 403 ? 'GW_INSUFFICIENT_SCOPE' : 'GW_UNAUTHORIZED');
  return reply
    .code(error.httpStatus)
    .header('www-authenticate', wwwAuthenticate)
    .header('content-type', 'application/json')
    .send(JSON.stringify(toErrorResponse(null, error)));
}

/**
 * What a keep-alive connection last proved: the same credential header for the same resource gets
 * the same principal without checking again, until the credential expires. Clients send one
 * token per connection until they refresh it; this keeps authentication off the per-call path.
 */
interface Proven {
  readonly header: string;
  /** The resource is `origin` + `path`: compared in parts, so a hit builds no string. */
  readonly origin: string;
  readonly path: string;
  readonly principal: Principal;
  readonly until: number;
}

/**
 * Adds the hook to `mcp` (the plugin that holds every MCP route); no-op without `auth`. Refusals
 * are reported to `observer` (the auth-failure metric). `claimNames`: the token claims the policy
 * reads (kept on the principal).
 */
export function registerAuthHook(mcp: FastifyInstance, auth: AuthConfig | undefined, origins: OriginPolicy, logger: Logger, observer: Observer = NOOP_OBSERVER, claimNames: readonly string[] = []): void {
  mcp.decorateRequest('principal', undefined);
  if (auth === undefined) return;
  const authenticate = createAuthenticator(auth, claimNames);
  const log = logger.child({ component: 'auth' });
  const proven = new WeakMap<object, Proven>();
  const headerOf = (request: FastifyRequest) => {
    const value = auth.apiKeyHeader === 'authorization' ? request.headers.authorization : request.headers[auth.apiKeyHeader];
    return typeof value === 'string' ? value : undefined;
  };

  // A callback hook: a connection's repeat requests are let through without a promise.
  mcp.addHook('onRequest', (request, reply, done) => {
    if (request.method === 'OPTIONS') return done(); // CORS preflight: it carries no credential by design
    if (request.hop) return done(); // another replica authenticated it (replica-hop-guard.ts)
    let origin: string;
    try {
      origin = originOf(request, auth, origins);
    } catch (err) {
      return done(err as GatewayError);
    }
    const resourcePath = resourcePathOf(request.url);
    const header = headerOf(request);
    const memo = proven.get(request.raw.socket);
    if (memo !== undefined && header !== undefined && memo.header === header && memo.path === resourcePath && memo.origin === origin && Date.now() < memo.until) {
      request.principal = memo.principal;
      return done();
    }
    const credentials = credentialsOf(request, auth);
    authenticate(credentials, origin + resourcePath).then(
      ({ principal, until }) => {
        request.principal = principal;
        if (header !== undefined) proven.set(request.raw.socket, { header, origin, path: resourcePath, principal, until });
        done();
      },
      (err: unknown) => {
        const failure = err instanceof AuthFailure ? err : new AuthFailure(401, 'verification failed');
        if (!(err instanceof AuthFailure)) log.error({ err }, 'credential check failed unexpectedly');
        log.info({ path: resourcePath, status: failure.status, reason: failure.reason }, 'request refused by authentication');
        const presented = credentials.bearer !== undefined || credentials.apiKey !== undefined;
        observer.refused('auth', failure.status === 403 ? 'GW_INSUFFICIENT_SCOPE' : 'GW_UNAUTHORIZED');
        refuse(reply, failure, challenge(auth, origin, resourcePath, failure, presented));
      },
    );
  });
}

/**
 * GET /.well-known/oauth-protected-resource/<MCP path>: no credential, cacheable, one per
 * resource. Behind the same Origin and Host checks as the resource itself (DNS rebinding: a Host
 * that is not the gateway's gets 403, never a document naming that Host as the resource).
 */
export function registerResourceMetadata(app: FastifyInstance, auth: AuthConfig | undefined, origins: OriginPolicy, stepUpScopes: () => readonly string[] = () => []): void {
  if (auth === undefined) return;
  app.get(`${METADATA_PREFIX}/*`, { onRequest: async (request) => origins.check(request.headers) }, async (request, reply) => {
    const resourcePath = (request.url.split('?', 1)[0] as string).slice(METADATA_PREFIX.length);
    if (!RESOURCE_PATH.test(resourcePath)) throw new GatewayError('GW_ROUTE_NOT_FOUND', `Not Found: no protected resource at ${resourcePath}`);
    const body = {
      resource: originOf(request, auth, origins) + resourcePath,
      authorization_servers: auth.authorizationServers,
      // Every scope a caller may be asked for: those every request needs, and step-up's (SEP-2350).
      scopes_supported: [...new Set([...auth.scopes, ...stepUpScopes()])],
      bearer_methods_supported: ['header'],
    };
    return reply.header('cache-control', 'public, max-age=3600').header('access-control-allow-origin', '*').send(body);
  });
}
