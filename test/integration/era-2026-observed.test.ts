/**
 * A 2026-07-28 request is observed as what it is: counted `era="2026"` in /metrics, its SERVER span
 * labelled 2026 (the request's revision, no held session's id) and parented on the client's own
 * `traceparent` header; the held 2025 session that serves it upstream is an implementation detail.
 * A 2025 client on the same gateway and target stays `era="2025"`, on its own session's span.
 * Real gateway, real stdio child (the recorder), real OTLP/HTTP receiver; the gateway is closed
 * before the span assertions, so its shutdown flush delivers them.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { scrape, valueOf, type Sample } from '../support/metrics.ts';
import { modern, resultOf } from '../support/modern.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';
import { recorderServer, textOf } from '../support/recorder.ts';

const SERVER = 2;
const CLIENT = 3;

function clientContext(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

describe('a 2026 request is observed as 2026', () => {
  let receiver: OtlpReceiver;
  let metrics: Sample[] = [];
  let session2025: string | undefined;
  const single = clientContext();
  const aggregate = clientContext();
  const old = clientContext();

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const gw: TestGateway = await startTestGateway({
      targets: { rec: recorderServer(), other: recorderServer() },
      telemetry: { traces: { enabled: true, endpoint: receiver.url, serviceName: 'era-observed', sampleRatio: undefined } },
    });
    try {
      const headers = (traceparent: string) => ({ headers: { traceparent, tracestate: 'client=2026' } });
      for (const text of ['one', 'two']) {
        const answer = await modern(gw.mcpUrl('rec'), 'tools/call', { name: 'echo', arguments: { text } }, headers(single.traceparent));
        expect(answer.status).toBe(200);
        expect(textOf(resultOf(answer))).toBe(text);
      }
      const agg = await modern(new URL('/mcp', gw.url), 'tools/call', { name: 'rec__echo', arguments: { text: 'agg' } }, headers(aggregate.traceparent));
      expect(textOf(resultOf(agg))).toBe('agg');
      // The other era on the same target: its own session, counted and labelled 2025.
      const transport = new StreamableHTTPClientTransport(gw.mcpUrl('rec'), { requestInit: { headers: { traceparent: old.traceparent } } });
      const client = new Client({ name: 'era-observed-2025', version: '1' });
      await client.connect(transport);
      session2025 = transport.sessionId;
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'old' } }))).toBe('old');
      await client.close();
      metrics = await scrape(gw.url);
    } finally {
      await gw.close();
    }
  });

  afterAll(async () => {
    await receiver?.close();
  });

  const find = (traceId: string, kind: number, name: string): ReceivedSpan => {
    const span = receiver.spans.find((s) => s.traceId === traceId && s.kind === kind && s.name === name);
    expect(span, `span "${name}" in trace ${traceId}; got ${receiver.spans.map((s) => `${s.name}@${s.traceId}`).join(', ')}`).toBeDefined();
    return span!;
  };

  it('/metrics counts 2026 requests under era="2026", 2025 ones under era="2025"', () => {
    const labels = (endpoint: string, era: string) => ({ endpoint, era, transport: 'streamable-http', method: 'tools/call', outcome: 'ok' });
    expect(valueOf(metrics, 'switchboard_requests_total', labels('target:rec', '2026'))).toBe(2);
    expect(valueOf(metrics, 'switchboard_requests_total', labels('aggregate:*', '2026'))).toBe(1);
    expect(valueOf(metrics, 'switchboard_requests_total', labels('target:rec', '2025'))).toBe(1);
    // The held session's own handshake is no request of anyone's.
    expect(metrics.filter((s) => s.name === 'switchboard_requests_total' && s.labels.era === '2025' && s.labels.method === 'initialize')).toEqual([]);
  });

  it("the client's traceparent header is the parent of the gateway's span, labelled 2026 without a session id", () => {
    for (const ctx of [single, aggregate]) {
      const name = ctx === single ? 'tools/call echo' : 'tools/call rec__echo';
      const server = find(ctx.traceId, SERVER, name);
      expect(server.parentSpanId).toBe(ctx.spanId);
      expect(server.attributes).toMatchObject({ 'switchboard.era': '2026', 'mcp.protocol.version': '2026-07-28', 'switchboard.target': 'rec' });
      expect(server.attributes['mcp.session.id']).toBeUndefined();
      // The upstream call hangs under it, as for any request.
      expect(find(ctx.traceId, CLIENT, 'tools/call echo').parentSpanId).toBe(server.spanId);
    }
    // Both 2026 calls on the single target continue the same client trace.
    expect(receiver.spans.filter((s) => s.traceId === single.traceId && s.kind === SERVER)).toHaveLength(2);
  });

  it('a 2025 request on the same target stays era 2025 with its own session id', () => {
    const server = find(old.traceId, SERVER, 'tools/call echo');
    expect(server.parentSpanId).toBe(old.spanId);
    expect(server.attributes).toMatchObject({ 'switchboard.era': '2025', 'mcp.session.id': session2025 });
  });
});
