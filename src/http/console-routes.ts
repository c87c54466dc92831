/**
 * The operator's console under `/admin` (docs/operations.md, "The console"): the page, its script
 * and stylesheet, sign-in by OpenID Connect (console-oidc.ts) and the JSON API (console-api.ts).
 *
 * Who may use the API: a console session (a sealed `HttpOnly`, `SameSite=Strict` cookie, `Secure`
 * beyond loopback; console-seal.ts), or a bearer credential the other admin pages accept
 * (admin-auth.ts). A change (any method but GET/HEAD) signed in by cookie needs the session's CSRF
 * token in `x-csrf-token` and an `Origin` that is the gateway's own; without gateway.auth (a
 * loopback listener) a change a browser sends, which always carries an Origin, needs the cookie
 * and token too. Everything here passes the Origin and Host checks of the MCP routes first.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createAuthenticator } from '../auth/authenticator.ts';
import type { ConsoleConfig, GatewayConfig } from '../config/types.ts';
import { ADMIN_DEFAULTS } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import type { Observer } from '../log/observer.ts';
import { createAdminCheck, setAdminPrincipal } from './admin-auth.ts';
import { registerConsoleApi } from './console-api.ts';
import { CONSOLE_CSS, CONSOLE_JS } from './console-assets.ts';
import { createOidcClient } from './console-oidc.ts';
import { renderConsolePage, renderRedirectPage, renderSignInPage } from './console-page.ts';
import { cookieOf, createSealer, randomToken, sameToken, type ConsoleSession, type LoginState } from './console-seal.ts';
import type { ConsoleSources } from './console-sources.ts';
import { isLoopbackAddress, type OriginPolicy } from './guards.ts';

export const SESSION_COOKIE = 'switchboard_console';
const LOGIN_COOKIE = 'switchboard_console_login';
const LOGIN_TTL_MS = 10 * 60_000;

export interface ConsoleOptions {
  readonly config: GatewayConfig;
  readonly settings: ConsoleConfig;
  readonly sources: ConsoleSources;
  readonly origins: OriginPolicy;
  readonly logger: Logger;
  readonly observer: Observer;
  /** Cookie keys: the cluster's (any replica opens them); undefined: random per process. */
  readonly keys: readonly Buffer[];
}

/** Scripts, styles and requests from the gateway only; no inline script; forms post nowhere. */
const HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
};
const UNSAFE = (method: string) => method !== 'GET' && method !== 'HEAD';

/** Where the console's routes are judged: the sign-in steps and the page shell answer everyone. */
const OPEN = new Set(['/admin/', '/admin/login', '/admin/callback', '/admin/console.js', '/admin/console.css']);

export function registerConsole(app: FastifyInstance, options: ConsoleOptions): void {
  const { config, settings, sources, origins, logger, observer } = options;
  const auth = config.auth;
  const scope = (config.admin ?? ADMIN_DEFAULTS).scope;
  const log = logger.child({ audit: true, component: 'console' });
  const sealer = createSealer(options.keys);
  const secure = !isLoopbackAddress(config.listen.host) || auth?.publicUrl?.startsWith('https:') === true;
  const cookie = (name: string, value: string, path: string, sameSite: 'Strict' | 'Lax', maxAgeSec: number) =>
    `${name}=${value}; Path=${path}; HttpOnly; SameSite=${sameSite}; Max-Age=${maxAgeSec}${secure ? '; Secure' : ''}`;
  const ownOrigin = (request: FastifyRequest): string => {
    const origin = auth?.publicUrl ?? origins.originOf(request.headers.host);
    if (origin === undefined) throw new GatewayError('GW_FORBIDDEN_HOST');
    return origin;
  };
  const adminCheck = auth === undefined ? undefined : createAdminCheck(auth, origins, scope, logger, observer);
  const issuer = settings.issuer ?? auth?.jwt?.issuers[0];
  const oidc = auth === undefined || issuer === undefined || settings.clientId === undefined ? undefined : createOidcClient({ issuer, clientId: settings.clientId, clientSecret: settings.clientSecret, scopes: settings.operatorClaim === undefined ? [scope] : [] });
  const verify = auth === undefined ? undefined : createAuthenticator(auth, settings.operatorClaim === undefined ? [] : [settings.operatorClaim.name]);
  const sessions = new WeakMap<FastifyRequest, ConsoleSession>();

  const html = (reply: FastifyReply, body: string, status = 200) => reply.code(status).headers(HEADERS).header('content-type', 'text/html; charset=utf-8').send(body);
  const startSession = (reply: FastifyReply, operator: string, until: number) => {
    const value = sealer.seal('session', { operator, csrf: randomToken() }, until);
    reply.header('set-cookie', [cookie(SESSION_COOKIE, value, '/admin', 'Strict', Math.floor((until - Date.now()) / 1000)), cookie(LOGIN_COOKIE, '', '/admin/callback', 'Lax', 0)]);
  };

  /** The console session, or a bearer credential, or (no gateway.auth, loopback) a script; a change also passes the CSRF check. */
  const guard = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const path = request.url.split('?', 1)[0] as string;
    const session = sealer.open<ConsoleSession>('session', cookieOf(request.headers.cookie, SESSION_COOKIE));
    if (session !== undefined) sessions.set(request, session);
    if (OPEN.has(path)) return undefined;
    const origin = request.headers.origin;
    if (session !== undefined) {
      if (UNSAFE(request.method) && (origin !== ownOrigin(request) || !sameToken(headerOf(request, 'x-csrf-token'), session.csrf))) throw csrfRefused(request, session.operator);
      setAdminPrincipal(request, session.operator);
      return undefined;
    }
    if (adminCheck !== undefined) {
      if (!(await adminCheck(request, reply))) return reply;
      // A bearer comes from a script, not a page: a browser's change would carry an Origin of its own.
      if (UNSAFE(request.method) && origin !== undefined && origin !== ownOrigin(request)) throw csrfRefused(request, undefined);
      return undefined;
    }
    if (UNSAFE(request.method) && origin !== undefined) throw csrfRefused(request, undefined);
    return undefined;
  };
  const csrfRefused = (request: FastifyRequest, operator: string | undefined) => {
    log.warn({ event: 'console', action: 'refused', reason: 'csrf', by: operator, path: request.url.split('?', 1)[0], origin: request.headers.origin }, 'audit');
    return new GatewayError('GW_CSRF_REFUSED');
  };

  void app.register(
    async (c) => {
      c.addHook('onRequest', async (request) => origins.check(request.headers));
      c.addHook('onRequest', guard);
      c.get('/console.css', async (_request, reply) => reply.headers(HEADERS).header('content-type', 'text/css; charset=utf-8').send(CONSOLE_CSS));
      c.get('/console.js', async (_request, reply) => reply.headers(HEADERS).header('content-type', 'text/javascript; charset=utf-8').send(CONSOLE_JS));
      c.get('/', async (request, reply) => {
        const session = sessions.get(request);
        if (session !== undefined) return html(reply, renderConsolePage(session.operator, session.csrf));
        return html(reply, renderSignInPage(auth === undefined ? undefined : issuer, String((request.query as Record<string, unknown>).error ?? '')));
      });
      c.get('/login', async (request, reply) => {
        if (auth === undefined) {
          startSession(reply, 'local', Date.now() + settings.sessionTtlSec * 1000);
          log.info({ event: 'console', action: 'sign-in', by: 'local' }, 'audit');
          return html(reply, renderRedirectPage('/admin/'));
        }
        if (oidc === undefined) return html(reply, renderSignInPage(undefined, 'not-configured'), 503);
        const login: Omit<LoginState, 'until'> = { state: randomToken(), nonce: randomToken(), verifier: randomToken() };
        const url = await oidc.authorizationUrl({ ...login, redirectUri: `${ownOrigin(request)}/admin/callback`, resource: `${ownOrigin(request)}/admin` });
        // Lax: the issuer sends the browser back by a top-level navigation from its own site.
        reply.header('set-cookie', cookie(LOGIN_COOKIE, sealer.seal('login', login, Date.now() + LOGIN_TTL_MS), '/admin/callback', 'Lax', LOGIN_TTL_MS / 1000));
        return reply.code(302).headers(HEADERS).header('location', url).send();
      });
      c.get('/callback', async (request, reply) => {
        const query = request.query as Record<string, unknown>;
        const login = sealer.open<LoginState>('login', cookieOf(request.headers.cookie, LOGIN_COOKIE));
        if (oidc === undefined || verify === undefined || login === undefined || typeof query.code !== 'string' || typeof query.state !== 'string' || !sameToken(query.state, login.state)) {
          log.warn({ event: 'console', action: 'sign-in', outcome: 'refused', reason: 'no sign-in under way, or another state' }, 'audit');
          return html(reply, renderRedirectPage('/admin/?error=sign-in-failed'), 400);
        }
        const origin = ownOrigin(request);
        let operator: string;
        let until: number;
        try {
          const access = await oidc.redeem({ code: query.code, verifier: login.verifier, nonce: login.nonce, redirectUri: `${origin}/admin/callback`, resource: `${origin}/admin` });
          const verified = await verify({ bearer: access, apiKey: undefined }, `${origin}/admin`);
          const claim = settings.operatorClaim;
          const isOperator = claim === undefined ? verified.principal.scopes.has(scope) : (verified.principal.claims?.[claim.name] ?? []).some((v) => claim.values.includes(v));
          if (!isOperator) {
            log.warn({ event: 'console', action: 'sign-in', outcome: 'refused', reason: 'not an operator', by: verified.principal.id }, 'audit');
            observer.refused('auth', 'GW_INSUFFICIENT_SCOPE');
            return html(reply, renderRedirectPage('/admin/?error=not-operator'), 403);
          }
          operator = verified.principal.id;
          until = Math.min(Date.now() + settings.sessionTtlSec * 1000, verified.until);
        } catch (err) {
          log.warn({ event: 'console', action: 'sign-in', outcome: 'failed', reason: err instanceof Error ? err.message : 'unknown' }, 'audit');
          return html(reply, renderRedirectPage('/admin/?error=sign-in-failed'), 400);
        }
        startSession(reply, operator, until);
        log.info({ event: 'console', action: 'sign-in', by: operator }, 'audit');
        // A page, not a redirect: the next request starts on this site, so the Strict cookie goes with it.
        return html(reply, renderRedirectPage('/admin/'));
      });
      c.post('/api/logout', async (request, reply) => {
        log.info({ event: 'console', action: 'sign-out', by: sessions.get(request)?.operator }, 'audit');
        return reply.headers(HEADERS).header('set-cookie', cookie(SESSION_COOKIE, '', '/admin', 'Strict', 0)).send({ signedOut: true });
      });
      registerConsoleApi(c, { sources, config, logger, originOf: ownOrigin });
    },
    { prefix: '/admin' },
  );
}

function headerOf(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}
