/**
 * The composite cursor of a merged list: which targets still have pages and each one's own cursor.
 *
 * Opaque and tamper-safe: base64url of a small JSON payload, a `.`, and base64url of an HMAC-SHA256
 * over the payload with a random per-process key. A client can only hand back what the gateway
 * gave it; anything else (edited, truncated, from another gateway process or another list method)
 * is refused with -32602, as the spec asks for an invalid cursor (server/utilities/pagination,
 * "Error Handling").
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Per target: the upstream's own cursor for its next page. Targets absent here are done. */
export type CursorState = Readonly<Record<string, string>>;

interface Payload {
  /** Format version. */
  v: 1;
  /** The list method it belongs to (a tools cursor is no prompts cursor). */
  m: string;
  /** Next cursor per target. */
  t: Record<string, string>;
}

export interface CursorCodec {
  encode(method: string, state: CursorState): string;
  /** The state, or undefined when the cursor is not one of ours for `method`. */
  decode(method: string, cursor: string): CursorState | undefined;
}

const MAX_CURSOR_LENGTH = 64 * 1024;

export function createCursorCodec(key: Buffer = randomBytes(32)): CursorCodec {
  const sign = (payload: string) => createHmac('sha256', key).update(payload).digest();
  return {
    encode(method, state) {
      const payload = Buffer.from(JSON.stringify({ v: 1, m: method, t: state } satisfies Payload)).toString('base64url');
      return `${payload}.${sign(payload).toString('base64url')}`;
    },
    decode(method, cursor) {
      if (cursor.length > MAX_CURSOR_LENGTH) return undefined;
      const dot = cursor.indexOf('.');
      if (dot <= 0) return undefined;
      const payload = cursor.slice(0, dot);
      const mac = Buffer.from(cursor.slice(dot + 1), 'base64url');
      const expected = sign(payload);
      if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return undefined;
      let value: unknown;
      try {
        value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        return undefined;
      }
      if (!isPayload(value) || value.m !== method) return undefined;
      return value.t;
    },
  };
}

function isPayload(value: unknown): value is Payload {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Partial<Payload>;
  if (p.v !== 1 || typeof p.m !== 'string' || typeof p.t !== 'object' || p.t === null || Array.isArray(p.t)) return false;
  return Object.values(p.t).every((c) => typeof c === 'string');
}
