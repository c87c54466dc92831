/**
 * A 2026 upstream that answers `subscriptions/listen` the way the conformance repo's reference
 * server does (`application/json`, one message per line, never ended): its change notifications
 * reach a 2026 client's listen stream through the gateway's held session. The upstream's
 * acknowledgement is late here, so the client's must wait for it: a change made as soon as the
 * client is acknowledged is not lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModernFixture, type ModernFixture } from '../fixtures/modern-upstream.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { envelope, readSseFrames, standardHeaders } from '../support/modern.ts';

let upstream: ModernFixture;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startModernFixture({ listenAsLines: true, listenAckDelayMs: 300 });
  gw = await startTestGateway({ targets: { lines: { type: 'http', url: upstream.url } } });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

/** Resolves once `check` holds, polled on each event of `arrive`. */
const until = (check: () => boolean, arrive: (f: () => void) => void) => new Promise<void>((resolve) => arrive(() => check() && resolve()));

describe('2026 upstream whose listen answer is JSON lines', () => {
  it('a 2026 client acknowledged on its listen stream hears a change made right after', async () => {
    const abort = new AbortController();
    const params = { notifications: { toolsListChanged: true }, _meta: envelope() };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'L1', method: 'subscriptions/listen', params });
    const res = await fetch(gw.mcpUrl('lines'), { method: 'POST', headers: standardHeaders('subscriptions/listen', {}), body, signal: abort.signal });
    let arrived = () => {};
    const { frames, reading } = readSseFrames(res, () => arrived());
    try {
      await until(() => frames.length >= 1, (f) => (arrived = f));
      expect(frames[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
      const changed = until(() => frames.length >= 2, (f) => (arrived = f));
      upstream.toolsChanged();
      await changed;
      expect(frames[1]).toMatchObject({ method: 'notifications/tools/list_changed', params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'L1' } } });
    } finally {
      abort.abort();
      await reading;
    }
  });
});
