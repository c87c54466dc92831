/**
 * The console's cookies, sealed: AES-256-GCM under a key used for nothing else (cluster/keyring.ts
 * derives `console` from each cluster key; one process draws a random key per start, so its
 * cookies die with it). The first key seals, every key opens (rotation). Each sealed value names
 * its purpose (`session`, `login`) inside the authenticated plaintext, so a login cookie is never
 * taken for a session, and carries its expiry. Nothing in a cookie is readable or forgeable by the
 * browser that holds it.
 *
 * CSRF: each console session carries a random token; a change needs it in `x-csrf-token`
 * (compared in constant time) besides the Origin check (console-routes.ts). A form another site
 * posts can set neither the header nor, with `SameSite=Strict`, the cookie.
 */
import { createCipheriv, createDecipheriv, randomBytes, timingSafeEqual } from 'node:crypto';

export type Purpose = 'session' | 'login';

export interface ConsoleSession {
  /** The operator's principal id (`<issuer>#<sub>`, `key:<name>`, or `local` on loopback without auth). */
  readonly operator: string;
  readonly csrf: string;
  /** ms since the epoch. */
  readonly until: number;
}

export interface LoginState {
  readonly state: string;
  readonly verifier: string;
  readonly nonce: string;
  readonly until: number;
}

export interface Sealer {
  seal(purpose: Purpose, value: object, until: number): string;
  /** The value, or undefined when it is not ours, not for `purpose`, tampered with or expired. */
  open<T extends { until: number }>(purpose: Purpose, sealed: string | undefined): T | undefined;
}

const IV = 12;
const TAG = 16;

export function createSealer(keys: readonly Buffer[]): Sealer {
  if (keys.length === 0) throw new Error('the console needs a key');
  const [first] = keys as [Buffer];
  return {
    seal(purpose, value, until) {
      const iv = randomBytes(IV);
      const cipher = createCipheriv('aes-256-gcm', first, iv);
      const body = Buffer.concat([cipher.update(JSON.stringify({ p: purpose, v: { ...value, until } }), 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    open<T extends { until: number }>(purpose: Purpose, sealed: string | undefined) {
      // 4 KiB is the most a browser keeps per cookie; anything longer is not one of ours.
      if (sealed === undefined || sealed.length > 4_096) return undefined;
      const raw = Buffer.from(sealed, 'base64url');
      if (raw.length <= IV + TAG) return undefined;
      for (const key of keys) {
        try {
          const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV));
          decipher.setAuthTag(raw.subarray(IV, IV + TAG));
          const text = Buffer.concat([decipher.update(raw.subarray(IV + TAG)), decipher.final()]).toString('utf8');
          const parsed = JSON.parse(text) as { p?: unknown; v?: T };
          if (parsed.p !== purpose || typeof parsed.v?.until !== 'number' || parsed.v.until <= Date.now()) return undefined;
          return parsed.v;
        } catch {
          // Another key of the ring may open it.
        }
      }
      return undefined;
    },
  };
}

/** A fresh random token (CSRF, state, nonce, PKCE verifier): 32 bytes, base64url. */
export const randomToken = (): string => randomBytes(32).toString('base64url');

/** Constant-time equality of two tokens. */
export function sameToken(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The value of cookie `name` in a Cookie header (the first of its name), undefined when absent. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
