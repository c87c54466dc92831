/**
 * The `requestState` the gateway hands a 2026 client with an `input_required` result (SEP-2322).
 * The client must echo it untouched on its retry. It is sealed with AES-256-GCM under a key that
 * lives as long as the gateway (never leaves it, never logged): opaque to the client (it names
 * internal handles) and authenticated, so a forged, altered or replayed state is refused before it
 * can reach a parked upstream call.
 *
 * It binds the retry to who may make it (`scope`: endpoint and principal), to the upstream call it
 * resumes (`host`, `call`), to the round (each state is good once) and to an expiry.
 *
 * With `gateway.cluster` (docs/scaling.md, "The 2026 era across replicas") the key comes from the cluster's key ring instead
 * (the first key seals, every key opens) and the claims name the replica holding the parked call,
 * so any replica can read where a retry belongs; the name is inside the seal, so a client cannot
 * point a retry at another replica.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface StateClaims {
  /** Endpoint and principal the state was issued to. */
  readonly scope: string;
  /** The host (held upstream session) and the call in it. */
  readonly host: string;
  readonly call: number;
  /** The method and name of the request that asked (a retry of anything else is refused). */
  readonly method: string;
  /** Which round of input this state answers (single use). */
  readonly round: number;
  /** Expiry, ms since the epoch. */
  readonly expires: number;
  /** With gateway.cluster: the replica holding the parked call (stamped by the codec). */
  readonly replica?: string;
}

export interface StateCodec {
  seal(claims: StateClaims): string;
  /** The claims of a state this gateway issued, unaltered; undefined for anything else. */
  open(token: unknown): StateClaims | undefined;
}

/** Longest token accepted: a retry cannot make the gateway hash megabytes. */
const MAX_TOKEN_CHARS = 4_096;

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** With gateway.cluster: where the state's keys come from and whose it is. */
export interface StateKeys {
  /** AES-256 keys: the first seals, every one opens (the cluster's ring, cluster/keyring.ts). */
  readonly keys: readonly Buffer[];
  /** This replica's id, written into every state it seals. */
  readonly replica: string;
}

function openWith(key: Buffer, raw: Buffer): StateClaims | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    const text = Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    const claims: unknown = JSON.parse(text);
    return isClaims(claims) ? claims : undefined;
  } catch {
    return undefined;
  }
}

/** `cluster`: the ring's state keys and this replica's id; undefined: a random key of this process. */
export function createStateCodec(cluster?: StateKeys): StateCodec {
  const keys = cluster?.keys ?? [randomBytes(32)];
  const key = keys[0];
  if (key === undefined) throw new Error('no requestState key');
  const replica = cluster?.replica;
  return {
    seal(claims) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const text = JSON.stringify(replica === undefined ? claims : { ...claims, replica });
      const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
    },
    open(token) {
      if (typeof token !== 'string' || token.length > MAX_TOKEN_CHARS) return undefined;
      const raw = Buffer.from(token, 'base64url');
      // base64url decoding skips what is not base64url: the token must be exactly what we wrote.
      if (raw.length <= IV_BYTES + TAG_BYTES || raw.toString('base64url') !== token) return undefined;
      for (const each of keys) {
        const claims = openWith(each, raw);
        if (claims !== undefined) return claims;
      }
      return undefined;
    },
  };
}

function isClaims(value: unknown): value is StateClaims {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return (
    typeof c.scope === 'string' &&
    typeof c.host === 'string' &&
    typeof c.call === 'number' &&
    typeof c.method === 'string' &&
    typeof c.round === 'number' &&
    typeof c.expires === 'number' &&
    (c.replica === undefined || typeof c.replica === 'string')
  );
}
