/**
 * The session store and a session's caller: one record per session, the store's own copy, handed
 * by reference to the session's upstream connections; finding a session never writes it, and only
 * the session's own principal's later Authorization becomes its latest (what a token exchange
 * presents). The integration suite (token-exchange, held-identity) drives the same over sockets.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.ts';
import { createEndpointTable } from '../../../src/session/endpoint-table.ts';
import { createSessionServices } from '../../../src/session/services.ts';
import { createSessionStore, type SessionStore } from '../../../src/session/store.ts';
import type { Caller, Principal } from '../../../src/upstream/caller.ts';
import { buildAggregateConfig } from '../../support/aggregate.ts';
import { memoryUpstreams } from '../../support/memory-upstream.ts';
import { memoryTarget, request } from '../../support/session-harness.ts';

const principal = (name: string): Principal => ({ id: `key:${name}`, kind: 'api-key', subject: name, scopes: new Set() });
const ALICE = principal('alice');
const BOB = principal('bob');

let stores: SessionStore[] = [];
afterEach(async () => {
  await Promise.all(stores.map((s) => s.close(0)));
  stores = [];
});

/** A store whose upstream factory records the caller each connection was opened for. */
function setup() {
  const config = buildAggregateConfig({ targets: { alpha: memoryTarget() } });
  const upstreams = memoryUpstreams();
  const opened: Array<Caller | undefined> = [];
  const services = createSessionServices(config.limits, {
    open: (options) => {
      opened.push(options.caller);
      return upstreams.open(options);
    },
  });
  const store = createSessionStore({ config, logger: createLogger({ level: 'silent' }), services });
  stores.push(store);
  const table = createEndpointTable(config);
  return { store, opened, factory: table.server('alpha')!.factory };
}

describe('session store: the caller', () => {
  it('finding a session writes nothing; only its own principal updates its Authorization, on the object its upstream holds', async () => {
    const { store, opened, factory } = setup();
    const given = { principal: ALICE, authorization: 'Bearer one', transport: 'websocket' as const };
    const session = store.create(factory, given);
    await session.initialize(request(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'unit', version: '1' } }));
    expect(opened).toHaveLength(1);
    const caller = opened[0]!;
    expect(caller).toMatchObject({ principal: ALICE, authorization: 'Bearer one', transport: 'websocket' });
    // The store's own copy: what the route handed in is never written.
    expect(caller).not.toBe(given);

    expect(store.get(session.id, ALICE)).toBe(session);
    expect(store.get(session.id, BOB)).toBeUndefined();
    expect(store.get(session.id, undefined)).toBeUndefined();
    store.noteAuthorization(session.id, BOB, 'Bearer bob');
    store.noteAuthorization(session.id, undefined, 'Bearer nobody');
    store.noteAuthorization(session.id, ALICE, undefined);
    expect(caller.authorization).toBe('Bearer one');

    store.noteAuthorization(session.id, ALICE, 'Bearer two');
    expect(caller.authorization).toBe('Bearer two');
    expect(given.authorization).toBe('Bearer one');
  });

  it('without a principal the caller is nobody, and no header is ever recorded as its latest', async () => {
    const { store, opened, factory } = setup();
    const session = store.create(factory);
    await session.initialize(request(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'unit', version: '1' } }));
    expect(opened[0]).toEqual({ principal: undefined, authorization: undefined });
    expect(store.get(session.id, undefined)).toBe(session);
    store.noteAuthorization(session.id, undefined, 'Bearer x');
    expect(opened[0]?.authorization).toBeUndefined();
  });
});
