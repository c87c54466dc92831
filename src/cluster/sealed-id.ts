/**
 * Sealed session ids (docs/scaling.md): with `gateway.cluster`, a 2025 session's
 * `Mcp-Session-Id` (and the legacy `sessionId`) is an AES-256-GCM token naming the owner replica,
 * the local session and the principal it is bound to, so any replica can tell where a session
 * lives without asking anyone. A token that does not open with a key of the ring (forged, altered,
 * sealed by another cluster) is simply not a session: the caller answers the same 404 as for an
 * unknown one.
 *
 * Layout, base64url: version (1 byte) | IV (12) | ciphertext | tag (16); the plaintext is the JSON
 * array [replica, local, principal]. The version byte is the associated data too.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { DerivedKeys } from './keyring.ts';

export interface SealedSession {
  /** The replica that owns the session. */
  readonly replica: string;
  /** The session's id on its owner before sealing (unique and random). */
  readonly local: string;
  /** The principal id the session is bound to; '' without client authentication. */
  readonly principal: string;
}

export interface SessionSealer {
  seal(session: SealedSession): string;
  /** The session a token names, or undefined when no key of the ring opens it. */
  open(token: string): SealedSession | undefined;
}

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const AAD = Buffer.from([VERSION]);
/** Longer than any token we seal (replica id <= 63, UUID, principal ids of a few hundred bytes): refused unread. */
const MAX_TOKEN_CHARS = 2_048;
const TOKEN = /^[A-Za-z0-9_-]+$/;

function openWith(key: DerivedKeys['seal'], bytes: Buffer): SealedSession | undefined {
  const iv = bytes.subarray(1, 1 + IV_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  const body = bytes.subarray(1 + IV_BYTES, bytes.length - TAG_BYTES);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(AAD);
    decipher.setAuthTag(tag);
    const text = Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    const parts: unknown = JSON.parse(text);
    if (!Array.isArray(parts) || parts.length !== 3 || !parts.every((p) => typeof p === 'string')) return undefined;
    const [replica, local, principal] = parts as [string, string, string];
    return { replica, local, principal };
  } catch {
    return undefined;
  }
}

export function createSessionSealer(ring: readonly DerivedKeys[]): SessionSealer {
  const first = ring[0];
  if (first === undefined) throw new Error('the cluster key ring is empty');
  return {
    seal({ replica, local, principal }) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', first.seal, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(AAD);
      const body = Buffer.concat([cipher.update(JSON.stringify([replica, local, principal]), 'utf8'), cipher.final()]);
      return Buffer.concat([AAD, iv, body, cipher.getAuthTag()]).toString('base64url');
    },
    open(token) {
      if (token.length > MAX_TOKEN_CHARS || !TOKEN.test(token)) return undefined;
      const bytes = Buffer.from(token, 'base64url');
      if (bytes.length < 1 + IV_BYTES + TAG_BYTES + 2 || bytes[0] !== VERSION) return undefined;
      for (const keys of ring) {
        const opened = openWith(keys.seal, bytes);
        if (opened !== undefined) return opened;
      }
      return undefined;
    },
  };
}
