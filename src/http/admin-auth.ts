/**
 * Who may read the operator's pages (/metrics, /status, /tools): with gateway.auth, a credential
 * the MCP routes would accept that also carries `gateway.admin.scope` (docs/operations.md). The
 * anonymous principal never does, even where gateway.auth lets it call tools. The credential is
 * checked against the page's own URL as its resource (`<origin>/metrics`, `<origin>/status`,
 * `<origin>/tools`, the origin being the gateway's own: auth-hook.ts `originOf`): a JWT must
 * name it, or one of gateway.auth.jwt.audiences.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createAuthenticator } from '../auth/authenticator.ts';
import { AuthFailure } from '../auth/principal.ts';
import type { AuthConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { Observer } from '../log/observer.ts';
import { credentialsOf, originOf, refuse } from './auth-hook.ts';
import type { OriginPolicy } from './guards.ts';

/** Who passed the check, per request (an approval's audit line names them). */
const principals = new WeakMap<object, string>();

/** The principal id that passed the admin check for `request`; undefined without gateway.auth. */
export function adminPrincipalOf(request: object): string | undefined {
  return principals.get(request);
}

/** `/status/events` and `/status/app.js` belong to `/status`. */
export function adminResourceOf(url: string): string {
  const path = url.split('?', 1)[0] as string;
  const second = path.indexOf('/', 1);
  return second === -1 ? path : path.slice(0, second);
}

function challenge(failure: AuthFailure, scope: string, presented: boolean): string {
  if (failure.status === 403) return `Bearer error="insufficient_scope", scope="${scope}"`;
  return presented ? `Bearer error="invalid_token", scope="${scope}"` : `Bearer scope="${scope}"`;
}

/**
 * The check as a function, for routes that also take another proof (the console's cookie,
 * console-routes.ts): resolves true when the request passed (its principal then known to
 * `adminPrincipalOf`), false after answering it with 401/403.
 */
export type AdminCheck = (request: FastifyRequest, reply: FastifyReply) => Promise<boolean>;

export function createAdminCheck(auth: AuthConfig, origins: OriginPolicy, scope: string, logger: Logger, observer: Observer): AdminCheck {
  const authenticate = createAuthenticator(auth);
  const log = logger.child({ component: 'admin-auth' });
  return async (request, reply) => {
    const path = adminResourceOf(request.url);
    const resource = originOf(request, auth, origins) + path;
    const credentials = credentialsOf(request, auth);
    try {
      const { principal } = await authenticate(credentials, resource);
      if (principal.kind === 'anonymous') throw new AuthFailure(401, 'anonymous callers may not read the admin pages');
      if (!principal.scopes.has(scope)) throw new AuthFailure(403, `missing scope ${scope}`, [scope]);
      principals.set(request, principal.id);
      return true;
    } catch (err) {
      const failure = err instanceof AuthFailure ? err : new AuthFailure(401, 'verification failed');
      if (!(err instanceof AuthFailure)) log.error({ err }, 'credential check failed unexpectedly');
      log.info({ path, status: failure.status, reason: failure.reason }, 'admin page refused by authentication');
      observer.refused('auth', failure.status === 403 ? 'GW_INSUFFICIENT_SCOPE' : 'GW_UNAUTHORIZED');
      const presented = credentials.bearer !== undefined || credentials.apiKey !== undefined;
      refuse(reply, failure, challenge(failure, scope, presented));
      return false;
    }
  };
}

/** Records `principal` as who passed for `request` (the console's cookie did). */
export function setAdminPrincipal(request: object, principal: string): void {
  principals.set(request, principal);
}

/** Adds the check to `admin` (the plugin holding the operator's routes). */
export function registerAdminAuth(admin: FastifyInstance, auth: AuthConfig, origins: OriginPolicy, scope: string, logger: Logger, observer: Observer): void {
  const check = createAdminCheck(auth, origins, scope, logger, observer);
  admin.addHook('onRequest', async (request, reply) => {
    if (!(await check(request, reply))) return reply;
    return undefined;
  });
}
