/**
 * The operator's pages (docs/operations.md): `/metrics` (Prometheus), `/status` with its live
 * updates at `/status/events`, and `/tools`. Protected by default: with gateway.auth they need a
 * credential with `gateway.admin.scope` (admin-auth.ts); without it they exist only while the
 * gateway listens on loopback, unless `gateway.admin.exposeWithoutAuth` says otherwise. The
 * Origin and Host checks of the MCP routes apply too (DNS rebinding).
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ADMIN_DEFAULTS, type GatewayConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { Observer } from '../log/observer.ts';
import type { MetricsRegistry } from '../observe/metrics-export.ts';
import type { StatusBoard } from '../observe/status.ts';
import type { PinRegistry } from '../governance/pin-registry.ts';
import { registerAdminAuth } from './admin-auth.ts';
import { registerPinRoutes } from './admin-pins.ts';
import { registerAuditRoutes } from './admin-audit.ts';
import type { AuditTrail } from '../observe/audit/setup.ts';
import { registerConsole } from './console-routes.ts';
import type { ConsoleSources } from './console-sources.ts';
import type { FlushBytes } from './byte-meter.ts';
import { isLoopbackAddress, type OriginPolicy } from './guards.ts';
import { STATUS_CSS, STATUS_JS } from './status-assets.ts';
import { createStatusEvents } from './status-events.ts';
import { renderStatusPage, renderToolsPage } from './status-page.ts';

export interface AdminRouteOptions {
  config: GatewayConfig;
  metrics: MetricsRegistry | undefined;
  status: StatusBoard | undefined;
  flushBytes: FlushBytes;
  observer: Observer;
  /** The Runtime's pins: `/admin/pins` (admin-pins.ts); absent: not served. */
  pins?: (() => PinRegistry | undefined) | undefined;
  /** The audit trail: `/admin/api/audit` (admin-audit.ts); absent: not served. */
  audit?: AuditTrail | undefined;
  origins: OriginPolicy;
  logger: Logger;
  /** What the console reads and changes (console-sources.ts); absent: no console. */
  console?: ConsoleSources | undefined;
  /** The console's cookie keys (the cluster's); absent: random per process. */
  consoleKeys?: readonly Buffer[] | undefined;
}

/** Scripts only from the gateway, nothing framed, nothing fetched elsewhere. */
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const send = (reply: FastifyReply, type: string, body: string) => reply.headers(PAGE_HEADERS).header('content-type', type).send(body);

/** Whether the pages are served at all, and why not (logged once at start). */
export function adminExposure(config: GatewayConfig): { served: boolean; why?: string } {
  const admin = config.admin ?? ADMIN_DEFAULTS;
  if (config.auth !== undefined || admin.exposeWithoutAuth || isLoopbackAddress(config.listen.host)) return { served: true };
  return { served: false, why: 'listening beyond loopback without gateway.auth; set gateway.auth (or gateway.admin.exposeWithoutAuth) to serve /metrics, /status and /tools' };
}

/**
 * The console changes things: without gateway.auth it is served only on a loopback listener,
 * whatever `exposeWithoutAuth` says, and only when `gateway.admin.console` turns it on.
 */
export function consoleExposure(config: GatewayConfig): { served: boolean; why?: string } {
  const settings = (config.admin ?? ADMIN_DEFAULTS).console;
  if (settings?.enabled !== true) return { served: false };
  if (config.auth === undefined && !isLoopbackAddress(config.listen.host)) return { served: false, why: 'the console needs gateway.auth (OpenID Connect sign-in) beyond a loopback listener' };
  if (config.auth !== undefined && settings.clientId === undefined) return { served: false, why: 'set gateway.admin.console.clientId (the console\'s OpenID client at the issuer)' };
  return { served: true };
}

export function registerAdminRoutes(app: FastifyInstance, options: AdminRouteOptions): void {
  const { config, metrics, status, logger } = options;
  const admin = config.admin ?? ADMIN_DEFAULTS;
  const exposure = adminExposure(config);
  const consoleServed = consoleExposure(config);
  if (consoleServed.why !== undefined) logger.warn({ fix: consoleServed.why }, 'console not served');
  if (consoleServed.served && exposure.served && options.console !== undefined && admin.console !== undefined) {
    registerConsole(app, { config, settings: admin.console, sources: options.console, origins: options.origins, logger, observer: options.observer, keys: options.consoleKeys ?? [randomBytes(32)] });
  }
  if (metrics === undefined && status === undefined && options.pins === undefined && options.audit === undefined) return;
  if (!exposure.served) {
    logger.warn({ fix: exposure.why }, 'operator pages not served');
    return;
  }
  const events = status === undefined ? undefined : createStatusEvents(status, admin.maxStatusStreams);
  void app.register(async (pages) => {
    pages.addHook('onRequest', async (request) => options.origins.check(request.headers));
    if (config.auth !== undefined) registerAdminAuth(pages, config.auth, options.origins, admin.scope, logger, options.observer);

    if (options.pins !== undefined) registerPinRoutes(pages, options.pins);
    if (options.audit !== undefined) registerAuditRoutes(pages, options.audit);
    if (metrics !== undefined) {
      pages.get('/metrics', async (_request, reply) => {
        options.flushBytes();
        const text = await metrics.render();
        return reply.header('cache-control', 'no-store').header('content-type', metrics.contentType).send(text);
      });
    }
    if (status === undefined || events === undefined) return;
    pages.get('/status', async (_request, reply) => send(reply, 'text/html; charset=utf-8', renderStatusPage(status.snapshot())));
    pages.get('/tools', async (_request, reply) => send(reply, 'text/html; charset=utf-8', renderToolsPage(status.snapshot())));
    pages.get('/status/style.css', async (_request, reply) => send(reply, 'text/css; charset=utf-8', STATUS_CSS));
    pages.get('/status/app.js', async (_request, reply) => send(reply, 'text/javascript; charset=utf-8', STATUS_JS));
    pages.get('/status/events', async (_request, reply) => {
      events.open(reply);
      return reply;
    });
  });
  // Before the server waits for its connections: these streams never end by themselves.
  app.addHook('preClose', async () => events?.close());
}
