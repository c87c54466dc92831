/**
 * The operator's console under `/admin` (docs/operations.md, "The console"): the page, its script
 * and stylesheet, sign-in by OpenID Connect (console-sign-in.ts) and the JSON API (console-api.ts).
 *
 * Who may use the API: a console session (a sealed `HttpOnly`, `SameSite=Strict` cookie, `Secure`
 * beyond loopback; console-seal.ts), or a bearer credential the other admin pages accept
 * (admin-auth.ts). A change (any method but GET/HEAD) signed in by cookie needs the session's CSRF
 * token in `x-csrf-token` and an `Origin` that is the gateway's own; without gateway.auth (a
 * loopback listener) a change a browser sends, which always carries an Origin, needs the cookie
 * and token too. Everything here passes the Origin and Host checks of the MCP routes first.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleConfig, GatewayConfig } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import type { Observer } from '../log/observer.ts';
import { createAdminCheck, setAdminPrincipal, type AdminCheck } from './admin-auth.ts';
import { registerConsoleApi } from './console-api.ts';
import { CONSOLE_CSS, CONSOLE_JS } from './console-assets.ts';
import { createConsoleContext, HEADERS, SESSION_COOKIE, type ConsoleContext } from './console-context.ts';
import { renderConsolePage, renderSignInPage } from './console-page.ts';
import { cookieOf, sameToken, type ConsoleSession } from './console-seal.ts';
import { issuerOf, registerSignIn } from './console-sign-in.ts';
import type { ConsoleSources } from './console-sources.ts';
import type { OriginPolicy } from './guards.ts';

export interface ConsoleOptions {
  readonly config: GatewayConfig;
  readonly settings: ConsoleConfig;
  readonly sources: ConsoleSources;
  readonly origins: OriginPolicy;
  readonly logger: Logger;
  readonly observer: Observer;
  /** Cookie keys: the cluster's (any replica opens them), else random per process. */
  readonly keys: readonly Buffer[];
}

const UNSAFE = (method: string) => method !== 'GET' && method !== 'HEAD';

/** The sign-in steps, the page shell (a sign-in page without a session) and its assets answer everyone. */
const OPEN = new Set(['/admin', '/admin/', '/admin/login', '/admin/callback', '/admin/console.js', '/admin/console.css']);

const headerOf = (request: FastifyRequest, name: string) => {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
};

/** The console session, or a bearer credential, or (no gateway.auth, loopback) a script; a change also passes the CSRF check. */
function createGuard(ctx: ConsoleContext, adminCheck: AdminCheck | undefined) {
  const refused = (request: FastifyRequest, operator: string | undefined) => {
    ctx.audit(request, 'refused', operator, { reason: 'csrf', path: (request.url.split('?', 1)[0] as string).slice(0, 256), origin: request.headers.origin?.slice(0, 256) }, { outcome: 'denied', code: 'GW_CSRF_REFUSED' });
    return new GatewayError('GW_CSRF_REFUSED');
  };
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const opened = ctx.sealer.open<ConsoleSession>('session', cookieOf(request.headers.cookie, SESSION_COOKIE));
    // A cookie of a session its operator ended is no session (console-context.ts, createSignedOut).
    const session = opened !== undefined && ctx.signedOut.has(opened) ? undefined : opened;
    if (session !== undefined) ctx.sessions.set(request, session);
    if (OPEN.has(request.url.split('?', 1)[0] as string)) return undefined;
    const origin = request.headers.origin;
    const unsafe = UNSAFE(request.method);
    if (session !== undefined) {
      if (unsafe && (origin !== ctx.ownOrigin(request) || !sameToken(headerOf(request, 'x-csrf-token'), session.csrf))) throw refused(request, session.operator);
      setAdminPrincipal(request, session.operator);
      return undefined;
    }
    if (adminCheck !== undefined) {
      if (!(await adminCheck(request, reply))) return reply;
      // A bearer comes from a script, not a page: a browser's change would carry an Origin of its own.
      if (unsafe && origin !== undefined && origin !== ctx.ownOrigin(request)) throw refused(request, undefined);
      return undefined;
    }
    if (unsafe && origin !== undefined) throw refused(request, undefined);
    return undefined;
  };
}

export function registerConsole(app: FastifyInstance, options: ConsoleOptions): void {
  const { config, settings, sources, origins, logger, observer } = options;
  const ctx = createConsoleContext(config, settings, options.keys, origins, logger, observer, (entry) => sources.record(entry));
  const adminCheck = config.auth === undefined ? undefined : createAdminCheck(config.auth, origins, ctx.scope, logger, observer);
  const asset = (type: string, body: string) => async (_request: FastifyRequest, reply: FastifyReply) => reply.headers(HEADERS).header('content-type', type).send(body);
  void app.register(
    async (c) => {
      c.addHook('onRequest', async (request) => origins.check(request.headers));
      c.addHook('onRequest', createGuard(ctx, adminCheck));
      c.get('/console.css', asset('text/css; charset=utf-8', CONSOLE_CSS));
      c.get('/console.js', asset('text/javascript; charset=utf-8', CONSOLE_JS));
      c.get('/', async (request, reply) => {
        const session = ctx.sessions.get(request);
        if (session !== undefined) return ctx.html(reply, renderConsolePage(session.operator, session.csrf));
        return ctx.html(reply, renderSignInPage(issuerOf(ctx), String((request.query as Record<string, unknown>).error ?? '')));
      });
      registerSignIn(c, ctx);
      c.post('/api/logout', async (request, reply) => {
        const session = ctx.sessions.get(request);
        if (session !== undefined) ctx.signedOut.add(session);
        ctx.audit(request, 'sign-out', session?.operator, {});
        return reply.headers(HEADERS).header('set-cookie', ctx.cookie(SESSION_COOKIE, '', '/admin', 'Strict', 0)).send({ signedOut: true });
      });
      registerConsoleApi(c, { sources, config, logger, originOf: (request) => ctx.ownOrigin(request) });
    },
    { prefix: '/admin' },
  );
}
