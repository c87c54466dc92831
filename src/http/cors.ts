/**
 * CORS for browser-based MCP clients, off unless `gateway.corsOrigins` (or `--cors`) lists origins.
 * An allowed origin gets `Access-Control-Allow-Origin` on every answer, the MCP headers a browser
 * script must read exposed (`Mcp-Session-Id`, `MCP-Protocol-Version`, `WWW-Authenticate`), and
 * preflight OPTIONS answered. Headers are set on the raw response, since most MCP answers are
 * written by the session's sink after `reply.hijack()`.
 */
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors/gateway-error.ts';
import { replyError } from './reply-error.ts';

const EXPOSE = 'Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate';
const ALLOW_HEADERS = 'Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID';
const ALLOW_METHODS = 'GET, POST, DELETE, OPTIONS';
/** 10 minutes of cached preflight: Chromium's own cap is 2 hours, Firefox's a day. */
const MAX_AGE_SECONDS = '600';

export function corsAllows(origins: readonly string[], origin: string): boolean {
  return origins.includes('*') || origins.includes(origin);
}

/**
 * Adds the CORS headers, and answers preflights, in an encapsulated plugin. A preflight is answered
 * in the hook, before any route: `/mcp` paths route OPTIONS to their 405 answer, and `extraPaths`
 * (which have no OPTIONS route of their own) get one so that the hook runs for them too.
 */
export function registerCors(app: FastifyInstance, origins: readonly string[], extraPaths: readonly string[]): void {
  if (origins.length === 0) return;
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined || !corsAllows(origins, origin)) return;
    reply.raw.setHeader('Access-Control-Allow-Origin', origin);
    reply.raw.setHeader('Vary', 'Origin');
    reply.raw.setHeader('Access-Control-Expose-Headers', EXPOSE);
    if (request.method !== 'OPTIONS' || request.headers['access-control-request-method'] === undefined) return;
    reply.raw.setHeader('Access-Control-Allow-Methods', ALLOW_METHODS);
    reply.raw.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
    reply.raw.setHeader('Access-Control-Max-Age', MAX_AGE_SECONDS);
    return reply.code(204).send();
  });
  for (const path of extraPaths) {
    app.options(path, async (_request, reply) => replyError(reply.header('allow', 'GET, POST'), new GatewayError('GW_METHOD_NOT_ALLOWED')));
  }
}
