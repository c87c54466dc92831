/**
 * Era detection of remote Streamable HTTP targets (`protocol: auto | 2025 | 2026`) and deadlines
 * over the bridge to a 2026-07-28-only upstream (test/fixtures/modern-upstream.ts): `auto` finds
 * 2025 for the 2025 HTTP fixture and asks once; a 401 or 500 on the probe is not remembered; a
 * target known to be 2026 whose discover fails fails that start with its own error; `protocol:
 * 2026` refuses a server that does not list the revision; the trace context rides each POST.
 * Behaviour of the bridge itself:
 * modern-upstream.test.ts.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { startModernFixture, type ModernFixture } from '../fixtures/modern-upstream.ts';
import { connect, errorOf } from '../support/bridge-client.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startOtlpReceiver } from '../support/otlp-receiver.ts';
import { textOf } from '../support/recorder.ts';

let modern: ModernFixture;
let legacy: HttpFixture;
let gw: TestGateway;

beforeAll(async () => {
  [modern, legacy] = await Promise.all([startModernFixture(), startHttpFixture({ getStream: false })]);
  gw = await startTestGateway({ targets: { modern: { type: 'http', url: modern.url }, legacy: { type: 'http', url: legacy.url } } });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([modern?.close(), legacy?.close()]);
});

describe('timeouts over the bridge', () => {
  it('a call past timeoutMs fails with GW_UPSTREAM_TIMEOUT and its upstream exchange is closed', async () => {
    const gateway = await startTestGateway({
      targets: { m: { type: 'http', url: modern.url, timeouts: { requestMs: 300, resetOnProgress: true, maxTotalMs: 0 } } },
    });
    try {
      const client = await connect(gateway.mcpUrl('m'));
      const cancelledBefore = modern.cancelled.length;
      const error = await errorOf(client.callTool({ name: 'slow', arguments: {} }));
      expect(error.data).toMatchObject({ code: 'GW_UPSTREAM_TIMEOUT', target: 'm' });
      await expect.poll(() => modern.cancelled.length).toBe(cancelledBefore + 1);
      await client.close();
    } finally {
      await gateway.close();
    }
  });
});

describe('era detection (protocol: auto)', () => {
  it('finds 2025 for a 2025 Streamable HTTP server, and asks only once', async () => {
    const discoverBefore = legacy.messages().filter((m) => m.method === 'server/discover').length;
    const a = await connect(gw.mcpUrl('legacy'));
    const b = await connect(gw.mcpUrl('legacy'));
    const messages = legacy.messages();
    expect(messages.filter((m) => m.method === 'server/discover').length - discoverBefore).toBeLessThanOrEqual(1);
    expect(messages.filter((m) => m.method === 'initialize').length).toBeGreaterThanOrEqual(2);
    await Promise.all([a.close(), b.close()]);
  });

  it.each([401, 500])('does not remember an HTTP %i to the probe: the next session asks again', async (status) => {
    const fixture = await startModernFixture();
    const gateway = await startTestGateway({ targets: { m: { type: 'http', url: fixture.url } } });
    try {
      fixture.failDiscover(status);
      // Inconclusive: this connection is tried as 2025, and the 2026-only server refuses initialize.
      await expect(connect(gateway.mcpUrl('m'))).rejects.toThrow();
      expect(fixture.calls('initialize').length).toBe(1);
      const client = await connect(gateway.mcpUrl('m'));
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'ok' } }))).toBe('ok');
      expect(fixture.calls('server/discover').length).toBe(2);
      await client.close();
    } finally {
      await gateway.close();
      await fixture.close();
    }
  });

  it('a target known to be 2026 whose discover fails (500) fails that start with the HTTP error, not a 2025 handshake', async () => {
    const fixture = await startModernFixture();
    const gateway = await startTestGateway({ targets: { m: { type: 'http', url: fixture.url } } });
    try {
      await (await connect(gateway.mcpUrl('m'))).close();
      // The first session tried the client's own era once (refused: upstream/era-first.ts).
      expect(fixture.calls('initialize')).toHaveLength(1);
      fixture.failDiscover(500);
      const error = await errorOf(connect(gateway.mcpUrl('m')));
      expect(error.data).toMatchObject({ code: 'GW_UPSTREAM_HTTP_ERROR', status: 500, target: 'm' });
      expect(fixture.calls('initialize')).toHaveLength(1);
      await (await connect(gateway.mcpUrl('m'))).close();
    } finally {
      await gateway.close();
      await fixture.close();
    }
  });

  it('protocol: 2026 fails the start with GW_UPSTREAM_INVALID_ANSWER when server/discover lists only other versions', async () => {
    const fixture = await startModernFixture();
    fixture.rawMethod('server/discover', (id) => ({ jsonrpc: '2.0', id, result: { supportedVersions: ['2025-11-25'], capabilities: {} } }));
    const gateway = await startTestGateway({ targets: { m: { type: 'http', url: fixture.url, protocol: '2026' } } });
    try {
      const error = await errorOf(connect(gateway.mcpUrl('m')));
      expect(error.data).toMatchObject({ code: 'GW_UPSTREAM_INVALID_ANSWER', target: 'm', reason: 'server/discover does not list 2026-07-28' });
      expect(fixture.calls('initialize')).toEqual([]);
    } finally {
      await gateway.close();
      await fixture.close();
    }
  });

  it('protocol: 2026 fails the start with the HTTP error of a 2025 server refusing server/discover', async () => {
    const gateway = await startTestGateway({ targets: { old: { type: 'http', url: legacy.url, protocol: '2026' } } });
    try {
      const initializeBefore = legacy.messages().filter((m) => m.method === 'initialize').length;
      const error = await errorOf(connect(gateway.mcpUrl('old')));
      // Its refusal of the session-less discover is the start's failure; no initialize is tried.
      expect(error.code).toBe(-32603);
      expect(error.data).toMatchObject({ code: 'GW_UPSTREAM_HTTP_ERROR', status: 400, target: 'old' });
      expect(legacy.messages().filter((m) => m.method === 'initialize').length).toBe(initializeBefore);
    } finally {
      await gateway.close();
    }
  });
});

describe('trace context over the bridge', () => {
  it('each 2026 POST carries the upstream span as traceparent (with the tracestate) when tracing is on', async () => {
    const receiver = await startOtlpReceiver();
    const fixture = await startModernFixture();
    const gateway = await startTestGateway({
      targets: { m: { type: 'http', url: fixture.url } },
      telemetry: { traces: { enabled: true, endpoint: receiver.url, serviceName: undefined, sampleRatio: undefined } },
    });
    try {
      const traceId = randomBytes(16).toString('hex');
      const transport = new StreamableHTTPClientTransport(gateway.mcpUrl('m'), {
        requestInit: { headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`, tracestate: 'client=1' } },
      });
      const client = new Client({ name: 'traced', version: '1.0.0' });
      await client.connect(transport);
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'traced' } }))).toBe('traced');
      const post = fixture.calls('tools/call', 'echo').at(-1)!;
      expect(post.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
      expect(post.headers.tracestate).toBe('client=1');
      await client.close();
    } finally {
      await gateway.close();
      await fixture.close();
      await receiver.close();
    }
  });
});
