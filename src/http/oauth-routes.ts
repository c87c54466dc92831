/**
 * The routes of the gateway as each user's OAuth client (docs/upstreams.md, "Each user's own
 * account"): `/oauth/callback`, where the user's browser comes back from the upstream's
 * authorization server (the `state` decides whose connection it is, never the browser), and
 * `/oauth/client.json`, the gateway's Client ID Metadata Document. Pages are server-rendered text,
 * every value escaped, under a CSP that allows nothing to load or run.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { isGatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import { CALLBACK_PATH, CLIENT_DOCUMENT_PATH, clientDocument } from '../upstream/oauth/registration.ts';
import type { GatewayUserOAuth } from '../upstream/oauth/setup.ts';

export const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
  return reply.code(status).headers(PAGE_HEADERS).header('content-type', 'text/html; charset=utf-8').send(html);
}

export function registerOAuthRoutes(app: FastifyInstance, oauth: GatewayUserOAuth, logger: Logger): void {
  const log = logger.child({ component: 'user-oauth' });
  app.get(CLIENT_DOCUMENT_PATH, async (_request, reply) => reply.header('cache-control', 'max-age=300').send(clientDocument(oauth.baseUrl(), oauth.clientName)));

  app.get(CALLBACK_PATH, async (request, reply) => {
    const query = new URLSearchParams(request.url.split('?')[1] ?? '');
    try {
      const { target } = await oauth.client.redeem(query);
      return page(reply, 200, 'Account connected', `<p>Your account at <b>${escapeHtml(target)}</b> is connected. You can close this window and go back to your client.</p>`);
    } catch (err) {
      const known = isGatewayError(err) ? err : undefined;
      // The reason only: never the query (it holds the code) nor a server's description.
      log.warn({ err: { code: known?.code ?? 'GW_INTERNAL', reason: known?.details.reason, target: known?.details.target, oauthError: known?.details.oauthError } }, 'an OAuth callback was refused');
      const status = known?.details.reason === 'unknown state' ? 400 : 502;
      return page(reply, status, 'Not connected', `<p>${escapeHtml(known?.message ?? 'The account could not be connected.')}</p>`);
    }
  });
}
