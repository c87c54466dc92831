/**
 * Notifications of aggregate members on their way to the downstream: coalesced list_changed, URIs
 * and logger names in their target's context. Real members (not started: notifications need only
 * their identity), a real stream set, and an in-memory sink standing in for the HTTP response.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.ts';
import { NOOP_OBSERVER } from '../../../src/log/observer.ts';
import { PASS_ALL } from '../../../src/router/glob.ts';
import { createNameTable } from '../../../src/router/name-table.ts';
import { createMember, type Member } from '../../../src/session/member.ts';
import { createServerMessages } from '../../../src/session/server-messages.ts';
import { META_INPUT_KEY } from '../../../src/jsonrpc/modern.ts';
import { createEventLog } from '../../../src/session/event-log.ts';
import { createStreamSet, type ResponseSink } from '../../../src/session/streams.ts';
import { createAgentPool } from '../../../src/transport/http-pool.ts';
import { createUpstreamFactory } from '../../../src/upstream/open.ts';
import { createSharedPools } from '../../../src/upstream/shared-pool.ts';
import { stdioTarget } from '../../support/gateway.ts';

const logger = createLogger({ level: 'silent' });
const limits = { maxBodyBytes: 1, maxSessions: 1, replayEvents: 64, replayBytes: 1 << 20, pendingServerMessages: 64, requestTimeoutMs: 1_000, maxConnections: 1, maxConnectionsPerAddress: 1 };

function member(name: string): Member {
  return createMember({
    target: stdioTarget(name, { command: 'never-started' }),
    exposure: { prefix: name, tools: PASS_ALL, prompts: PASS_ALL, resources: PASS_ALL },
    eager: false,
    logger,
    hooks: { onrequest() {}, onnotification() {}, onexit() {}, onready() {} },
    initParams: () => ({}),
    logLevel: () => undefined,
    poolLogger: logger,
    services: { open: createUpstreamFactory(createAgentPool(), createSharedPools()), observer: NOOP_OBSERVER, breakers: undefined, spares: undefined },
    restart: 'on-use',
  });
}

/** A standalone GET stream whose events resolve waiters as they arrive. */
function setup(live: () => boolean = () => true, held = false) {
  const streams = createStreamSet({ log: createEventLog(64, 1 << 20), logger, priming: () => false, keepFinished: 4 });
  const received: Array<{ method: string; params?: Record<string, unknown> }> = [];
  let waiter: (() => void) | undefined;
  const sink: ResponseSink = {
    onclose: undefined,
    closed: false,
    json() {},
    sse() {},
    event(_id, data) {
      if (data === '') return;
      received.push(JSON.parse(data) as { method: string });
      waiter?.();
    },
    end() {},
  };
  streams.attachStandalone(sink);
  const tables = { tools: createNameTable('__'), prompts: createNameTable('__') };
  const messages = createServerMessages({ streams, limits, logger, tables, live, namespaced: true, held });
  const next = () => new Promise<void>((resolve) => (waiter = resolve));
  return { messages, received, tables, next };
}

describe('aggregate server messages', () => {
  it('coalesces list_changed from several targets into one per list, and forgets the names of the targets that changed', async () => {
    const { messages, received, tables, next } = setup();
    const one = member('one');
    const two = member('two');
    tables.tools.expose('one', 'one', 'echo');
    tables.tools.expose('two', 'two', 'echo');
    const arrived = next();
    messages.notification(one, { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    messages.notification(two, { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    messages.notification(two, { jsonrpc: '2.0', method: 'notifications/prompts/list_changed' });
    messages.listChanged('tools');
    expect(received).toEqual([]); // held for the coalescing window
    await arrived;
    // Everything of the window went out in one flush: one per list, nothing twice.
    expect(received.map((m) => m.method)).toEqual(['notifications/tools/list_changed', 'notifications/prompts/list_changed']);
    expect(tables.tools.resolve('one__echo')).toBeUndefined();
    expect(tables.tools.resolve('two__echo')).toBeUndefined();
  });

  it('encodes resources/updated URIs and prefixes logger names with the target', () => {
    const { messages, received } = setup();
    const files = member('files');
    messages.notification(files, { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'file:///a' } });
    messages.notification(files, { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'db', data: 'x' } });
    messages.notification(files, { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'y' } });
    expect(received).toEqual([
      { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'files+file:///a' } },
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'files/db', data: 'x' } },
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'files', data: 'y' } },
    ]);
  });

  it('sends no list_changed while the session is not live (before initialize, after the end)', async () => {
    let live = false;
    const { messages, received, next } = setup(() => live);
    messages.listChanged('tools');
    live = true;
    const arrived = next();
    messages.listChanged('resources');
    await arrived;
    expect(received.map((m) => m.method)).toEqual(['notifications/resources/list_changed']);
  });

  it('a request keeps the name of a 2026 input request only toward a held session (2026 clients)', () => {
    const ask = () => ({ jsonrpc: '2.0' as const, id: 'input-1', method: 'elicitation/create', params: { message: '?', _meta: { [META_INPUT_KEY]: 'user_name', k: 1 } } });
    const plain = setup();
    plain.messages.request(member('m'), ask());
    const held = setup(() => true, true);
    held.messages.request(member('m'), ask());
    expect(plain.received[0]?.params).toEqual({ message: '?', _meta: { k: 1 } });
    expect(held.received[0]?.params).toEqual({ message: '?', _meta: { [META_INPUT_KEY]: 'user_name', k: 1 } });
  });
});
