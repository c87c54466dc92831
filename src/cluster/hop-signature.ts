/**
 * The signature of a replica hop (docs/scaling.md, "The hop"): the edge replica forwards a request
 * to the session's owner with an HMAC-SHA256, from the first key of the ring, over the method, the
 * URL (path and query), the session id, the time, the principal it verified, the SHA-256 of the
 * body and the sealed credential (if any). The owner accepts the hop, and the principal it names,
 * only when a key of the ring verifies it and it is at most `MAX_SKEW_MS` old (or early); then the
 * body it reads must have the digest the MAC covers (replica-hop-guard.ts). A hop header from
 * anyone without the key is refused, and a body changed on the way is too.
 *
 * Header value: `v2.<unix ms>.<base64url SHA-256 of the body>.<base64url MAC>`.
 *
 * The caller's credential travels only when the owner's target needs it (forwardAuthorization,
 * token exchange), sealed with AES-256-GCM under a key of its own, bound to the hop it rides in:
 * it is never a plain header between replicas.
 */
import { createCipheriv, createDecipheriv, createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DerivedKeys } from './keyring.ts';

/** What a hop's MAC covers. `sessionId`, `principal`, `credential`: '' when none. */
export interface HopFacts {
  readonly method: string;
  readonly url: string;
  readonly sessionId: string;
  readonly principal: string;
  /** The sealed credential as it travels (sealCredential), or ''. */
  readonly credential: string;
}

export interface HopSigner {
  /** The hop header of a request with these facts and this body ('' when none). */
  sign(facts: HopFacts, body: string, now?: number): string;
  /**
   * Whether `value` is a fresh signature of `facts` by a key of the ring: the body digest it
   * covers (to compare with the body once read: `digest`), or undefined.
   */
  verify(value: string, facts: HopFacts, now?: number): string | undefined;
  /** The base64url SHA-256 of a body, as the signature carries it. */
  digest(body: string): string;
  /** The caller's credential sealed for the owner, bound to `facts` (their credential field is ignored). */
  sealCredential(credential: string, facts: HopFacts): string;
  /** The credential a verified hop carries, or undefined when no key of the ring opens it. */
  openCredential(sealed: string, facts: HopFacts): string | undefined;
}

/** 30 s: clocks of replicas agree within this (NTP), and a captured hop is worthless after it. */
export const MAX_SKEW_MS = 30_000;
// 32 bytes in base64url: 42 characters and a last one whose two spare bits are zero (one spelling only).
const B64_32 = '[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]';
const SIGNATURE = new RegExp(`^v2\\.(\\d{1,15})\\.(${B64_32})\\.(${B64_32})$`);
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** An Authorization header longer than this is not carried (a JWT is a few KB at most). */
const MAX_CREDENTIAL_CHARS = 16_384;

function mac(key: DerivedKeys['hop'], facts: HopFacts, at: string, digest: string): Buffer {
  // Each field on its own line; none of them can hold a newline (header values, a request line, base64url).
  const text = `v2\n${facts.method}\n${facts.url}\n${facts.sessionId}\n${at}\n${facts.principal}\n${digest}\n${facts.credential}`;
  return createHmac('sha256', key).update(text).digest();
}

/** The associated data of a sealed credential: the hop it may ride in, nothing else. */
const credentialAad = (facts: HopFacts) => Buffer.from(`v2\n${facts.method}\n${facts.url}\n${facts.sessionId}\n${facts.principal}`, 'utf8');

function openWith(key: DerivedKeys['credential'], bytes: Buffer, aad: Buffer): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(aad);
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

export function createHopSigner(ring: readonly DerivedKeys[]): HopSigner {
  const first = ring[0];
  if (first === undefined) throw new Error('the cluster key ring is empty');
  // One-shot crypto.hash: no Hash object per hop.
  const digest = (body: string) => hash('sha256', body, 'base64url');
  return {
    digest,
    sign(facts, body, now = Date.now()) {
      const at = String(now);
      const bodyDigest = digest(body);
      return `v2.${at}.${bodyDigest}.${mac(first.hop, facts, at, bodyDigest).toString('base64url')}`;
    },
    verify(value, facts, now = Date.now()) {
      const match = SIGNATURE.exec(value);
      if (match === null) return undefined;
      const at = match[1] as string;
      if (Math.abs(now - Number(at)) > MAX_SKEW_MS) return undefined;
      const bodyDigest = match[2] as string;
      const given = Buffer.from(match[3] as string, 'base64url');
      return ring.some((keys) => timingSafeEqual(mac(keys.hop, facts, at, bodyDigest), given)) ? bodyDigest : undefined;
    },
    sealCredential(credential, facts) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', first.credential, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(credentialAad(facts));
      const body = Buffer.concat([cipher.update(credential.slice(0, MAX_CREDENTIAL_CHARS), 'utf8'), cipher.final()]);
      return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
    },
    openCredential(sealed, facts) {
      if (sealed.length > MAX_CREDENTIAL_CHARS * 2 || !/^[A-Za-z0-9_-]+$/.test(sealed)) return undefined;
      const bytes = Buffer.from(sealed, 'base64url');
      if (bytes.length < IV_BYTES + TAG_BYTES) return undefined;
      const aad = credentialAad(facts);
      for (const keys of ring) {
        const opened = openWith(keys.credential, bytes, aad);
        if (opened !== undefined) return opened;
      }
      return undefined;
    },
  };
}
