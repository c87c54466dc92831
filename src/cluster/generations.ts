/**
 * Which config generation (config/generation.ts) each replica runs, published in Redis: every
 * `heartbeatMs` a replica writes `<prefix>generation:<replicaId>` with a TTL of `replicaTtlMs`
 * (gone with the replica) and lists itself in the index `<prefix>generations`, in one script that
 * also reads the others'. A replica whose generation is not the one most replicas run (or that
 * ties with another) logs it, once per change, and once when it agrees again: a rolling update
 * shows in the log while it runs, a replica left behind stays visible.
 *
 * Nothing here is on a request's path; Redis away just skips a beat (the rate limits log that).
 */
import type { Logger } from '../log/logger.ts';
import type { ClusterRedis } from './redis.ts';

/** KEYS[1] own key, KEYS[2] the index; ARGV id, generation, TTL ms, key prefix. Returns [id, generation, ...] of the live ones. */
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('PEXPIRE', KEYS[2], ttl)
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local gen = redis.call('GET', ARGV[4] .. 'generation:' .. id)
  if gen then
    table.insert(out, id)
    table.insert(out, gen)
  end
end
return out
`;

export interface Verdict {
  /** This replica's generation is not the single most common one. */
  readonly differs: boolean;
  /** The other replicas whose generation is not this one's, by id. */
  readonly others: Readonly<Record<string, string>>;
}

/** Judges `own` against every live replica's (itself included in `all`). */
export function judgeGeneration(selfId: string, own: string, all: ReadonlyMap<string, string>): Verdict {
  const counts = new Map<string, number>();
  for (const [id, gen] of all) if (id !== selfId) counts.set(gen, (counts.get(gen) ?? 0) + 1);
  counts.set(own, (counts.get(own) ?? 0) + 1);
  const most = Math.max(...counts.values());
  const leaders = [...counts.values()].filter((n) => n === most).length;
  const differs = (counts.get(own) as number) < most || leaders > 1;
  const others: Record<string, string> = {};
  for (const [id, gen] of [...all].sort(([a], [b]) => (a < b ? -1 : 1))) if (id !== selfId && gen !== own) others[id] = gen;
  return { differs, others };
}

export interface GenerationOptions {
  readonly keyPrefix: string;
  readonly replicaId: string;
  readonly heartbeatMs: number;
  readonly replicaTtlMs: number;
}

/** Publishes `current()` every beat and logs a difference; `stop` withdraws this replica's entry. */
export function publishGeneration(redis: ClusterRedis, options: GenerationOptions, current: () => string, logger: Logger): { stop(): Promise<void> } {
  const log = logger.child({ component: 'config-generation' });
  const { keyPrefix, replicaId } = options;
  const own = `${keyPrefix}generation:${replicaId}`;
  const index = `${keyPrefix}generations`;
  let said = '';
  let beating = false;

  const beat = async () => {
    if (beating || redis.state() !== 'ready') return;
    beating = true;
    try {
      const generation = current();
      const flat = (await redis.client.eval(SCRIPT, 2, own, index, replicaId, generation, options.replicaTtlMs, keyPrefix)) as string[];
      const all = new Map<string, string>();
      for (let i = 0; i + 1 < flat.length; i += 2) all.set(flat[i] as string, flat[i + 1] as string);
      const verdict = judgeGeneration(replicaId, generation, all);
      const now = verdict.differs ? JSON.stringify([generation, verdict.others]) : '';
      if (now === said) return;
      if (verdict.differs) log.warn({ generation, others: verdict.others }, 'this replica runs another config generation than the other replicas');
      else log.info({ generation }, 'this replica runs the same config generation as the other replicas again');
      said = now;
    } catch (err) {
      log.debug({ err }, 'could not publish the config generation');
    } finally {
      beating = false;
    }
  };

  void beat();
  const timer = setInterval(() => void beat(), options.heartbeatMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      if (redis.state() !== 'ready') return;
      await Promise.all([redis.client.del(own), redis.client.zrem(index, replicaId)]).catch(() => undefined);
    },
  };
}
