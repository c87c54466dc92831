/**
 * The console's sign-in routes: `/admin/login` starts OpenID Connect (console-oidc.ts) with a
 * sealed, short-lived login cookie holding state, nonce and PKCE verifier (so any replica finishes
 * it), `/admin/callback` finishes it. The access token is verified by the gateway's authenticator
 * for `<origin>/admin`; the admin scope, or `operatorClaim` when set, decides who is an operator.
 * Without gateway.auth (a loopback listener) `/admin/login` signs in the local operator at once.
 */
import type { FastifyInstance } from 'fastify';
import { createAuthenticator } from '../auth/authenticator.ts';
import { HEADERS, LOGIN_COOKIE, type ConsoleContext } from './console-context.ts';
import { createOidcClient } from './console-oidc.ts';
import { renderRedirectPage, renderSignInPage } from './console-page.ts';
import { cookieOf, randomToken, sameToken, type LoginState } from './console-seal.ts';

const LOGIN_TTL_MS = 10 * 60_000;

/** The issuer operators sign in at, or undefined without gateway.auth. */
export const issuerOf = (ctx: ConsoleContext): string | undefined => (ctx.config.auth === undefined ? undefined : (ctx.settings.issuer ?? ctx.config.auth.jwt?.issuers[0]));

export function registerSignIn(c: FastifyInstance, ctx: ConsoleContext): void {
  const { config, settings, scope, sealer } = ctx;
  const auth = config.auth;
  const issuer = issuerOf(ctx);
  const claim = settings.operatorClaim;
  const oidc = auth === undefined || issuer === undefined || settings.clientId === undefined ? undefined : createOidcClient({ issuer, clientId: settings.clientId, clientSecret: settings.clientSecret, scopes: claim === undefined ? [scope] : [] });
  const verify = auth === undefined ? undefined : createAuthenticator(auth, claim === undefined ? [] : [claim.name]);

  c.get('/login', async (request, reply) => {
    if (auth === undefined) {
      ctx.startSession(reply, 'local', Date.now() + settings.sessionTtlSec * 1000);
      ctx.audit(request, 'sign-in', 'local', {});
      return ctx.html(reply, renderRedirectPage('/admin/'));
    }
    if (oidc === undefined) return ctx.html(reply, renderSignInPage(undefined, 'not-configured'), 503);
    const login = { state: randomToken(), nonce: randomToken(), verifier: randomToken() };
    const origin = ctx.ownOrigin(request);
    const url = await oidc.authorizationUrl({ ...login, redirectUri: `${origin}/admin/callback`, resource: `${origin}/admin` });
    // Lax: the issuer sends the browser back by a top-level navigation from its own site.
    reply.header('set-cookie', ctx.cookie(LOGIN_COOKIE, sealer.seal('login', login, Date.now() + LOGIN_TTL_MS), '/admin/callback', 'Lax', LOGIN_TTL_MS / 1000));
    return reply.code(302).headers(HEADERS).header('location', url).send();
  });

  c.get('/callback', async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const login = sealer.open<LoginState>('login', cookieOf(request.headers.cookie, LOGIN_COOKIE));
    if (oidc === undefined || verify === undefined || login === undefined || typeof query.code !== 'string' || typeof query.state !== 'string' || !sameToken(query.state, login.state)) {
      ctx.audit(request, 'sign-in', undefined, { reason: 'no sign-in under way, or another state' }, { outcome: 'denied', code: 'GW_UNAUTHORIZED' });
      return ctx.html(reply, renderRedirectPage('/admin/?error=sign-in-failed'), 400);
    }
    const origin = ctx.ownOrigin(request);
    try {
      const access = await oidc.redeem({ code: query.code, verifier: login.verifier, nonce: login.nonce, redirectUri: `${origin}/admin/callback`, resource: `${origin}/admin` });
      const { principal, until } = await verify({ bearer: access, apiKey: undefined }, `${origin}/admin`);
      const isOperator = claim === undefined ? principal.scopes.has(scope) : (principal.claims?.[claim.name] ?? []).some((v) => claim.values.includes(v));
      if (!isOperator) {
        ctx.audit(request, 'sign-in', principal.id, { reason: 'not an operator' }, { outcome: 'denied', code: 'GW_INSUFFICIENT_SCOPE' });
        ctx.observer.refused('auth', 'GW_INSUFFICIENT_SCOPE');
        return ctx.html(reply, renderRedirectPage('/admin/?error=not-operator'), 403);
      }
      ctx.startSession(reply, principal.id, Math.min(Date.now() + settings.sessionTtlSec * 1000, until));
      ctx.audit(request, 'sign-in', principal.id, {});
    } catch (err) {
      // Why stays in the log line (the exchange's own words); the record says only that it failed.
      ctx.audit(request, 'sign-in', undefined, {}, { outcome: 'error', code: 'GW_UNAUTHORIZED' }, { reason: err instanceof Error ? err.message : 'unknown' });
      return ctx.html(reply, renderRedirectPage('/admin/?error=sign-in-failed'), 400);
    }
    // A page, not a redirect: the next request starts on this site, so the Strict cookie goes with it.
    return ctx.html(reply, renderRedirectPage('/admin/'));
  });
}
