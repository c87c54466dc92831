/**
 * Issue 24 acceptance, shared rate limits through the load balancer: one principal limited to
 * 20/s, calling through Debian's HAProxy in round robin over three replicas (each its own
 * process, one real Redis), gets about 20/s admitted in total, not 3 x 20/s, while every replica
 * takes its share of the requests. (cluster-rate-limits.test.ts checks the same bucket replica by
 * replica, and with Redis gone.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLbCluster, type LbCluster } from '../support/lb-cluster.ts';
import { post } from '../support/recorder.ts';

const RATE = 20;
const KEY = 'rate-alice-key-0123456789abcdef';
const AUTH = { authorization: `Bearer ${KEY}` };
let c: LbCluster;

beforeAll(async () => {
  c = await startLbCluster({
    replicas: 3,
    gateway: { auth: { apiKeys: [{ name: 'alice', key: KEY }] }, rateLimits: { perPrincipal: { perSecond: RATE, burst: RATE } } },
  });
}, 180_000);
afterAll(async () => {
  await c?.stop();
});

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'rate', version: '1' } } });

describe('a per-principal limit through HAProxy over three replicas', () => {
  it('admits about 20/s in total, every replica serving its share', async () => {
    const sessions: string[] = [];
    for (let i = 0; i < 3; i++) {
      const init = await post(c.url(), INIT, AUTH);
      expect(init.status).toBe(200);
      sessions.push(init.headers.get('mcp-session-id') as string);
    }
    // The bucket refills from what the handshakes took.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const tally = { admitted: 0, refused: 0, other: [] as string[], servedBy: new Set<string>() };
    const started = Date.now();
    let n = 0;
    const worker = async () => {
      while (Date.now() - started < 3_000) {
        const id = n++;
        const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: `r${id}` } } });
        const answer = await post(c.url(), body, { ...AUTH, 'mcp-session-id': sessions[id % 3] as string, 'mcp-protocol-version': '2025-11-25' });
        tally.servedBy.add(answer.headers.get('x-served-by') ?? '');
        if (answer.status === 200 && answer.text.includes(`r${id}`)) tally.admitted++;
        else if (answer.status === 429 && answer.text.includes('GW_RATE_LIMITED')) tally.refused++;
        else tally.other.push(`${answer.status} ${answer.text.slice(0, 200)}`);
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    const seconds = (Date.now() - started) / 1_000;
    expect(tally.other).toEqual([]);
    expect(tally.servedBy).toEqual(new Set(['r0', 'r1', 'r2']));
    expect(tally.refused).toBeGreaterThan(0);
    // One shared bucket: the burst, the refill, a little slack; three local buckets would admit three times that.
    expect(tally.admitted).toBeGreaterThan(RATE);
    expect(tally.admitted).toBeLessThanOrEqual(RATE + RATE * seconds + 10);
  }, 60_000);
});
