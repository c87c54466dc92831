/**
 * Who shares a held session (hosts.ts): its scope and its key.
 *
 * Keyed by endpoint, principal, the caller's credential where the upstream may see it, the grant
 * (`RouteEndpoint.grantKey`: config generation and the policy rules for the caller) and the client
 * capabilities an upstream may act on (sampling, elicitation, roots): one caller's upstream
 * identity never serves another, every request is judged by its own credential and the config in
 * force, and an upstream only asks a client for what that client declared.
 *
 * The credential counts (a keyed hash of the Authorization header, never the header) when a target
 * behind the endpoint forwards it (`forwardAuthorization`), and without a principal (no
 * gateway.auth), where it is all that tells callers apart. Callers without auth that present no
 * credential are one caller, `anonymous`, as policy and rate limits see them (docs/eras.md).
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { JsonObject } from '../../jsonrpc/types.ts';
import type { Principal } from '../../upstream/caller.ts';
import type { RouteEndpoint } from '../endpoint-table.ts';

/** Who asks, and what they declared, for a host. */
export interface HostCaller {
  readonly endpoint: RouteEndpoint;
  readonly principal: Principal | undefined;
  readonly authorization: string | undefined;
  readonly capabilities: JsonObject;
  /** `askingCapabilities(capabilities)`, worked out once per request. */
  readonly asking: string;
  readonly clientInfo: JsonObject | undefined;
}

/** What `askingCapabilities` says of a caller that declared none of them: nothing can be asked of it. */
export const ASKS_NOTHING = '---';

const has = (value: unknown, key: string): boolean => typeof value === 'object' && value !== null && key in value;

/**
 * The capabilities an upstream acts on when it asks the client something, as the spec defines
 * them: sampling (with tools, with context inclusion), elicitation (form, url; an empty object is
 * form), roots (list changes). Only these facts key a host, never the objects' other contents: a
 * caller that varies what it declares inside them (40 different `sampling` objects) still maps to
 * one of a handful of keys, so it cannot multiply held sessions, and callers that declare the same
 * abilities share one. What the upstream saw is the first such caller's declaration.
 */
export function askingCapabilities(capabilities: JsonObject): string {
  const { sampling, elicitation, roots } = capabilities;
  const elicits = elicitation !== undefined && elicitation !== null;
  // Per request: plain concatenation, no array.
  const s = sampling === undefined || sampling === null ? '-' : `s${has(sampling, 'tools') ? 't' : ''}${has(sampling, 'context') ? 'c' : ''}`;
  const e = elicits ? `e${has(elicitation, 'form') || !has(elicitation, 'url') ? 'f' : ''}${has(elicitation, 'url') ? 'u' : ''}` : '-';
  const r = roots === undefined || roots === null ? '-' : `r${(roots as { listChanged?: unknown }).listChanged === true ? 'l' : ''}`;
  return s + e + r;
}

export interface HostKeys {
  /** Endpoint, principal and credential: who may resume a host's calls and hear its notifications. */
  scopeOf(caller: HostCaller): string;
  /** `scope` (the caller's), the grant and the asking capabilities: callers of one key share hosts. */
  keyOf(caller: HostCaller, scope: string): string;
}

export function createHostKeys(): HostKeys {
  /** Keys the credential hashes: per pool (per gateway), never stored or shown. */
  const secret = randomBytes(32);

  /**
   * The caller's credential as far as the upstream or the lack of a principal makes it an identity:
   * `f` + its hash where a target forwards it, `a` + its hash without a principal, else nothing.
   */
  const credentialOf = (caller: HostCaller): string => {
    const forwarded = caller.endpoint.forwardsCredential;
    if (!forwarded && caller.principal !== undefined) return '';
    const auth = caller.authorization;
    const hash = auth === undefined ? '' : createHmac('sha256', secret).update(auth).digest('base64url');
    return `${forwarded ? 'f' : 'a'}${hash}`;
  };

  return {
    scopeOf: (caller) => `${caller.endpoint.endpoint}\u0000${caller.principal?.id ?? ''}\u0000${credentialOf(caller)}`,
    keyOf: (caller, scope) => `${scope}\u0000${caller.endpoint.grantKey(caller.principal)}\u0000${caller.asking}`,
  };
}
