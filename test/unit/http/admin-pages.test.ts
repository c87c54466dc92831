/**
 * The operator pages' rules that need no gateway: when they are served at all, which resource a
 * path is checked against, escaping, and the live-update stream's bound on a slow reader (a real
 * HTTP server and a client that stops reading).
 */
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyReply } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ADMIN_DEFAULTS } from '../../../src/config/types.ts';
import { adminResourceOf } from '../../../src/http/admin-auth.ts';
import { adminExposure } from '../../../src/http/admin-routes.ts';
import { createStatusEvents, MAX_UNSENT_BYTES } from '../../../src/http/status-events.ts';
import { escapeHtml, renderStatusPage } from '../../../src/http/status-page.ts';
import type { StatusBoard, StatusSnapshot } from '../../../src/observe/status.ts';
import { keyAuth } from '../../support/auth-server.ts';
import { buildConfig } from '../../support/gateway.ts';

const config = (host: string, extra: object = {}) => ({ ...buildConfig({ targets: { a: { command: 'x' } } }), listen: { host, port: 0 }, ...extra });

describe('admin pages exposure', () => {
  it('served on loopback, or with gateway.auth, or when exposeWithoutAuth says so; not otherwise', () => {
    expect(adminExposure(config('127.0.0.1')).served).toBe(true);
    expect(adminExposure(config('::1')).served).toBe(true);
    expect(adminExposure(config('0.0.0.0')).served).toBe(false);
    expect(adminExposure(config('192.0.2.10')).why).toMatch(/gateway\.auth/);
    expect(adminExposure(config('0.0.0.0', { auth: keyAuth({ ops: 'ops-key-0123456789abcdef' }) })).served).toBe(true);
    expect(adminExposure(config('0.0.0.0', { admin: { ...ADMIN_DEFAULTS, exposeWithoutAuth: true } })).served).toBe(true);
  });

  it('checks a credential against the page it is for', () => {
    expect(['/metrics', '/status', '/status/events?x=1', '/status/app.js', '/tools'].map(adminResourceOf)).toEqual(['/metrics', '/status', '/status', '/status', '/tools']);
  });
});

function snapshot(sessions: number): StatusSnapshot {
  return {
    at: 0,
    startedAt: 0,
    targets: [],
    errors: [],
    tools: {},
    sessions: Array.from({ length: sessions }, (_, i) => ({ id: `session-${i}`, endpoint: `target:<b>${i}</b>`, transport: 'websocket', era: '2025', principal: 'key:ops', ageSec: i, idleSec: 0 })),
  };
}

describe('status page rendering', () => {
  it('escapes whatever came from outside', () => {
    expect(escapeHtml(`<script>"a" & 'b'</script>`)).toBe('&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;');
    const html = renderStatusPage(snapshot(1));
    expect(html).toContain('target:&lt;b&gt;0&lt;/b&gt;');
    expect(html).not.toContain('<b>0</b>');
  });
});

describe('/status/events stream bounds', () => {
  it('drops a reader that stops reading once it holds more than MAX_UNSENT_BYTES, instead of buffering for it', async () => {
    let version = 0;
    const big = snapshot(4_000); // about 1 MB of fragments per event
    const board: StatusBoard = { observer: undefined as never, snapshot: () => big, get version() { return ++version; } };
    const events = createStatusEvents(board, 4, 5);
    const server = createServer((_req, res) => events.open({ hijack() {}, raw: res } as unknown as FastifyReply));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const response = await new Promise<IncomingMessage>((resolve) => httpRequest({ host: '127.0.0.1', port, path: '/' }, resolve).end());
    response.pause(); // a reader that never reads again
    expect(events.readers).toBe(1);
    // The client is told nothing it could read (it does not read): the gateway's side lets go.
    await expect.poll(() => events.readers, { timeout: 15_000 }).toBe(0);
    response.destroy();
    expect(MAX_UNSENT_BYTES).toBe(256 * 1024);
    events.close();
    await new Promise((resolve) => server.close(resolve));
  }, 20_000);
});
