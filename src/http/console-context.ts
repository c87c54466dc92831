/**
 * What the console's modules share (console-routes.ts builds it once): its settings, the sealer of
 * its cookies, how a cookie is written (`HttpOnly`, `Secure` beyond loopback), the gateway's own
 * origin for a request, the audit logger, and its response headers.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ADMIN_DEFAULTS, type ConsoleConfig, type GatewayConfig } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { AuditEntry } from '../log/audit-record.ts';
import type { Logger } from '../log/logger.ts';
import type { Observer } from '../log/observer.ts';
import { adminEntryOf, type AdminDetails, type AdminEnd } from './console-audit.ts';
import { createSealer, randomToken, type ConsoleSession, type Sealer } from './console-seal.ts';
import { isLoopbackAddress, type OriginPolicy } from './guards.ts';

export const SESSION_COOKIE = 'switchboard_console';
export const LOGIN_COOKIE = 'switchboard_console_login';

/** Scripts, styles and requests from the gateway only; no inline script; forms post only here. */
export const HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
};

export interface ConsoleContext {
  readonly config: GatewayConfig;
  readonly settings: ConsoleConfig;
  /** gateway.admin.scope. */
  readonly scope: string;
  readonly sealer: Sealer;
  /** Audit lines (`audit: true`, component `console`). */
  readonly log: Logger;
  readonly observer: Observer;
  /** The console sessions the guard opened, per request. */
  readonly sessions: WeakMap<FastifyRequest, ConsoleSession>;
  cookie(name: string, value: string, path: string, sameSite: 'Strict' | 'Lax', maxAgeSec: number): string;
  /** gateway.auth.publicUrl, else the origin the request's (checked) Host stands for. */
  ownOrigin(request: FastifyRequest): string;
  html(reply: FastifyReply, body: string, status?: number): FastifyReply;
  /**
   * An action outside the API (sign-in, sign-out, a refused change): a log line and an admin
   * audit record (console-audit.ts), as the API's own actions are.
   */
  audit(request: FastifyRequest, action: string, by: string | undefined, fields: AdminDetails, end?: AdminEnd, logOnly?: Record<string, unknown>): void;
  /** Sets a new session cookie (and clears the login cookie). */
  startSession(reply: FastifyReply, operator: string, until: number): void;
  /** Sessions signed out before their expiry: their cookies, replayed, open nothing. */
  readonly signedOut: SignedOut;
}

export interface SignedOut {
  add(session: ConsoleSession): void;
  has(session: ConsoleSession): boolean;
}

/**
 * The sealed cookie carries the whole session, so signing out would only ask the browser to forget
 * it; a copy (a shared machine, a proxy's log) would open the console until its expiry. Each
 * signed-out session is remembered by its CSRF token (random, one per session) until its own
 * expiry, at most `max` at once: past that the one expiring first is forgotten (OWASP session
 * management: invalidate on logout). Per process: a replica learns of another's sign-outs only
 * as their cookies expire (docs/operations.md, "The session").
 */
export function createSignedOut(max = 10_000): SignedOut {
  const until = new Map<string, number>();
  const prune = () => {
    const now = Date.now();
    for (const [token, at] of until) if (at <= now) until.delete(token);
    while (until.size >= max) {
      let first: [string, number] | undefined;
      for (const entry of until) if (first === undefined || entry[1] < first[1]) first = entry;
      if (first === undefined) break;
      until.delete(first[0]);
    }
  };
  return {
    add(session) {
      prune();
      until.set(session.csrf, session.until);
    },
    has: (session) => until.has(session.csrf),
  };
}

export function createConsoleContext(config: GatewayConfig, settings: ConsoleConfig, keys: readonly Buffer[], origins: OriginPolicy, logger: Logger, observer: Observer, record: (entry: AuditEntry) => void): ConsoleContext {
  const log = logger.child({ audit: true, component: 'console' });
  const auth = config.auth;
  const secure = !isLoopbackAddress(config.listen.host) || auth?.publicUrl?.startsWith('https:') === true;
  const sealer = createSealer(keys);
  const cookie = (name: string, value: string, path: string, sameSite: 'Strict' | 'Lax', maxAgeSec: number) =>
    `${name}=${value}; Path=${path}; HttpOnly; SameSite=${sameSite}; Max-Age=${Math.max(0, maxAgeSec)}${secure ? '; Secure' : ''}`;
  return {
    config,
    settings,
    scope: (config.admin ?? ADMIN_DEFAULTS).scope,
    sealer,
    log,
    observer,
    sessions: new WeakMap(),
    signedOut: createSignedOut(),
    cookie,
    ownOrigin(request) {
      const origin = auth?.publicUrl ?? origins.originOf(request.headers.host);
      if (origin === undefined) throw new GatewayError('GW_FORBIDDEN_HOST');
      return origin;
    },
    html: (reply, body, status = 200) => reply.code(status).headers(HEADERS).header('content-type', 'text/html; charset=utf-8').send(body),
    audit(request, action, by, fields, end, logOnly) {
      const line = { event: 'console', action, by, ...fields, ...(end === undefined ? {} : { outcome: end.outcome, code: end.code }), ...logOnly };
      if (end === undefined) log.info(line, 'audit');
      else log.warn(line, 'audit');
      record(adminEntryOf(request, by === 'local' ? undefined : by, action, fields, end));
    },
    startSession(reply, operator, until) {
      const value = sealer.seal('session', { operator, csrf: randomToken() }, until);
      reply.header('set-cookie', [cookie(SESSION_COOKIE, value, '/admin', 'Strict', Math.floor((until - Date.now()) / 1000)), cookie(LOGIN_COOKIE, '', '/admin/callback', 'Lax', 0)]);
    },
  };
}
