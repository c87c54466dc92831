/**
 * `/connections`: a signed-in user's accounts at the servers with `oauth.perUser` (docs/upstreams.md,
 * "Each user's own account"): which are connected (the upstream account's subject, expiry; never a
 * token), a link to connect (a fresh consent URL) and a button to disconnect (revoked where the
 * server offers RFC 7009). Signed in as for the MCP routes: the same credential (API key or JWT
 * whose audience is `<origin>/connections`), any principal but the anonymous one, each seeing only
 * their own. Server-rendered, every value escaped, under a CSP that loads and runs nothing.
 * A cross-site form cannot carry the Authorization header, so the disconnect POST cannot be forged.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createAuthenticator } from '../auth/authenticator.ts';
import { AuthFailure } from '../auth/principal.ts';
import type { AuthConfig, GatewayConfig, RemoteTargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { GatewayUserOAuth } from '../upstream/oauth/setup.ts';
import { credentialsOf, originOf, refuse } from './auth-hook.ts';
import type { OriginPolicy } from './guards.ts';
import { escapeHtml, page } from './oauth-routes.ts';

const owners = new WeakMap<FastifyRequest, string>();

function perUserTargets(config: GatewayConfig): Map<string, RemoteTargetConfig> {
  const out = new Map<string, RemoteTargetConfig>();
  for (const target of config.targets.values()) if (target.type !== 'stdio' && target.oauth !== undefined) out.set(target.name, target);
  return out;
}

export function registerConnectionsPage(app: FastifyInstance, config: GatewayConfig, auth: AuthConfig, origins: OriginPolicy, oauth: GatewayUserOAuth, logger: Logger): void {
  const targets = perUserTargets(config);
  const authenticate = createAuthenticator(auth);
  const log = logger.child({ component: 'connections-page' });
  void app.register(async (scope) => {
    // The disconnect form posts an empty urlencoded body; nothing in it is read.
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, _body, done) => done(null, {}));
    scope.addHook('onRequest', async (request, reply) => {
      const credentials = credentialsOf(request, auth);
      try {
        const { principal } = await authenticate(credentials, `${originOf(request, auth, origins)}/connections`);
        if (principal.kind === 'anonymous') throw new AuthFailure(401, 'anonymous callers have no connections');
        owners.set(request, principal.id);
      } catch (err) {
        const failure = err instanceof AuthFailure ? err : new AuthFailure(401, 'verification failed');
        log.info({ status: failure.status, reason: failure.reason }, '/connections refused by authentication');
        return refuse(reply, failure, 'Bearer');
      }
    });

    scope.get('/connections', async (request, reply) => {
      const principal = owners.get(request)!;
      const held = new Map((await oauth.client.connections(principal)).map((c) => [c.target, c]));
      const rows = [...targets.keys()].map((name) => {
        const c = held.get(name);
        const path = `/connections/${encodeURIComponent(name)}`;
        if (c === undefined) return `<tr><td>${escapeHtml(name)}</td><td>not connected</td><td><a href="${escapeHtml(path)}/connect">Connect</a></td></tr>`;
        const expires = c.expiresAt === undefined ? '' : `, token until ${new Date(c.expiresAt).toISOString()}`;
        return `<tr><td>${escapeHtml(name)}</td><td>connected as ${escapeHtml(c.upstreamSubject ?? 'an account')}${escapeHtml(expires)}</td><td><form method="post" action="${escapeHtml(path)}/disconnect"><button>Disconnect</button></form></td></tr>`;
      });
      return page(reply, 200, 'Your connected accounts', `<table><tr><th>Server</th><th>Account</th><th></th></tr>${rows.join('')}</table>`);
    });

    scope.get<{ Params: { target: string } }>('/connections/:target/connect', async (request, reply) => {
      const target = targets.get(request.params.target);
      if (target === undefined) return page(reply, 404, 'Not found', '<p>No such server.</p>');
      const flow = await oauth.client.consentUrl(target, { id: owners.get(request)! });
      return reply.code(302).header('cache-control', 'no-store').header('location', flow.url).send();
    });

    scope.post<{ Params: { target: string } }>('/connections/:target/disconnect', async (request, reply) => {
      const target = targets.get(request.params.target);
      if (target === undefined) return page(reply, 404, 'Not found', '<p>No such server.</p>');
      await oauth.client.disconnect(owners.get(request)!, target);
      return reply.code(303).header('location', '/connections').send();
    });
  });
}
