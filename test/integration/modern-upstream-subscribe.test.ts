/**
 * A 2025 client's resources/subscribe and resources/unsubscribe through the gateway to a
 * 2026-07-28-only upstream (test/fixtures/modern-upstream.ts): bridged to `resourceSubscriptions`
 * on the held `subscriptions/listen` stream when the upstream offers subscriptions, "Method not
 * found" (and no `resources.subscribe` capability) when it does not.
 */
import { ResourceUpdatedNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModernFixture, type ModernFixture } from '../fixtures/modern-upstream.ts';
import { connect, errorOf, paramsOf } from '../support/bridge-client.ts';
import { remoteTarget, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { connectClient, startAggregateGateway } from '../support/aggregate.ts';
import { envelope, readSseFrames, standardHeaders } from '../support/modern.ts';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

let subs: ModernFixture;
let plain: ModernFixture;
let gw: TestGateway;

beforeAll(async () => {
  subs = await startModernFixture({ subscriptions: true });
  plain = await startModernFixture();
  gw = await startTestGateway({ targets: { subs: { type: 'http', url: subs.url }, plain: { type: 'http', url: plain.url } } });
});
afterAll(async () => {
  await gw?.close();
  await subs?.close();
  await plain?.close();
});

/** Subscribes to `prefix`fixture://note, sees one update for it (not another URI's), unsubscribes, sees no more. */
async function subscribeScenario(client: Client, prefix: string): Promise<void> {
  const note = `${prefix}fixture://note`;
  expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
  const updated: string[] = [];
  let onUpdate = () => {};
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updated.push(n.params.uri);
    onUpdate();
  });
  let toolsChanged = () => {};
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => toolsChanged());

  const before = subs.calls('subscriptions/listen').length;
  expect(await client.subscribeResource({ uri: note })).toEqual({});
  const listens = subs.calls('subscriptions/listen').slice(before);
  const asked = paramsOf(listens.at(-1)!).notifications as Record<string, unknown>;
  expect(asked.resourceSubscriptions).toEqual(['fixture://note']);

  const first = new Promise<void>((resolve) => (onUpdate = resolve));
  subs.resourceUpdated('fixture://other');
  subs.resourceUpdated('fixture://note');
  await first;
  expect(updated).toEqual([note]);

  expect(await client.unsubscribeResource({ uri: note })).toEqual({});
  // Ordered on one stream: the tools change comes after the update, so once it is here the update was not relayed.
  const marker = new Promise<void>((resolve) => (toolsChanged = resolve));
  subs.resourceUpdated('fixture://note');
  subs.toolsChanged();
  await marker;
  expect(updated).toEqual([note]);
}

describe('2025 client -> 2026 upstream: resource subscriptions', () => {
  it('subscribes through resourceSubscriptions, relays resources/updated, and stops after unsubscribe', async () => {
    const client = await connect(gw.mcpUrl('subs'));
    try {
      await subscribeScenario(client, '');
    } finally {
      await client.close();
    }
  });

  it('does the same on the aggregate /mcp (URIs namespaced by the member)', async () => {
    const agg = await startAggregateGateway({
      targets: { subs: { target: remoteTarget('subs', { type: 'http', url: subs.url }) }, plain: { target: remoteTarget('plain', { type: 'http', url: plain.url }) } },
    });
    try {
      const client = await connectClient(agg, '/mcp');
      try {
        await subscribeScenario(client, 'subs+');
      } finally {
        await client.close();
      }
    } finally {
      await agg.close();
    }
  });

  it('a 2026 client listening with resourceSubscriptions hears the 2026 upstream through the held session', async () => {
    const abort = new AbortController();
    const params = { notifications: { resourceSubscriptions: ['fixture://note'] }, _meta: envelope() };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'L1', method: 'subscriptions/listen', params });
    const res = await fetch(gw.mcpUrl('subs'), { method: 'POST', headers: standardHeaders('subscriptions/listen', {}), body, signal: abort.signal });
    let arrived = () => {};
    const { frames, reading } = readSseFrames(res, () => arrived());
    try {
      const next = (count: number) => new Promise<void>((resolve) => (arrived = () => frames.length >= count && resolve()));
      await next(1);
      expect(frames[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: { resourceSubscriptions: ['fixture://note'] } } });
      const update = next(2);
      subs.resourceUpdated('fixture://other');
      subs.resourceUpdated('fixture://note');
      await update;
      expect(frames[1]).toMatchObject({ method: 'notifications/resources/updated', params: { uri: 'fixture://note' } });
    } finally {
      abort.abort();
      await reading;
    }
  });

  it('keeps Method not found, and no resources.subscribe, when the upstream does not offer subscriptions', async () => {
    const client = await connect(gw.mcpUrl('plain'));
    try {
      expect(client.getServerCapabilities()?.resources?.subscribe).toBeUndefined();
      const err = await errorOf(client.subscribeResource({ uri: 'fixture://note' }));
      expect(err.code).toBe(-32601);
    } finally {
      await client.close();
    }
  });
});
