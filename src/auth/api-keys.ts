/**
 * API keys: the config holds each key's SHA-256 only. A presented key is hashed once and compared
 * with every configured digest in constant time, without stopping at a match, so the time taken
 * says nothing about which key (or how much of one) matched.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApiKeyConfig } from '../config/types.ts';
import type { Principal } from '../upstream/caller.ts';

export type ApiKeyCheck = (presented: string) => Principal | undefined;

export function createApiKeyCheck(keys: readonly ApiKeyConfig[]): ApiKeyCheck {
  const known = keys.map((k) => ({
    digest: Buffer.from(k.sha256, 'hex'),
    principal: Object.freeze({ id: `key:${k.name}`, kind: 'api-key', subject: k.name, scopes: new Set(k.scopes) }) as Principal,
  }));
  return (presented) => {
    const digest = createHash('sha256').update(presented).digest();
    let found: Principal | undefined;
    for (const k of known) if (timingSafeEqual(digest, k.digest) && found === undefined) found = k.principal;
    return found;
  };
}
