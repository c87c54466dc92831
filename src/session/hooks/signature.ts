/**
 * The signature of a hook call (docs/governance.md, "Verifying the signature"): with a
 * `secret`, every POST carries
 *
 *   X-Switchboard-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
 *
 * over the exact bytes of the body. The hook server recomputes it, compares in constant time, and
 * refuses a `t` too far from its clock (a replayed old call). `verifyHookSignature` is that
 * routine, exported for hook servers written in TypeScript and for the tests.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-switchboard-signature';
/** 5 minutes either way: clocks of two hosts drift by seconds, a captured call is useless later. */
export const SIGNATURE_TOLERANCE_SEC = 300;

const mac = (secret: string, t: string, body: string): string => createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

/** The header value for `body` signed at `nowSec`. */
export function signHookBody(secret: string, body: string, nowSec = Math.floor(Date.now() / 1000)): string {
  const t = String(nowSec);
  return `t=${t},v1=${mac(secret, t, body)}`;
}

/** True when `header` is a signature of `body` with `secret`, made within the tolerance of `nowSec`. */
export function verifyHookSignature(header: string | undefined, body: string, secret: string, nowSec = Math.floor(Date.now() / 1000), toleranceSec = SIGNATURE_TOLERANCE_SEC): boolean {
  if (header === undefined) return false;
  const parts = new Map(header.split(',').map((part) => part.trim().split('=', 2) as [string, string | undefined]));
  const t = parts.get('t');
  const v1 = parts.get('v1');
  if (t === undefined || v1 === undefined || !/^\d{1,12}$/.test(t) || !/^[0-9a-f]{64}$/.test(v1)) return false;
  if (Math.abs(nowSec - Number(t)) > toleranceSec) return false;
  return timingSafeEqual(Buffer.from(v1, 'hex'), Buffer.from(mac(secret, t, body), 'hex'));
}
