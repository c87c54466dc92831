/**
 * The aggregate flavour of the session core on the in-memory transport: two members behind one
 * session, names namespaced and lists merged, calls routed with the prefix stripped, server->client
 * requests of both members under ids that never collide, cancels translated to the right member,
 * and a member crash failing only that member's requests.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { POST_2025, type Session } from '../../../src/session/session.ts';
import type { SessionStore } from '../../../src/session/store.ts';
import { byId, call, harness, memoryTarget, recordingSink, request } from '../../support/session-harness.ts';

const BATCH = { ...POST_2025, batch: true };
const tick = () => new Promise((r) => setTimeout(r, 10));

let stores: SessionStore[] = [];
afterEach(async () => {
  await Promise.all(stores.map((s) => s.close(0)));
  stores = [];
});

async function aggregate() {
  const h = harness({ alpha: memoryTarget(), beta: memoryTarget() });
  stores.push(h.store);
  const session: Session = h.store.create(h.table.root()!.factory);
  const init = { protocolVersion: '2025-11-25', capabilities: { roots: {} }, clientInfo: { name: 'unit-client', version: '1' } };
  const answer = await session.initialize(request(0, 'initialize', init));
  await session.handleNotification({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const server = (name: string) => h.upstreams.servers(name)[0]!;
  return { ...h, session, answer, server };
}

describe('aggregate session on the in-memory transport', () => {
  it('answers initialize itself and merges both lists under namespaced names', async () => {
    const a = await aggregate();
    expect(a.answer).toMatchObject({ id: 0, result: { serverInfo: { name: 'switchboard' }, protocolVersion: '2025-11-25' } });
    const sink = recordingSink();
    a.session.serve([request('t', 'tools/list')], sink, POST_2025);
    const names = ((await sink.next(byId('t'))).result!.tools as Array<{ name: string }>).map((t) => t.name);
    expect(names.sort()).toEqual(['alpha__ask', 'alpha__echo', 'alpha__secret', 'alpha__slow', 'beta__ask', 'beta__echo', 'beta__secret', 'beta__slow']);
  });

  it('routes a call to its member with the prefix stripped', async () => {
    const a = await aggregate();
    const sink = recordingSink();
    a.session.serve([call(1, 'beta__echo', { text: 'x' })], sink, POST_2025);
    expect((await sink.next(byId(1))).result).toEqual({ content: [{ type: 'text', text: 'beta: x' }] });
    expect(a.server('beta').received.find((m) => m.method === 'tools/call')?.params).toEqual({ name: 'echo', arguments: { text: 'x' } });
    expect(a.upstreams.servers('alpha').flatMap((s) => s.received).some((m) => m.method === 'tools/call')).toBe(false);
  });

  it('gives the server->client requests of both members distinct ids and returns each answer to its member', async () => {
    const a = await aggregate();
    const sink = recordingSink();
    a.session.serve([call('qa', 'alpha__ask'), call('qb', 'beta__ask')], sink, BATCH);
    await sink.next(() => sink.received.filter((m) => m.method === 'roots/list').length === 2);
    const asks = sink.received.filter((m) => m.method === 'roots/list');
    expect(asks[0]!.id).not.toBe(asks[1]!.id);
    // Both members asked with the same id of their own ('srv-1').
    for (const [n, ask] of asks.entries()) {
      await a.session.handleResponse({ jsonrpc: '2.0', id: ask.id as number, result: { roots: [{ uri: `file:///${n}` }] } });
    }
    const [qa, qb] = await Promise.all([sink.next(byId('qa')), sink.next(byId('qb'))]);
    const answered = [qa, qb].map((m) => (m!.result!.content as Array<{ text: string }>)[0]!.text).sort();
    expect(answered).toEqual([JSON.stringify({ roots: [{ uri: 'file:///0' }] }), JSON.stringify({ roots: [{ uri: 'file:///1' }] })]);
    for (const name of ['alpha', 'beta']) {
      expect(a.server(name).received.filter((m) => m.method === undefined && m.id === 'srv-1')).toHaveLength(1);
    }
  });

  it('translates a cancel to the member that runs the request, under its own id', async () => {
    const a = await aggregate();
    const sink = recordingSink();
    a.session.serve([call(9, 'alpha__slow')], sink, POST_2025);
    const upstream = await a.server('alpha').waitFor((m) => m.method === 'tools/call');
    await a.session.handleNotification({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } });
    expect((await a.server('alpha').waitFor((m) => m.method === 'notifications/cancelled')).params).toMatchObject({ requestId: upstream.id });
    await tick();
    expect(a.upstreams.servers('beta').flatMap((s) => s.received).some((m) => m.method === 'notifications/cancelled')).toBe(false);
  });

  it("a member crash fails only that member's pending request; the other member keeps serving", async () => {
    const a = await aggregate();
    const sink = recordingSink();
    a.session.serve([call('stuck', 'beta__slow')], sink, POST_2025);
    await a.server('beta').waitFor((m) => m.method === 'tools/call');
    a.server('beta').crash();
    const failed = await sink.next(byId('stuck'));
    expect(failed.error).toMatchObject({ data: { code: 'GW_UPSTREAM_EXITED', target: 'beta' } });
    const next = recordingSink();
    a.session.serve([call('fine', 'alpha__echo', { text: 'still here' })], next, POST_2025);
    expect((await next.next(byId('fine'))).result).toEqual({ content: [{ type: 'text', text: 'alpha: still here' }] });
  });
});
