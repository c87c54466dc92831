/**
 * The cluster's key ring (`gateway.cluster.keys`): each configured key yields, through HKDF-SHA256,
 * one key per use, so a key that seals session ids never also signs hops or directory entries. The
 * first key seals and signs; every key opens and verifies (rotation: add the new key first, keep
 * the old one until the sessions it sealed are gone). Derived once at start; nothing per request.
 *
 * The HMAC and AES keys are KeyObjects: node:crypto given a Buffer imports it again on every
 * createHmac / createDecipheriv, which cost more than the MAC itself on the hop's path (37 against
 * 6 microseconds per AES-GCM open, measured; docs/scaling.md "Figures").
 */
import { createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';

export interface DerivedKeys {
  /** AES-256-GCM key of sealed session ids (sealed-id.ts). */
  readonly seal: KeyObject;
  /** HMAC-SHA256 key of replica hops (hop-signature.ts). */
  readonly hop: KeyObject;
  /** AES-256-GCM key of the caller's credential inside a hop, when the owner's target needs it (hop-signature.ts). */
  readonly credential: KeyObject;
  /** HMAC-SHA256 key of the replica directory's entries in Redis (directory.ts). */
  readonly directory: KeyObject;
  /** AES-256-GCM key of the 2026 `requestState` (session/stateless/request-state.ts): any replica reads its owner. */
  readonly state: Buffer;
  /** AES-256-GCM key of the operator console's cookies (http/console-seal.ts): any replica opens them. */
  readonly console: Buffer;
}

/** Domain separation: a Switchboard cluster key used elsewhere derives nothing shared with this. */
const SALT = 'switchboard cluster v1';

function derive(key: string, use: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, SALT, use, 32));
}

/** The ring in config order: index 0 seals and signs. */
export function deriveKeyRing(keys: readonly string[]): readonly DerivedKeys[] {
  if (keys.length === 0) throw new Error('the cluster key ring is empty');
  return Object.freeze(
    keys.map((key) =>
      Object.freeze({
        seal: createSecretKey(derive(key, 'session id')),
        hop: createSecretKey(derive(key, 'replica hop')),
        credential: createSecretKey(derive(key, 'hop credential')),
        directory: createSecretKey(derive(key, 'replica directory')),
        state: derive(key, 'request state'),
        console: derive(key, 'console cookie'),
      }),
    ),
  );
}
