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
  return new ReplicaDirectory(options);
}

/** The directory's state: the cached lookups, the lookups under way, this replica's heartbeat. */
class ReplicaDirectory implements Directory {
  readonly options: DirectoryOptions;
  /** How long a cached lookup is fresh (CACHE_MS, or the heartbeat if shorter). */
  readonly fresh: number;
  readonly cache = new Map<string, Cached>();
  readonly inflight = new Map<string, Promise<ReplicaEntry | undefined>>();
  readonly refusedAt = new Map<string, number>();
  draining = false;
  timer: NodeJS.Timeout | undefined;
  failing = false;

  constructor(options: DirectoryOptions) {
    this.options = options;
    this.fresh = Math.min(CACHE_MS, options.heartbeatMs);
  }

  async start(): Promise<void> {
    await beat(this);
    this.timer = setInterval(() => void beat(this), this.options.heartbeatMs);
    this.timer.unref();
  }

  lookup(id: string): Promise<ReplicaEntry | undefined> {
    const known = this.cache.get(id);
    if (known !== undefined && Date.now() - known.at < this.fresh) return Promise.resolve(known.entry);
    let pending = this.inflight.get(id);
    if (pending === undefined) {
      pending = read(this, id, known).finally(() => this.inflight.delete(id));
      this.inflight.set(id, pending);
    }
    return pending;
  }

  markGone(id: string): void {
    // Not even Redis being away brings it back: only a fresh entry does.
    this.cache.set(id, { entry: undefined, at: Date.now(), last: undefined });
  }

  async drain(): Promise<void> {
    this.draining = true;
    await beat(this);
  }

  async leave(): Promise<void> {
    const { redis, keyPrefix, replicaId, logger } = this.options;
    clearInterval(this.timer);
    this.timer = undefined;
    try {
      await redis.client.del(keyOf(keyPrefix, replicaId));
    } catch (err) {
      logger.warn({ err, replica: replicaId }, 'could not remove this replica from the cluster directory; its entry expires by itself');
    }
  }
}

function keyOf(keyPrefix: string, id: string): string {
  return `${keyPrefix}replica:${id}`;
}

function parse(d: ReplicaDirectory, id: string, text: string | null): ReplicaEntry | undefined {
  if (text === null) return undefined;
  const verdict = d.options.codec.read(id, text);
  if ('entry' in verdict) return verdict.entry;
  const now = Date.now();
  const refusedAt = d.refusedAt;
  if (now - (refusedAt.get(id) ?? -Infinity) >= REFUSAL_LOG_MS) {
    if (refusedAt.size >= MAX_REFUSALS_TRACKED) refusedAt.clear();
    refusedAt.set(id, now);
    // The id is one our own key sealed; what the entry says is not repeated (it may be anyone's).
    d.options.logger.warn({ replica: id, reason: verdict.refused }, 'refused a cluster directory entry that is not signed by this cluster; its sessions get 404');
  }
  return undefined;
}

async function beat(d: ReplicaDirectory): Promise<void> {
  const { redis, keyPrefix, replicaId, advertiseUrl, replicaTtlMs, logger, codec } = d.options;
  try {
    await redis.client.set(keyOf(keyPrefix, replicaId), codec.write(replicaId, { url: advertiseUrl, draining: d.draining }), 'PX', replicaTtlMs);
    if (d.failing) logger.info({ replica: replicaId }, 'cluster heartbeat written again');
    d.failing = false;
  } catch (err) {
    if (!d.failing) logger.warn({ err, replica: replicaId }, 'cluster heartbeat failed; other replicas will drop this one if it lasts');
    d.failing = true;
  }
}

async function read(d: ReplicaDirectory, id: string, known: Cached | undefined): Promise<ReplicaEntry | undefined> {
  let entry: ReplicaEntry | undefined;
  try {
    entry = parse(d, id, await d.options.redis.client.get(keyOf(d.options.keyPrefix, id)));
  } catch {
    return known?.last;
  }
  if (d.cache.size >= MAX_CACHED) d.cache.clear();
  d.cache.set(id, { entry, at: Date.now(), last: entry });
  return entry;
}
