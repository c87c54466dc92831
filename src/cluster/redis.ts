/**
 * The cluster's Redis connection (docs/scaling.md). Commands never queue while Redis is away: each
 * fails at once (or after `commandTimeoutMs`), and the caller's `failMode` decides what that means,
 * so no request waits on a Redis that is not there. The connection keeps retrying in the
 * background with a bounded backoff, and the state it reports is read without a round trip.
 *
 * AUTH (`username`, `password`) and TLS (`rediss://`, `caFile`) come from the config; the password
 * is handed to ioredis only, never logged (its errors name the failure, not the credentials).
 */
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import type { ClusterConfig } from '../config/types.ts';

export type RedisState = 'connecting' | 'ready' | 'down';

export interface ClusterRedis {
  readonly client: Redis;
  /** Whether commands can be sent now (no round trip). */
  state(): RedisState;
  /** Resolves once connected, or rejects after `ms`. */
  ready(ms: number): Promise<void>;
  close(): Promise<void>;
}

/** Up to 2 s between reconnection attempts: a Redis that comes back is used again within that. */
const MAX_BACKOFF_MS = 2_000;

export function openRedis(config: ClusterConfig['redis'], onState?: (state: RedisState, error?: Error) => void): ClusterRedis {
  let current: RedisState = 'connecting';
  // rediss:// is TLS (ioredis reads the scheme); a private CA is given as a file, read once here.
  const tls = config.url.toLowerCase().startsWith('rediss:') ? { ...(config.caFile === undefined ? {} : { ca: readFileSync(config.caFile) }) } : undefined;
  const client = new Redis(config.url, {
    ...(config.username === undefined ? {} : { username: config.username }),
    ...(config.password === undefined ? {} : { password: config.password }),
    ...(tls === undefined ? {} : { tls }),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: config.commandTimeoutMs,
    connectTimeout: Math.max(config.commandTimeoutMs, 1_000),
    retryStrategy: (times) => Math.min(100 * times, MAX_BACKOFF_MS),
    lazyConnect: false,
  });
  const set = (next: RedisState, error?: Error) => {
    if (next === current) return;
    current = next;
    onState?.(next, error);
  };
  client.on('ready', () => set('ready'));
  client.on('error', (error: Error) => set('down', error));
  client.on('close', () => set('down'));
  return {
    client,
    state: () => current,
    ready(ms) {
      if (current === 'ready') return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          client.off('ready', onReady);
          reject(new Error(`Redis not reachable within ${ms} ms`));
        }, ms);
        const onReady = () => {
          clearTimeout(timer);
          resolve();
        };
        client.once('ready', onReady);
      });
    },
    async close() {
      client.disconnect(false);
    },
  };
}
