/**
 * `gateway.registry.serve`: the servers this gateway fronts, in the MCP registry's API shape
 * (`GET /v0.1/servers`, `GET /v0.1/servers/<name>/versions/<version>`), so a client or an IDE that
 * reads a registry finds them. Each is a remote (`streamable-http` and `sse`) at the gateway's own
 * `/servers/<name>/...` paths. Registered behind the same Origin/Host checks and authentication as
 * the MCP routes, and each caller sees only the servers the policy lets it reach: a denied server
 * is not listed, and asked for by name it is the same 404 as an unknown one. No child is started
 * to answer.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GatewayConfig } from '../config/types.ts';
import type { EndpointTable } from '../session/endpoint-table.ts';

/** The server.json revision the answers follow. */
const SCHEMA = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';
/** The gateway serves each server as it runs now: one version, always the latest. */
const VERSION = '1.0.0';
/** 30 a page unless asked; at most 100, as the registry's own API. */
const DEFAULT_LIMIT = 30;
const MAX_LIMIT = 100;

interface Query {
  search?: string;
  limit?: string;
  cursor?: string;
}

/** `baseUrl`: the gateway's own origin for this request (its public URL, or the Host that passed the checks). */
export function registerRegistryRoute(app: FastifyInstance, config: GatewayConfig, table: EndpointTable, baseUrl: (request: FastifyRequest) => string): void {
  const namespace = config.registry?.namespace ?? 'local.switchboard';
  const visible = (request: FastifyRequest): string[] => table.serverNames().filter((name) => table.server(name, request.principal) !== undefined);
  const describe = (request: FastifyRequest, name: string) => toServerResponse(namespace, name, baseUrl(request));

  app.get('/v0.1/servers', async (request, reply) => {
    const query = request.query as Query;
    const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) return reply.code(400).send({ error: `limit: expected a whole number from 1 to ${MAX_LIMIT}` });
    const search = query.search ?? '';
    const matching = visible(request).filter((name) => `${namespace}/${name}`.includes(search));
    const start = query.cursor === undefined ? 0 : matching.indexOf(query.cursor) + 1;
    const page = matching.slice(start, start + limit);
    const more = start + limit < matching.length;
    return reply.send({
      servers: page.map((name) => describe(request, name)),
      metadata: { count: page.length, ...(more ? { nextCursor: page.at(-1) } : {}) },
    });
  });

  app.get('/v0.1/servers/:name/versions/:version', async (request, reply) => {
    const { name, version } = request.params as { name: string; version: string };
    const local = name.startsWith(`${namespace}/`) ? name.slice(namespace.length + 1) : undefined;
    const found = local !== undefined && (version === 'latest' || version === VERSION) && visible(request).includes(local);
    if (!found) return reply.code(404).send({ error: 'Server not found' });
    return reply.send(describe(request, local));
  });
}

function toServerResponse(namespace: string, name: string, baseUrl: string) {
  const at = (path: string) => new URL(`/servers/${encodeURIComponent(name)}/${path}`, baseUrl).href;
  return {
    server: {
      $schema: SCHEMA,
      name: `${namespace}/${name}`,
      description: `${name}, served through the Switchboard MCP gateway`.slice(0, 100),
      version: VERSION,
      remotes: [
        { type: 'streamable-http', url: at('mcp') },
        { type: 'sse', url: at('sse') },
      ],
    },
    _meta: { 'io.modelcontextprotocol.registry/official': { status: 'active', isLatest: true } },
  };
}
