/**
 * The signature of a replica hop (docs/scaling.md): the edge replica forwards a request
 * to the session's owner with an HMAC-SHA256, from the first key of the ring, over the method, the
 * URL (path and query), the session id, the time and the principal it verified. The owner accepts
 * the hop, and the principal it names, only when a key of the ring verifies it and it is at most
 * `MAX_SKEW_MS` old (or early): a hop header from anyone without the key is refused.
 *
 * Header value: `v1.<unix ms>.<base64url MAC>`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { DerivedKeys } from './keyring.ts';

/** What a hop's MAC covers. `sessionId`: the Mcp-Session-Id header ('' when none); `principal`: the encoded principal ('' when none). */
export interface HopFacts {
  readonly method: string;
  readonly url: string;
  readonly sessionId: string;
  readonly principal: string;
}

export interface HopSigner {
  sign(facts: HopFacts, now?: number): string;
  /** Whether `value` is a fresh signature of `facts` by a key of the ring. */
  verify(value: string, facts: HopFacts, now?: number): boolean;
}

/** 30 s: clocks of replicas agree within this (NTP), and a captured hop is worthless after it. */
export const MAX_SKEW_MS = 30_000;
// 32 bytes in base64url: 42 characters and a last one whose two spare bits are zero (one spelling only).
const SIGNATURE = /^v1\.(\d{1,15})\.([A-Za-z0-9_-]{42}[AEIMQUYcgkosw048])$/;

function mac(key: Buffer, facts: HopFacts, at: string): Buffer {
  // Each field on its own line; none of them can hold a newline (HTTP header values and a request line cannot).
  return createHmac('sha256', key).update(`v1\n${facts.method}\n${facts.url}\n${facts.sessionId}\n${at}\n${facts.principal}`).digest();
}

export function createHopSigner(ring: readonly DerivedKeys[]): HopSigner {
  const first = ring[0];
  if (first === undefined) throw new Error('the cluster key ring is empty');
  return {
    sign(facts, now = Date.now()) {
      const at = String(now);
      return `v1.${at}.${mac(first.hop, facts, at).toString('base64url')}`;
    },
    verify(value, facts, now = Date.now()) {
      const match = SIGNATURE.exec(value);
      if (match === null) return false;
      const at = match[1] as string;
      if (Math.abs(now - Number(at)) > MAX_SKEW_MS) return false;
      const given = Buffer.from(match[2] as string, 'base64url');
      return ring.some((keys) => timingSafeEqual(mac(keys.hop, facts, at), given));
    },
  };
}
