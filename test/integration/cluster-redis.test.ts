/**
 * The cluster's Redis connection against a real redis-server: commands work while it is up, fail
 * fast (never hang) while it is down, and work again once it is back, without a new client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRedis, type ClusterRedis } from '../../src/cluster/redis.ts';
import { startRedis, type TestRedis } from '../support/redis.ts';

let redis: TestRedis;
let conn: ClusterRedis;
const states: string[] = [];

beforeAll(async () => {
  redis = await startRedis();
  conn = openRedis({ url: redis.url, failMode: 'local', keyPrefix: 't:', commandTimeoutMs: 500 }, (state) => states.push(state));
  await conn.ready(10_000);
});

afterAll(async () => {
  await conn?.close();
  await redis?.stop();
});

describe('cluster Redis connection', () => {
  it('sends commands while Redis is up', async () => {
    await conn.client.set('t:x', '1');
    expect(await conn.client.get('t:x')).toBe('1');
    expect(conn.state()).toBe('ready');
  });

  it('fails commands fast while Redis is down, and recovers when it is back', async () => {
    await redis.stop(true);
    await expect.poll(() => conn.state(), { timeout: 10_000 }).toBe('down');
    const started = Date.now();
    await expect(conn.client.get('t:x')).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2_000);
    await redis.restart();
    await conn.ready(15_000);
    expect(await conn.client.get('t:x')).toBeNull();
    expect(states).toContain('down');
  });
});
