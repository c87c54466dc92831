/**
 * The replica directory in Redis (docs/scaling.md): each replica writes
 * `<keyPrefix>replica:<id>` = {url, draining} with a TTL of `replicaTtlMs`, renewed every
 * `heartbeatMs`; a replica that stops beating (killed, cut off) drops out by itself when its key
 * expires, and its sessions get 404. Lookups are cached for a short while so a replica forwarding
 * many requests asks Redis at most once per `CACHE_MS` per owner, and never on the owner's own
 * requests.
 *
 * Entries are signed (directory-entry.ts): one that does not verify is no entry (404 for its
 * sessions, never a request to the URL it names), logged at warn at most once a minute per
 * replica id.
 *
 * Redis unreachable: heartbeats fail quietly (logged once per outage) and lookups answer from the
 * last entry read, however old (an owner that is really gone then shows as a refused connection,
 * which is a 404 too); an owner never read gives undefined (404: the client re-initializes).
 */
import type { Logger } from '../log/logger.ts';
import type { EntryCodec, ReplicaEntry } from './directory-entry.ts';
import type { ClusterRedis } from './redis.ts';

export type { ReplicaEntry } from './directory-entry.ts';

export interface Directory {
  /** Writes this replica's entry now and then every heartbeat. */
  start(): Promise<void>;
  /** Where `replica` is, or undefined when it has no live entry. */
  lookup(replica: string): Promise<ReplicaEntry | undefined>;
  /** A refused connection: treat `replica` as gone until its entry is read again. */
  markGone(replica: string): void;
  /** Marks this replica draining (written at once and by every later heartbeat). */
  drain(): Promise<void>;
  /** Stops beating and deletes this replica's entry. */
  leave(): Promise<void>;
}

export interface DirectoryOptions {
  readonly redis: ClusterRedis;
  readonly keyPrefix: string;
  readonly replicaId: string;
  readonly advertiseUrl: string;
  readonly heartbeatMs: number;
  readonly replicaTtlMs: number;
  readonly logger: Logger;
  /** Signs this replica's entry and verifies the others' (directory-entry.ts). */
  readonly codec: EntryCodec;
}

/** 500 ms (or the heartbeat, if shorter): how stale a cached lookup may be; a death shows this much later at most, beyond the TTL. */
const CACHE_MS = 500;
/** Replica ids only come from ids our own key sealed; past this many, the cache starts afresh. */
const MAX_CACHED = 1_024;

interface Cached {
  entry: ReplicaEntry | undefined;
  at: number;
  /** The last entry Redis gave, kept for when Redis is away. */
  last: ReplicaEntry | undefined;
}

/** A refused entry is logged once a minute per replica id, for at most this many ids at a time. */
const REFUSAL_LOG_MS = 60_000;
const MAX_REFUSALS_TRACKED = 64;

export function createDirectory(options: DirectoryOptions): Directory {
  const { redis, keyPrefix, replicaId, advertiseUrl, heartbeatMs, replicaTtlMs, logger, codec } = options;
  const keyOf = (id: string) => `${keyPrefix}replica:${id}`;
  const fresh = Math.min(CACHE_MS, heartbeatMs);
  const cache = new Map<string, Cached>();
  const inflight = new Map<string, Promise<ReplicaEntry | undefined>>();
  let draining = false;
  let timer: NodeJS.Timeout | undefined;
  let failing = false;
  const refusedAt = new Map<string, number>();

  const parse = (id: string, text: string | null): ReplicaEntry | undefined => {
    if (text === null) return undefined;
    const verdict = codec.read(id, text);
    if ('entry' in verdict) return verdict.entry;
    const now = Date.now();
    if (now - (refusedAt.get(id) ?? -Infinity) >= REFUSAL_LOG_MS) {
      if (refusedAt.size >= MAX_REFUSALS_TRACKED) refusedAt.clear();
      refusedAt.set(id, now);
      // The id is one our own key sealed; what the entry says is not repeated (it may be anyone's).
      logger.warn({ replica: id, reason: verdict.refused }, 'refused a cluster directory entry that is not signed by this cluster; its sessions get 404');
    }
    return undefined;
  };

  const beat = async () => {
    try {
      await redis.client.set(keyOf(replicaId), codec.write(replicaId, { url: advertiseUrl, draining }), 'PX', replicaTtlMs);
      if (failing) logger.info({ replica: replicaId }, 'cluster heartbeat written again');
      failing = false;
    } catch (err) {
      if (!failing) logger.warn({ err, replica: replicaId }, 'cluster heartbeat failed; other replicas will drop this one if it lasts');
      failing = true;
    }
  };

  const read = async (id: string, known: Cached | undefined): Promise<ReplicaEntry | undefined> => {
    let entry: ReplicaEntry | undefined;
    try {
      entry = parse(id, await redis.client.get(keyOf(id)));
    } catch {
      return known?.last;
    }
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(id, { entry, at: Date.now(), last: entry });
    return entry;
  };

  return {
    async start() {
      await beat();
      timer = setInterval(() => void beat(), heartbeatMs);
      timer.unref();
    },
    lookup(id) {
      const known = cache.get(id);
      if (known !== undefined && Date.now() - known.at < fresh) return Promise.resolve(known.entry);
      let pending = inflight.get(id);
      if (pending === undefined) {
        pending = read(id, known).finally(() => inflight.delete(id));
        inflight.set(id, pending);
      }
      return pending;
    },
    markGone(id) {
      // Not even Redis being away brings it back: only a fresh entry does.
      cache.set(id, { entry: undefined, at: Date.now(), last: undefined });
    },
    async drain() {
      draining = true;
      await beat();
    },
    async leave() {
      clearInterval(timer);
      timer = undefined;
      try {
        await redis.client.del(keyOf(replicaId));
      } catch (err) {
        logger.warn({ err, replica: replicaId }, 'could not remove this replica from the cluster directory; its entry expires by itself');
      }
    },
  };
}
