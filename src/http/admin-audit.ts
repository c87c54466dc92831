/**
 * The audit API of the operator's pages (docs/operations.md, "Audit"):
 * `GET /admin/api/audit?principal=&server=&tool=&outcome=&limit=` answers this replica's recent
 * audit records (observe/audit/ring.ts), newest first, filtered by exact principal id, server,
 * tool (or prompt, or URI) and outcome. Registered in the operator's plugin (admin-routes.ts):
 * the same Origin/Host checks and, with gateway.auth, a credential with `gateway.admin.scope`.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AuditQuery } from '../observe/audit/ring.ts';
import { MAX_QUERY_LIMIT } from '../observe/audit/ring.ts';
import type { AuditTrail } from '../observe/audit/setup.ts';

const NO_STORE = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
const OUTCOMES = ['ok', 'error', 'cancelled', 'denied'] as const;
/** A filter value longer than any name or URI the gateway serves is a mistake, not a query. */
const MAX_FILTER = 2048;

const problem = (reply: FastifyReply, message: string) => reply.code(400).headers(NO_STORE).send({ error: message });

/** The query from the URL's parameters, or what is wrong with them. */
function queryOf(params: Record<string, unknown>): AuditQuery | string {
  const known = new Set(['principal', 'server', 'tool', 'outcome', 'limit']);
  for (const [key, value] of Object.entries(params)) {
    if (!known.has(key)) return `unknown parameter "${key}": use principal, server, tool, outcome or limit`;
    if (typeof value !== 'string') return `"${key}" may be given once`;
    if (value.length > MAX_FILTER) return `"${key}" is longer than ${MAX_FILTER} characters`;
  }
  const text = (key: string) => (params[key] === '' ? undefined : (params[key] as string | undefined));
  const outcome = text('outcome');
  if (outcome !== undefined && !OUTCOMES.includes(outcome as (typeof OUTCOMES)[number])) return `"outcome" must be one of ${OUTCOMES.join(', ')}`;
  const limit = text('limit');
  if (limit !== undefined && !(/^\d{1,7}$/.test(limit) && Number(limit) >= 1 && Number(limit) <= MAX_QUERY_LIMIT)) return `"limit" must be an integer from 1 to ${MAX_QUERY_LIMIT}`;
  return {
    principal: text('principal'),
    server: text('server'),
    tool: text('tool'),
    outcome: outcome as AuditQuery['outcome'],
    limit: limit === undefined ? undefined : Number(limit),
  };
}

export function registerAuditRoutes(pages: FastifyInstance, trail: AuditTrail): void {
  pages.get('/admin/api/audit', async (request, reply) => {
    const query = queryOf(request.query as Record<string, unknown>);
    if (typeof query === 'string') return problem(reply, query);
    return reply.headers(NO_STORE).send({ chain: trail.chain, records: trail.query(query) });
  });
}
