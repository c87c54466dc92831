/**
 * Where the per-user OAuth vault (upstream/oauth/vault.ts) keeps its sealed records: an opaque id
 * to an opaque sealed string. The vault seals before it stores and opens after it reads, so a
 * store (a file, Redis) never holds a token in the clear and is treated as possibly hostile: a
 * record swapped to another id, or altered, fails to open (the id is the AEAD's associated data).
 *
 * This file holds the interface (the lowest layer both stores can reach) and the Redis store, which
 * only cluster/ may build (it imports ioredis through redis.ts). With `gateway.cluster` every replica
 * reads the same records, so a user who connected an account through one replica is served by all.
 */
import type { ClusterRedis } from './redis.ts';

export interface VaultStore {
  get(id: string): Promise<string | undefined>;
  /** `ttlSec`: forgotten after that long (pending consents); absent: kept until deleted. */
  set(id: string, sealed: string, ttlSec?: number): Promise<void>;
  /** Whether the id was there: a consent's `state` is redeemed once, by whoever deletes it first. */
  delete(id: string): Promise<boolean>;
  /** Every id under `prefix`, at most `limit` (the console's list of connections). */
  ids(prefix: string, limit: number): Promise<string[]>;
}

/** The vault's records as Redis strings under `<keyPrefix>vault:<id>`. */
export function createRedisVaultStore(redis: ClusterRedis, keyPrefix: string): VaultStore {
  const key = (id: string) => `${keyPrefix}vault:${id}`;
  const client = redis.client;
  return {
    async get(id) {
      return (await client.get(key(id))) ?? undefined;
    },
    async set(id, sealed, ttlSec) {
      if (ttlSec === undefined) await client.set(key(id), sealed);
      else await client.set(key(id), sealed, 'EX', Math.max(1, Math.ceil(ttlSec)));
    },
    async delete(id) {
      // DEL is atomic: of two replicas redeeming one state, exactly one sees 1.
      return (await client.del(key(id))) === 1;
    },
    async ids(prefix, limit) {
      const out: string[] = [];
      let cursor = '0';
      const strip = key('').length;
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${key(prefix)}*`, 'COUNT', 200);
        cursor = next;
        for (const k of keys) if (out.length < limit) out.push(k.slice(strip));
      } while (cursor !== '0' && out.length < limit);
      return out;
    },
  };
}
