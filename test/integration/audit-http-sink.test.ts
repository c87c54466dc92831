/**
 * The audit trail's HTTP sink when its receiver goes away and comes back (docs/operations.md, "Audit
 * sinks"): a real gateway, 2026 tool calls, a real receiver that stops listening (connections
 * refused), answers 503 for a while, or takes the connection and never answers. Within the queue
 * bound nothing is lost: once the receiver is back every queued record arrives, in order, chained.
 * Past the bound the newest are
 * dropped and counted in `switchboard_audit_dropped_total`; the receiver's copy then shows the gap,
 * and `verify` names it. The calls themselves are answered all along.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { verifyLines } from '../../src/observe/audit/chain.ts';
import { buildAggregateConfig, colliderServer } from '../support/aggregate.ts';
import { startAuditReceiver, type AuditReceiver } from '../support/audit-receiver.ts';
import { createTestLogger } from '../support/gateway.ts';
import { scrape, valueOf } from '../support/metrics.ts';
import { modern } from '../support/modern.ts';

const SECRET = 'audit-receiver-secret-0123456789';
const MAX_QUEUE = 4;
const lines: string[] = [];
let gw: RunningGateway;
let receiver: AuditReceiver;
let sink: string;

const call = async (n: number) => {
  const answer = await modern(new URL('/servers/col/mcp', gw.url), 'tools/call', { name: 'echo', arguments: { message: `call ${n}` } }, { id: n });
  expect(answer.json.result, JSON.stringify(answer.json)).toBeDefined();
};
const metric = async (name: string) => valueOf(await scrape(gw.url), name, { sink }) ?? -1;
/** Polls the metrics until `name` reads `value` (the sink works in the background). */
async function until(name: string, value: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let seen = await metric(name);
  while (seen !== value && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    seen = await metric(name);
  }
  expect(seen, name).toBe(value);
}

beforeAll(async () => {
  receiver = await startAuditReceiver(SECRET);
  sink = `http:${new URL(receiver.url).host}`;
  const base = buildAggregateConfig({ targets: { col: colliderServer() } });
  gw = await startGateway(
    {
      ...base,
      audit: {
        sinks: [{ type: 'http', url: receiver.url, secret: SECRET, batchSize: 2, flushMs: 20, maxQueue: MAX_QUEUE, timeoutMs: 2_000, maxBackoffMs: 100 }],
        recent: 10,
        capture: { arguments: false, results: false, maxBytes: 4_096, patterns: [] },
      },
    },
    { logger: createTestLogger('info', lines), env: {} },
  );
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await receiver?.close();
});

describe('the HTTP audit sink', () => {
  it('keeps what fits its queue while the receiver is down, sends it in order when it is back, and counts what it dropped', async () => {
    await call(1);
    await receiver.waitForRecords(1);
    await receiver.down();
    for (let n = 2; n <= 1 + MAX_QUEUE; n++) await call(n);
    await until('switchboard_audit_queued', MAX_QUEUE);
    // Past the bound: answered all the same, the records dropped and counted.
    for (let n = 2 + MAX_QUEUE; n <= 4 + MAX_QUEUE; n++) await call(n);
    await until('switchboard_audit_dropped_total', 3);
    expect(receiver.records).toHaveLength(1);

    await receiver.up();
    await receiver.waitForRecords(1 + MAX_QUEUE);
    expect(receiver.records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(verifyLines(receiver.records.map((r) => JSON.stringify(r)).join('\n'))).toMatchObject({ ok: true, records: 5 });
    await until('switchboard_audit_queued', 0);
    await until('switchboard_audit_records_total', 5);

    // The next record after the drops: the receiver's copy shows the gap, and verify names it.
    await call(9);
    await receiver.waitForRecords(6);
    expect(receiver.records.at(-1)?.seq).toBe(9);
    expect(verifyLines(receiver.records.map((r) => JSON.stringify(r)).join('\n')).broken).toMatchObject({ line: 6, seq: 9, why: expect.stringContaining('expected seq 6') });
    expect(lines.filter((l) => l.includes('audit receiver failed'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('audit queue full'))).toHaveLength(1);
    expect(lines.some((l) => l.includes('audit receiver answers again'))).toBe(true);
  });

  it('retries a receiver that answers 503 and loses nothing', async () => {
    // A second receiver on a fresh port would need a new gateway; this one answers 503 on the same port.
    const port = Number(new URL(receiver.url).port);
    await receiver.down();
    let refused = 0;
    const busy = createServer((req, res) => {
      refused++;
      req.resume();
      res.writeHead(503).end();
    });
    await new Promise<void>((resolve) => busy.listen(port, '127.0.0.1', resolve));
    expect((busy.address() as AddressInfo).port).toBe(port);
    await call(10);
    await call(11);
    const deadline = Date.now() + 20_000;
    while (refused < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(refused).toBeGreaterThanOrEqual(2);
    busy.closeAllConnections();
    await new Promise<void>((resolve) => busy.close(() => resolve()));
    await receiver.up();
    await receiver.waitForRecords(8);
    expect(receiver.records.slice(-2).map((r) => r.seq)).toEqual([10, 11]);
    expect(receiver.unsigned).toBe(0);
  });

  it('gives up on a receiver that takes the connection and never answers (timeoutMs), and sends again once it answers', async () => {
    const port = Number(new URL(receiver.url).port);
    await receiver.down();
    let held = 0;
    const silent = createServer(() => void held++);
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
    const before = receiver.records.length;
    await call(12);
    // The POST is held past timeoutMs (2 s) and tried again: two held requests, nothing lost.
    const deadline = Date.now() + 20_000;
    while (held < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(held).toBeGreaterThanOrEqual(2);
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
    await receiver.up();
    await receiver.waitForRecords(before + 1);
    expect(receiver.records.at(-1)?.seq).toBe(12);
  });
});
