/**
 * `gateway.cluster`: replicas of one gateway behind a load balancer (docs/scaling.md). Unset, the
 * gateway is one process and nothing here costs anything. docs/configuration.md mirrors this file.
 */
import { z } from 'zod';
import { anObject, MAX_DURATION_MS, positive } from './schema-kit.ts';

/** A replica id appears in sealed session ids, Redis keys and metrics: one safe token. */
const REPLICA_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

const httpUrl = z.string({ error: 'expected a URL' }).refine(
  (value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '' && url.search === '' && url.hash === '';
    } catch {
      return false;
    }
  },
  { error: 'expected an http(s) URL without credentials, query or fragment, such as http://10.0.0.5:8080' },
);

const redisUrl = z
  .string({ error: 'expected a URL' })
  .refine(
    (value) => {
      try {
        const url = new URL(value);
        return url.protocol === 'redis:' || url.protocol === 'rediss:';
      } catch {
        return false;
      }
    },
    { error: 'expected a redis:// or rediss:// URL, such as redis://redis:6379' },
  )
  // A password in a URL ends up wherever the URL is printed: it has its own keys, which are never logged.
  .refine((value) => !/^rediss?:\/\/[^/]*@/i.test(value), { error: 'put the credentials in redis.username and redis.password ("${REDIS_PASSWORD}"), not in the URL' });

/** A key a person could guess seals nothing: 32 characters at least (e.g. `openssl rand -base64 32`). */
const clusterKey = z.string({ error: 'expected a string' }).min(32, { error: 'a cluster key needs at least 32 characters (openssl rand -base64 32 makes one)' });

const redisSchema = z.strictObject({
  url: redisUrl,
  /**
   * "local": while Redis is unreachable each replica keeps serving, with rate limits counted on
   * its own (so the cluster may admit up to N times the rate) and the last directory it read;
   * sessions on their owner never depend on Redis. "closed" refuses rate-limited requests instead.
   * Availability first is what a gateway in front of working clients owes them.
   */
  failMode: z.enum(['local', 'closed'], { error: 'expected "local" or "closed"' }).default('local'),
  /** "switchboard:": every key the cluster writes starts with it, so one Redis can serve several clusters. */
  keyPrefix: z.string({ error: 'expected a string' }).regex(/^[A-Za-z0-9:_.-]{0,64}$/, { error: 'use up to 64 letters, digits, ":", "_", "." or "-"' }).default('switchboard:'),
  /** 500 ms: a Redis command slower than this counts as Redis unreachable (failMode decides); requests never wait longer. */
  commandTimeoutMs: positive(MAX_DURATION_MS).default(500),
  /** Redis 6 ACL user; unset: the `default` user (with `password`: classic AUTH). */
  username: z.string({ error: 'expected a string' }).min(1, { error: 'expected a user name' }).optional(),
  /** AUTH password (`"${REDIS_PASSWORD}"`): never logged, hidden in the config generation. Unset: no AUTH (a Redis only the replicas can reach). */
  password: z.string({ error: 'expected a string' }).min(1, { error: 'expected a password' }).optional(),
  /** PEM file of the CA that signed a `rediss://` server's certificate; unset: the system's CAs. */
  caFile: z.string({ error: 'expected a file path' }).min(1, { error: 'expected a file path' }).optional(),
}, anObject).refine((redis) => redis.caFile === undefined || redis.url.toLowerCase().startsWith('rediss:'), { error: 'caFile needs a rediss:// URL (TLS)', path: ['caFile'] });

export const clusterSchema = z.strictObject({
  /** Unset: the host name and a random suffix, unique per start. */
  replicaId: z.string({ error: 'expected a string' }).regex(REPLICA_ID, { error: 'use 1-63 letters, digits, "_", "." or "-", starting with a letter or digit' }).optional(),
  /** How the other replicas reach this one (in Kubernetes, from the pod IP). */
  advertiseUrl: httpUrl,
  redis: redisSchema,
  /** The first key seals session ids and hop signatures; every key opens them (rotation: add the new key first). */
  keys: z.array(clusterKey, { error: 'expected a list of keys' }).min(1, { error: 'the cluster needs at least one key' }).max(8, { error: 'at most 8 keys' }),
  /** 1 s: a replica renews its directory entry this often. */
  heartbeatMs: positive(60_000).default(1_000),
  /**
   * 3 s: a replica whose entry was not renewed for this long is gone, and its sessions get 404 (a
   * refused connection is noticed at once). Three heartbeats, so one slow beat is not a death.
   */
  replicaTtlMs: positive(MAX_DURATION_MS).default(3_000),
  /** 1 s: a forwarded request that cannot connect to its owner in this time treats the owner as gone. */
  forwardConnectTimeoutMs: positive(60_000).default(1_000),
}, anObject).refine((cluster) => cluster.replicaTtlMs > cluster.heartbeatMs, { error: 'replicaTtlMs must be longer than heartbeatMs', path: ['replicaTtlMs'] });

export type ClusterSection = z.output<typeof clusterSchema>;
