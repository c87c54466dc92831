/**
 * The replica directory against a real redis-server: entries with a TTL renewed by heartbeats,
 * the draining flag, leaving, the short lookup cache, a refused owner marked gone, and what a
 * lookup answers while Redis is away (the last entry read; never a wait).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDirectory, type Directory } from '../../src/cluster/directory.ts';
import { createEntryCodec } from '../../src/cluster/directory-entry.ts';
import { deriveKeyRing } from '../../src/cluster/keyring.ts';
import { openRedis, type ClusterRedis } from '../../src/cluster/redis.ts';
import { createLogger } from '../../src/log/logger.ts';
import { startRedis, type TestRedis } from '../support/redis.ts';

let redis: TestRedis;
const conns: ClusterRedis[] = [];
const directories: Directory[] = [];
const logger = createLogger({ level: 'silent' });
const ring = deriveKeyRing(['directory-test-key-0123456789abcdefghij']);

async function directory(replicaId: string, heartbeatMs = 100, replicaTtlMs = 400): Promise<Directory> {
  const conn = openRedis({ url: redis.url, failMode: 'local', keyPrefix: 't:', commandTimeoutMs: 300 });
  conns.push(conn);
  await conn.ready(10_000);
  const made = createDirectory({ redis: conn, keyPrefix: 't:', replicaId, advertiseUrl: `http://127.0.0.1:1/${replicaId}`, heartbeatMs, replicaTtlMs, logger, codec: createEntryCodec(ring, 't:', replicaTtlMs) });
  directories.push(made);
  return made;
}

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const d of directories) await d.leave().catch(() => undefined);
  for (const c of conns) await c.close();
  await redis?.stop();
});

describe('the replica directory', () => {
  it('finds a live replica, sees it drain, and loses it when it leaves or stops beating', async () => {
    const a = await directory('a');
    const b = await directory('b');
    expect(await b.lookup('a')).toBeUndefined();
    await a.start();
    // The miss above is cached for a moment, then the entry shows.
    await expect.poll(() => b.lookup('a'), { timeout: 5_000 }).toEqual({ url: 'http://127.0.0.1:1/a', draining: false });
    await a.drain();
    await expect.poll(() => b.lookup('a'), { timeout: 5_000 }).toEqual({ url: 'http://127.0.0.1:1/a', draining: true });
    await a.leave();
    await expect.poll(() => b.lookup('a'), { timeout: 5_000 }).toBeUndefined();

    // A replica that stops beating (its process froze or died) drops out after its TTL.
    const c = await directory('c');
    await c.start();
    await expect.poll(() => b.lookup('c'), { timeout: 5_000 }).toBeDefined();
    // Its connection closes under it: its beats fail (quietly), its entry is not renewed.
    await conns.at(-1)!.close();
    await expect.poll(() => b.lookup('c'), { timeout: 5_000 }).toBeUndefined();
  });

  it('answers from the last entry while Redis is away, except for an owner marked gone', async () => {
    const d = await directory('d', 100, 5_000);
    const e = await directory('e', 100, 5_000);
    const f = await directory('f', 100, 5_000);
    await d.start();
    await f.start();
    await expect.poll(() => e.lookup('d'), { timeout: 5_000 }).toBeDefined();
    await expect.poll(() => e.lookup('f'), { timeout: 5_000 }).toBeDefined();
    e.markGone('f');
    expect(await e.lookup('f')).toBeUndefined();
    await redis.stop(true);
    await new Promise((r) => setTimeout(r, 600)); // past the cache: lookups go to Redis, which is gone
    const started = Date.now();
    expect(await e.lookup('d')).toEqual({ url: 'http://127.0.0.1:1/d', draining: false });
    expect(await e.lookup('f')).toBeUndefined();
    expect(await e.lookup('never-seen')).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2_000);
    await redis.restart();
  });
});
