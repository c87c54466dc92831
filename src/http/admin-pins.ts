/**
 * The admin API of pinning (docs/governance.md): `GET /admin/pins` lists the changes waiting and
 * the pins per target; `POST /admin/pins/approve` with `{ "target", "kind"?, "name"?, "hash"? }`
 * approves the matching changes, writes the pins file and answers what it approved. Registered in
 * the operator's pages plugin (admin-routes.ts): the same Origin/Host checks and, with
 * gateway.auth, a credential with `gateway.admin.scope`. Approvals are audit lines naming who.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PIN_KIND_NAMES, type PinKind } from '../governance/canonical.ts';
import { FULL_HASH, type PinRegistry } from '../governance/pin-registry.ts';
import { adminPrincipalOf } from './admin-auth.ts';

const NO_STORE = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

const problem = (reply: FastifyReply, status: number, message: string) => reply.code(status).headers(NO_STORE).send({ error: message });

function selectorOf(body: unknown): { target: string; kind?: PinKind; key?: string; hash?: string } | string {
  let value: unknown = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return 'the body must be JSON';
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'expected an object with "target"';
  const { target, kind, name, hash } = value as Record<string, unknown>;
  if (typeof target !== 'string' || target === '') return '"target" must be a server name';
  if (kind !== undefined && !PIN_KIND_NAMES.includes(kind as PinKind)) return `"kind" must be one of ${PIN_KIND_NAMES.join(', ')}`;
  if (name !== undefined && typeof name !== 'string') return '"name" must be a string';
  // The whole hash: a server can grind a version whose hash starts like the one reviewed.
  if (hash !== undefined && (typeof hash !== 'string' || !FULL_HASH.test(hash.toLowerCase()))) {
    return '"hash" must be the whole hash (64 hex digits) that GET /admin/pins and GW_DEFINITION_CHANGED give, not a prefix';
  }
  const whole = typeof hash === 'string' ? { hash: hash.toLowerCase() } : {};
  return { target, ...(kind === undefined ? {} : { kind: kind as PinKind }), ...(name === undefined ? {} : { key: name as string }), ...whole };
}

/** Adds the two routes to `pages` (the operator's plugin). `pins`: the Runtime's registry, undefined while pinning is off. */
export function registerPinRoutes(pages: FastifyInstance, pins: () => PinRegistry | undefined): void {
  pages.get('/admin/pins', async (_request, reply) => {
    const registry = pins();
    if (registry === undefined) return reply.headers(NO_STORE).send({ enabled: false, pending: [], pins: {} });
    return reply.headers(NO_STORE).send({ enabled: true, file: registry.settings.file, pending: registry.pending(), pins: registry.counts() });
  });
  pages.post('/admin/pins/approve', async (request: FastifyRequest, reply) => {
    const registry = pins();
    if (registry === undefined) return problem(reply, 409, 'pinning is off: no target has gateway.pinning.mode or pinning set');
    const selector = selectorOf(request.body);
    if (typeof selector === 'string') return problem(reply, 400, selector);
    const approved = registry.approve(selector, `admin-api:${adminPrincipalOf(request) ?? 'loopback'}`);
    if (approved.length === 0) return problem(reply, 404, 'no pending change matches');
    return reply.headers(NO_STORE).send({ approved });
  });
}
