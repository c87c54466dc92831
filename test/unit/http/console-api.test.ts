/**
 * The console's sessions API over 1,000 sessions (http/console-api.ts on a bare fastify, the
 * sources given): answers a page at a time (50 by default, 500 at most), counts and filters
 * them all, names each by a handle (never its id), and ends the one a handle names.
 */
import { fastify } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGatewayError } from '../../../src/errors/gateway-error.ts';
import { replyError } from '../../../src/http/reply-error.ts';
import { registerConsoleApi } from '../../../src/http/console-api.ts';
import type { ConsoleSources } from '../../../src/http/console-sources.ts';
import type { AuditEntry } from '../../../src/log/audit-record.ts';
import type { SessionCore } from '../../../src/session/session.ts';
import { createTestLogger } from '../../support/gateway.ts';
import type { GatewayConfig } from '../../../src/config/types.ts';

const ended: string[] = [];
const sessions = Array.from({ length: 1_000 }, (_, i) => ({
  id: `session-${String(i).padStart(4, '0')}-0123456789abcdef`,
  principal: i % 4 === 0 ? 'key:alice' : 'key:bob',
  endpoint: i % 2 === 0 ? 'target:files' : 'root',
  transport: 'streamable-http',
  protocolVersion: '2025-06-18',
  openedAt: Date.now() - i * 1000,
  lastActivity: Date.now(),
  busy: i % 10 === 0,
  usage: { initializing: false, streamed: false, listening: false, children: i % 2 === 0 ? ['files'] : [] },
  end: async (reason: string) => void ended.push(`${i}:${reason}`),
}));
const recorded: AuditEntry[] = [];
const sources: ConsoleSources = {
  servers: () => [],
  restart: async () => undefined,
  reloads: undefined,
  sessions: () => sessions as unknown as SessionCore[],
  pins: () => undefined,
  reach: () => [],
  audit: () => [],
  record: (entry) => void recorded.push(entry),
};
const app = fastify();
app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
// As the gateway's own server answers a GatewayError (http/server.ts).
app.setErrorHandler((err, _request, reply) => replyError(reply, toGatewayError(err)));

beforeAll(async () => {
  await app.register(async (c) => registerConsoleApi(c, { sources, config: { targets: new Map() } as unknown as GatewayConfig, logger: createTestLogger('silent', undefined), originOf: () => 'http://127.0.0.1' }), { prefix: '/admin' });
  await app.ready();
});
afterAll(() => app.close());

describe('sessions API with 1,000 sessions', () => {
  it('pages through them, 50 by default and 500 at most, counting every match', async () => {
    const first = (await app.inject('/admin/api/sessions')).json();
    expect(first).toMatchObject({ total: 1_000, offset: 0, limit: 50 });
    expect(first.sessions).toHaveLength(50);
    expect(JSON.stringify(first)).not.toContain('0123456789abcdef');
    const last = (await app.inject('/admin/api/sessions?offset=950&limit=9999')).json();
    expect(last).toMatchObject({ total: 1_000, offset: 950, limit: 500 });
    expect(last.sessions).toHaveLength(50);
    const alice = (await app.inject('/admin/api/sessions?principal=key:alice&server=files&limit=500')).json();
    expect(alice.total).toBe(250);
    expect(alice.sessions.every((s: { principal: string }) => s.principal === 'key:alice')).toBe(true);
    expect((await app.inject('/admin/api/sessions?offset=-1')).statusCode).toBe(400);
  });

  it('ends the session a handle names, and no other', async () => {
    const page = (await app.inject('/admin/api/sessions?offset=700&limit=1')).json();
    const res = await app.inject({ method: 'POST', url: '/admin/api/sessions/end', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ handle: page.sessions[0].handle }) });
    expect(res.statusCode).toBe(200);
    expect(ended).toEqual([expect.stringMatching(/^700:ended from the console by local$/)]);
    // The action is an admin audit record: the local operator (no gateway.auth), the session's first 8 characters.
    expect(recorded.at(-1)).toMatchObject({ method: 'admin/end-session', endpoint: 'admin', principal: null, credential: 'none', era: null, admin: { action: 'end-session', details: { principal: 'key:alice' } } });
    const unknown = await app.inject({ method: 'POST', url: '/admin/api/sessions/end', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ handle: 'session-0700' }) });
    expect(unknown.statusCode).toBe(404);
  });
});
