/**
 * A replica's entry in the directory (docs/scaling.md, "The directory"), signed: Redis is shared,
 * and whoever can write it could otherwise name any URL as a replica and receive the requests
 * relayed to it (issue 30 item 1). Each entry carries an HMAC-SHA256 under a key derived from the
 * cluster keys (keyring.ts `directory`) over the key prefix, the replica id, its URL, its
 * draining flag and the time it was written. A reader takes an entry only when a key of the ring
 * verifies it, its id is the one its Redis key names, and it was written within the entry's TTL
 * (plus the clock skew replicas may have): an unsigned, foreign, altered, moved or stale entry is
 * no entry at all.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { DerivedKeys } from './keyring.ts';
import { MAX_SKEW_MS } from './hop-signature.ts';

export interface ReplicaEntry {
  readonly url: string;
  readonly draining: boolean;
}

/** Why an entry read from Redis was not taken. */
export type Refusal = 'unsigned' | 'foreign' | 'moved' | 'stale';

export type Verdict = { readonly entry: ReplicaEntry } | { readonly refused: Refusal };

export interface EntryCodec {
  /** The value this replica writes for itself at `now`. */
  write(id: string, entry: ReplicaEntry, now?: number): string;
  /** The entry `text` (read under `id`'s key) names, or why it is refused. */
  read(id: string, text: string, now?: number): Verdict;
}

// 32 bytes in base64url, one spelling only (as hop-signature.ts).
const MAC = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** `ttlMs`: replicaTtlMs; an entry older than that (plus skew) was not renewed and is not trusted whatever Redis says about its TTL. */
export function createEntryCodec(ring: readonly DerivedKeys[], keyPrefix: string, ttlMs: number): EntryCodec {
  const first = ring[0];
  if (first === undefined) throw new Error('the cluster key ring is empty');
  const mac = (key: DerivedKeys['directory'], id: string, entry: ReplicaEntry, at: number) =>
    createHmac('sha256', key).update(`directory v2\n${keyPrefix}\n${id}\n${entry.url}\n${entry.draining ? 1 : 0}\n${at}`).digest();
  return {
    write(id, entry, now = Date.now()) {
      return JSON.stringify({ v: 2, id, url: entry.url, draining: entry.draining, at: now, mac: mac(first.directory, id, entry, now).toString('base64url') });
    },
    read(id, text, now = Date.now()) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return { refused: 'unsigned' };
      }
      const { v, id: named, url, draining, at, mac: given } = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
      if (v !== 2 || typeof named !== 'string' || typeof url !== 'string' || typeof draining !== 'boolean' || typeof at !== 'number' || !Number.isSafeInteger(at) || typeof given !== 'string' || !MAC.test(given)) {
        return { refused: 'unsigned' };
      }
      const entry = { url, draining };
      const bytes = Buffer.from(given, 'base64url');
      if (!ring.some((keys) => timingSafeEqual(mac(keys.directory, named, entry, at), bytes))) return { refused: 'foreign' };
      // Signed by a replica of ours, but for another id: copied under this key.
      if (named !== id || !isHttpUrl(url)) return { refused: 'moved' };
      if (now - at > ttlMs + MAX_SKEW_MS || at - now > MAX_SKEW_MS) return { refused: 'stale' };
      return { entry };
    },
  };
}
