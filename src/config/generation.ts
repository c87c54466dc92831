/**
 * The config generation: a short hash of the effective (normalised) config, so an operator can see
 * on `/readyz` and in the metrics which config a replica runs, and replicas can tell when they do
 * not all run the same one (cluster/generations.ts).
 *
 * Stable: object keys sorted, maps and lists in their order (config order is meaningful), unset
 * keys left out. What is one replica's own by design is left out too: where it listens, its
 * cluster identity (`replicaId`, `advertiseUrl`) and where on its disk it keeps the pins file
 * (`pinning.file` and `packages.cacheDir`: absolute paths resolved next to each replica's config
 * file), and the host of
 * its own `advertiseUrl` in `allowedHosts` (each replica lists its own address, for the probes of
 * its orchestrator). Secrets (child env values, upstream headers, token
 * exchange client secrets, API key hashes, cluster keys, the Redis URL, which may carry a password) enter only as
 * an HMAC under `secretKey`, so a changed secret changes the generation while the hash, shown to
 * anyone who can reach `/readyz`, cannot be used to guess a weak secret offline: in a cluster the
 * key is derived from the cluster key (the same on every replica), otherwise it is random per
 * process (nothing to compare with).
 */
import { createHash, createHmac } from 'node:crypto';
import type { GatewayConfig } from './types.ts';

/** Keys whose values are secrets wherever they appear (an API key's SHA-256 too: unsalted): every string under them is hidden. */
const SECRET_KEYS = new Set(['env', 'headers', 'clientSecret', 'keys', 'sha256', 'password']);

/** Per-replica fields, left out. */
const OWN = { top: new Set(['listen', 'warnings']), cluster: new Set(['replicaId', 'advertiseUrl']) };

type Hide = (value: string) => string;

function canonical(value: unknown, hide: Hide, secret: boolean): unknown {
  if (typeof value === 'string') return secret ? hide(value) : value;
  if (Array.isArray(value)) return value.map((item) => canonical(item, hide, secret));
  if (value instanceof Map) return [...value].map(([key, item]) => [String(key), canonical(item, hide, secret)]);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined || typeof item === 'function') continue;
    out[key] = canonical(item, hide, secret || SECRET_KEYS.has(key));
  }
  return out;
}

/** The config as the generation sees it: per-replica fields out, secrets hidden, keys sorted. */
export function canonicalConfig(config: GatewayConfig, secretKey: string): string {
  const hide: Hide = (value) => `hmac:${createHmac('sha256', secretKey).update(value).digest('base64url').slice(0, 16)}`;
  const top: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) if (!OWN.top.has(key)) top[key] = value;
  const cluster = config.cluster;
  if (cluster !== undefined) {
    const kept: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(cluster)) if (!OWN.cluster.has(key)) kept[key] = value;
    // The Redis URL may carry a password (a target's URL is not hidden: it names the server).
    kept.redis = { ...cluster.redis, url: hide(cluster.redis.url) };
    top.cluster = kept;
    const own = new URL(cluster.advertiseUrl).host;
    if (config.allowedHosts !== undefined) top.allowedHosts = config.allowedHosts.filter((host) => host !== own);
  }
  if (config.pinning !== undefined) {
    const { file: _own, ...pinning } = config.pinning;
    top.pinning = pinning;
  }
  if (config.packages !== undefined) {
    const { cacheDir: _own, ...packages } = config.packages;
    top.packages = packages;
  }
  return JSON.stringify(canonical(top, hide, false));
}

/** The secret key of the HMAC: from the cluster's first key in a cluster, else random (per process). */
export function generationKey(config: GatewayConfig, random: () => string): string {
  const first = config.cluster?.keys[0];
  return first === undefined ? random() : createHash('sha256').update(`switchboard config generation\u0000${first}`).digest('base64url');
}

/** 16 hex digits of SHA-256 over the canonical config. */
export function configGeneration(config: GatewayConfig, secretKey: string): string {
  return createHash('sha256').update(canonicalConfig(config, secretKey)).digest('hex').slice(0, 16);
}
