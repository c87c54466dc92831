/**
 * The per-user token vault: what the gateway holds for each (principal, target) whose owner
 * connected an upstream account (docs/upstreams.md, "Each user's own account"), plus the consents in
 * progress and the clients the gateway registered. Every record is sealed with AES-256-GCM under a
 * key derived (HKDF-SHA256, purpose-bound) from `gateway.oauth.key`; its id is an HMAC of what it is
 * for under another derived key, and that id is the AEAD's associated data. So the store (a file,
 * Redis) learns neither tokens nor principal names, and a record moved to another id (another
 * principal's place) or altered does not open: it counts as absent.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { VaultStore } from '../../cluster/vault-store.ts';

/** Domain separation: the same secret used for anything else derives nothing shared with this. */
const SALT = 'switchboard oauth vault v1';

export type RecordKind = 'conn' | 'flow' | 'client';

export interface Vault {
  /** The record of `kind` for `parts` (principal and target, ...), opened; undefined when absent or not ours. */
  get<T>(kind: RecordKind, parts: readonly string[]): Promise<T | undefined>;
  put(kind: RecordKind, parts: readonly string[], value: unknown, ttlSec?: number): Promise<void>;
  /** Deletes and says whether it was there (single use). */
  take<T>(kind: RecordKind, parts: readonly string[]): Promise<T | undefined>;
  delete(kind: RecordKind, parts: readonly string[]): Promise<void>;
  /** Every record of `kind`, opened (at most `limit`); those that do not open are skipped. */
  all<T>(kind: RecordKind, limit: number): Promise<T[]>;
}

export interface VaultKeys {
  readonly seal: Buffer;
  readonly id: Buffer;
}

export function deriveVaultKeys(secret: string): VaultKeys {
  const derive = (use: string) => Buffer.from(hkdfSync('sha256', secret, SALT, use, 32));
  return { seal: derive('seal'), id: derive('record id') };
}

/** `v1.<iv>.<ciphertext+tag>`, base64url; `aad` is the record's id. */
export function seal(key: Buffer, aad: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `v1.${iv.toString('base64url')}.${body.toString('base64url')}`;
}

export function unseal(key: Buffer, aad: string, sealed: string): string | undefined {
  const [version, ivText, bodyText] = sealed.split('.');
  if (version !== 'v1' || ivText === undefined || bodyText === undefined) return undefined;
  try {
    const iv = Buffer.from(ivText, 'base64url');
    const body = Buffer.from(bodyText, 'base64url');
    if (iv.length !== 12 || body.length < 16) return undefined;
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(body.subarray(body.length - 16));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

export function createVault(keys: VaultKeys, store: VaultStore): Vault {
  // Parts joined with NUL (no principal id or target name holds one), hashed: one id per record.
  const idOf = (kind: RecordKind, parts: readonly string[]) => `${kind}:${createHmac('sha256', keys.id).update(parts.join('\0')).digest('base64url')}`;
  const open = <T>(id: string, sealed: string | undefined): T | undefined => {
    if (sealed === undefined) return undefined;
    const plain = unseal(keys.seal, id, sealed);
    return plain === undefined ? undefined : (JSON.parse(plain) as T);
  };
  return {
    async get(kind, parts) {
      const id = idOf(kind, parts);
      return open(id, await store.get(id));
    },
    async put(kind, parts, value, ttlSec) {
      const id = idOf(kind, parts);
      await store.set(id, seal(keys.seal, id, JSON.stringify(value)), ttlSec);
    },
    async take(kind, parts) {
      const id = idOf(kind, parts);
      const sealed = await store.get(id);
      // Whoever deletes first redeems it: a replayed state finds nothing, on any replica.
      if (sealed === undefined || !(await store.delete(id))) return undefined;
      return open(id, sealed);
    },
    async delete(kind, parts) {
      await store.delete(idOf(kind, parts));
    },
    async all<T>(kind: RecordKind, limit: number): Promise<T[]> {
      const out: T[] = [];
      for (const id of await store.ids(`${kind}:`, limit)) {
        const value = open<T>(id, await store.get(id));
        if (value !== undefined) out.push(value);
      }
      return out;
    },
  };
}
