/**
 * The console's JSON API under `/admin/api` (docs/operations.md, "The console"): what the console
 * page shows and does, and what scripts use with a bearer credential that has the admin scope.
 * Who may call it and the CSRF check of changes are console-routes.ts's; every change here is an
 * audit line naming who made it.
 *
 * Sessions are named by a handle (a keyed hash of the id), never by the id itself: a whole session
 * id lets whoever holds it use the session without gateway.auth, and the page needs none.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createAuthenticator } from '../auth/authenticator.ts';
import { AuthFailure } from '../auth/principal.ts';
import { isConfigError } from '../config/config-error.ts';
import type { GatewayConfig } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { PIN_KIND_NAMES, type PinKind } from '../governance/canonical.ts';
import type { Logger } from '../log/logger.ts';
import { eraOf } from '../observe/metrics.ts';
import { claimNamesOf, type PolicySubject } from '../router/policy.ts';
import { adminPrincipalOf } from './admin-auth.ts';
import { adminEntryOf, type AdminDetails } from './console-audit.ts';
import type { ConsoleSources } from './console-sources.ts';

const NO_STORE = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
const PAGE = 50;
const MAX_PAGE = 500;
const HISTORY = 200;

export interface ConsoleApiOptions {
  readonly sources: ConsoleSources;
  readonly config: GatewayConfig;
  readonly logger: Logger;
  /** The gateway's own origin for `request` (the resource a pasted token must name). */
  readonly originOf: (request: FastifyRequest) => string;
}

/** One console decision on a pending change (this replica's, since start; the audit log keeps them all). */
interface Decision {
  readonly at: string;
  readonly by: string;
  readonly decision: 'approved' | 'rejected';
  readonly target: string;
  readonly kind: string;
  readonly key: string;
  readonly hash: string;
}

const bad = (message: string) => new GatewayError('GW_INVALID_PARAMS', `Invalid params: ${message}`);
const send = (reply: FastifyReply, body: unknown) => reply.headers(NO_STORE).send(body);

function bodyOf(request: FastifyRequest): Record<string, unknown> {
  let value: unknown = request.body;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new GatewayError('GW_PARSE_ERROR', 'Parse error: the body must be JSON');
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('expected a JSON object');
  return value as Record<string, unknown>;
}

const text = (query: unknown, name: string): string | undefined => {
  const value = (query as Record<string, unknown>)[name];
  return typeof value === 'string' && value !== '' ? value.slice(0, 512) : undefined;
};
const count = (query: unknown, name: string, fallback: number, max: number): number => {
  const value = Number(text(query, name) ?? fallback);
  if (!Number.isInteger(value) || value < 0) throw bad(`"${name}" must be a whole number`);
  return Math.min(value, max);
};

/** A pending change named exactly: target, kind, name and the full 64-digit hash. */
function changeOf(body: Record<string, unknown>): { target: string; kind: PinKind; key: string; hash: string } {
  const { target, kind, name, hash } = body;
  if (typeof target !== 'string' || target === '') throw bad('"target" must be a server name');
  if (!PIN_KIND_NAMES.includes(kind as PinKind)) throw bad(`"kind" must be one of ${PIN_KIND_NAMES.join(', ')}`);
  if (typeof name !== 'string' || name === '') throw bad('"name" must be the item\'s name');
  if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) throw bad('"hash" must be the full hash: 64 lowercase hex digits');
  return { target, kind: kind as PinKind, key: name, hash };
}

interface Shared {
  readonly sources: ConsoleSources;
  readonly who: (request: FastifyRequest) => string;
  /** An audit record (and a log line) for a change or a sensitive read, naming who did it; `failed`: the GW_* code when it found nothing to act on. */
  readonly record: (request: FastifyRequest, action: string, fields: AdminDetails, failed?: string) => void;
}

const OUTCOMES = new Set(['ok', 'error', 'denied', 'cancelled']);

export function registerConsoleApi(api: FastifyInstance, options: ConsoleApiOptions): void {
  const audit = options.logger.child({ audit: true, component: 'console' });
  const who = (request: FastifyRequest) => adminPrincipalOf(request) ?? 'local';
  const record: Shared['record'] = (request, action, fields, failed) => {
    audit.info({ event: 'console', action, by: who(request), ...fields }, 'audit');
    options.sources.record(adminEntryOf(request, adminPrincipalOf(request), action, fields, failed === undefined ? undefined : { outcome: 'error', code: failed }));
  };
  const shared: Shared = { sources: options.sources, who, record };
  const { sources } = options;
  api.get('/api/servers', async (_request, reply) => send(reply, { servers: sources.servers() }));
  registerSessionRoutes(api, shared);
  registerServerRoutes(api, shared);
  registerPinRoutes(api, shared);
  registerAccessRoute(api, shared, options);
  api.get('/api/calls', async (request, reply) => {
    const outcome = text(request.query, 'outcome');
    if (outcome !== undefined && !OUTCOMES.has(outcome)) throw bad('"outcome" must be ok, error, denied or cancelled');
    const filter = { principal: text(request.query, 'principal'), server: text(request.query, 'server'), tool: text(request.query, 'tool'), outcome: outcome as 'ok' | undefined, limit: Math.max(1, count(request.query, 'limit', 200, 1_000)) };
    return send(reply, { calls: sources.audit(filter) });
  });
  registerAccountRoutes(api, shared);
}

function registerAccountRoutes(api: FastifyInstance, { sources, record }: Shared): void {
  api.get('/api/accounts', async (_request, reply) => {
    if (sources.accounts === undefined) return send(reply, { provider: false, accounts: [] });
    return send(reply, { provider: true, accounts: await sources.accounts() });
  });
  // Revokes at the upstream's authorization server where it offers RFC 7009, and forgets the tokens.
  api.post('/api/accounts/disconnect', async (request, reply) => {
    if (sources.disconnect === undefined) throw new GatewayError('GW_ROUTE_NOT_FOUND', 'Not Found: this gateway has no upstream OAuth provider');
    const { principal, server } = bodyOf(request);
    if (typeof principal !== 'string' || principal === '') throw bad('"principal" must be the principal id of the account');
    if (typeof server !== 'string' || server === '') throw bad('"server" must be a server name');
    const details = { target: server.slice(0, 128), account: principal.slice(0, 512) };
    const disconnected = await sources.disconnect(principal, server);
    record(request, 'disconnect-account', details, disconnected ? undefined : 'GW_ROUTE_NOT_FOUND');
    if (!disconnected) throw new GatewayError('GW_ROUTE_NOT_FOUND', 'Not Found: no such account is connected');
    return send(reply, { disconnected: true, principal, server });
  });
}

function registerSessionRoutes(api: FastifyInstance, { sources, who, record }: Shared): void {
  const handleKey = randomBytes(32);
  const handleOf = (id: string) => createHmac('sha256', handleKey).update(id).digest('base64url').slice(0, 22);
  api.get('/api/sessions', async (request, reply) => {
    const offset = count(request.query, 'offset', 0, Number.MAX_SAFE_INTEGER);
    const limit = count(request.query, 'limit', PAGE, MAX_PAGE);
    const principal = text(request.query, 'principal');
    const server = text(request.query, 'server');
    const now = Date.now();
    const items = [];
    let total = 0;
    for (const s of sources.sessions()) {
      if (principal !== undefined && s.principal !== principal) continue;
      if (server !== undefined && s.endpoint !== `target:${server}` && !s.usage.children.includes(server)) continue;
      total++;
      if (total <= offset || items.length >= limit) continue;
      items.push({ handle: handleOf(s.id), id: s.id.slice(0, 8), principal: s.principal, era: eraOf(s.protocolVersion), transport: s.transport, endpoint: s.endpoint, servers: [...new Set(s.usage.children)], ageSec: Math.round((now - s.openedAt) / 1000), idleSec: Math.round((now - s.lastActivity) / 1000), inFlight: s.busy });
    }
    return send(reply, { total, offset, limit, sessions: items });
  });
  api.post('/api/sessions/end', async (request, reply) => {
    const { handle } = bodyOf(request);
    if (typeof handle !== 'string') throw bad('"handle" must be a session handle');
    const session = [...sources.sessions()].find((s) => handleOf(s.id) === handle);
    if (session === undefined) throw new GatewayError('GW_SESSION_NOT_FOUND', 'Session not found');
    record(request, 'end-session', { session: session.id.slice(0, 8), principal: session.principal, endpoint: session.endpoint });
    await session.end(`ended from the console by ${who(request)}`);
    return send(reply, { ended: handle });
  });
}

function registerPinRoutes(api: FastifyInstance, { sources, who, record }: Shared): void {
  const history: Decision[] = [];
  api.get('/api/pins', async (_request, reply) => {
    const registry = sources.pins();
    if (registry === undefined) return send(reply, { enabled: false, pending: [], history });
    const pending = registry.pending().map((c) => {
      const decided = history.find((d) => d.hash === c.hash && d.target === c.target && d.key === c.key);
      return { ...c, before: registry.pinned(c.target, c.kind, c.key)?.definition ?? null, after: c.definition, rejected: decided?.decision === 'rejected' ? decided : undefined };
    });
    return send(reply, { enabled: true, pending, history });
  });
  for (const decision of ['approve', 'reject'] as const) {
    api.post(`/api/pins/${decision}`, async (request, reply) => {
      const registry = sources.pins();
      if (registry === undefined) throw new GatewayError('GW_ROUTE_NOT_FOUND', 'Not Found: pinning is off');
      const change = changeOf(bodyOf(request));
      const waiting = registry.pending().find((c) => c.target === change.target && c.kind === change.kind && c.key === change.key && c.hash === change.hash);
      if (waiting === undefined) throw new GatewayError('GW_ROUTE_NOT_FOUND', 'Not Found: no pending change has exactly this target, kind, name and hash');
      const by = who(request);
      if (decision === 'approve') registry.approve(change, `console:${by}`);
      const entry: Decision = { at: new Date().toISOString(), by, decision: decision === 'approve' ? 'approved' : 'rejected', target: change.target, kind: change.kind, key: change.key, hash: change.hash };
      history.unshift(entry);
      history.length = Math.min(history.length, HISTORY);
      record(request, `${decision}-pin`, { target: change.target, kind: change.kind, key: change.key, hash: change.hash });
      return send(reply, entry);
    });
  }
}

function registerAccessRoute(api: FastifyInstance, { sources, record }: Shared, { config, originOf }: ConsoleApiOptions): void {
  const authenticate = config.auth === undefined ? undefined : createAuthenticator(config.auth, claimNamesOf(config.policy?.rules));
  api.post('/api/access', async (request, reply) => {
    const body = bodyOf(request);
    let caller: PolicySubject | undefined;
    if (typeof body.token === 'string' && body.token !== '') {
      if (authenticate === undefined) throw bad('without gateway.auth there are no tokens to verify');
      const path = typeof body.resource === 'string' && /^\/[\w\-./]*$/.test(body.resource) ? body.resource : '/mcp';
      try {
        caller = (await authenticate({ bearer: body.token, apiKey: config.auth?.apiKeyHeader === 'authorization' ? undefined : body.token }, originOf(request) + path)).principal;
      } catch (err) {
        if (!(err instanceof AuthFailure)) throw err;
        throw new GatewayError('GW_INVALID_PARAMS', `Invalid params: the token was not accepted (${err.status})`);
      }
    } else if (typeof body.principal === 'string' && body.principal !== '') {
      const scopes = Array.isArray(body.scopes) ? body.scopes.filter((s): s is string => typeof s === 'string') : [];
      caller = { id: body.principal.slice(0, 512), scopes: new Set(scopes) };
    } else if (config.auth !== undefined) throw bad('give "principal" (with "scopes") or "token"');
    record(request, 'read-access', { principal: caller?.id ?? null });
    return send(reply, { principal: caller?.id ?? null, scopes: caller === undefined ? [] : [...caller.scopes], endpoints: sources.reach(caller) });
  });
}

function registerServerRoutes(api: FastifyInstance, { sources, who, record }: Shared): void {
  api.post('/api/servers/restart', async (request, reply) => {
    const { name } = bodyOf(request);
    if (typeof name !== 'string' || name === '') throw bad('"name" must be a server name');
    record(request, 'restart-server', { target: name });
    const ended = await sources.restart(name, `server restarted from the console by ${who(request)}`);
    if (ended === undefined) throw new GatewayError('GW_ROUTE_NOT_FOUND', `Not Found: server "${name.slice(0, 128)}"`);
    return send(reply, { restarted: name, sessionsEnded: ended });
  });
  const load = async () => {
    const reloads = sources.reloads;
    if (reloads === undefined) throw new GatewayError('GW_ROUTE_NOT_FOUND', 'Not Found: this gateway was started without a config file to read again');
    try {
      return { reloads, next: await reloads.load() };
    } catch (err) {
      if (!isConfigError(err)) throw err;
      return { reloads, problems: err.message };
    }
  };
  api.post('/api/config/check', async (_request, reply) => {
    const { reloads, next, problems } = await load();
    return send(reply, next === undefined ? { valid: false, problems } : { valid: true, diff: reloads.diff(next) });
  });
  api.post('/api/config/reload', async (request, reply) => {
    const { reloads, next, problems } = await load();
    if (next === undefined) {
      record(request, 'reload-config', { outcome: 'invalid' });
      return send(reply, { valid: false, reloaded: false, problems });
    }
    const diff = reloads.diff(next);
    reloads.apply(next);
    record(request, 'reload-config', { outcome: 'reloaded', added: diff.added, removed: diff.removed, changed: diff.changed.map((c) => c.name), sections: diff.sections });
    return send(reply, { valid: true, reloaded: true, diff });
  });
}
