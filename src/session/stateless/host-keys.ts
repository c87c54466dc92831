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
  // Most callers declare none of them: the one constant, no string made.
  if ((sampling === undefined || sampling === null) && (elicitation === undefined || elicitation === null) && (roots === undefined || roots === null)) return ASKS_NOTHING;
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
  /** Both, made once per endpoint, principal, credential and asking capabilities, then the same strings. */
  identityOf(caller: HostCaller): HostIdentity;
}

export interface HostIdentity {
  readonly scope: string;
  readonly key: string;
  /**
   * Whose hosts `hostsPerCaller` counts together: endpoint and principal, whatever credential they
   * presented (a subject varying its forwarded token must not multiply its held sessions, as it
   * cannot by varying its capabilities); without a principal the credential is the caller: `scope`.
   */
  readonly owner: string;
}

/** Distinct credentials remembered per endpoint and principal before the memo starts over (a bound). */
const MAX_CREDENTIALS = 256;
/** The principal slot of callers without one (no gateway.auth). */
const NO_PRINCIPAL = {};

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

  const scopeOf = (caller: HostCaller) => `${caller.endpoint.endpoint}\u0000${caller.principal?.id ?? ''}\u0000${credentialOf(caller)}`;
  const keyOf = (caller: HostCaller, scope: string) => `${scope}\u0000${caller.endpoint.grantKey(caller.principal)}\u0000${caller.asking}`;

  /**
   * Every 2026 request needs its caller's scope and key. Built afresh they cost a keyed hash (where
   * the credential counts) and strings hashed again by every Map they look up; the memo hands out
   * the same two strings (issue 34). It follows what the strings depend on: the endpoint object (a
   * reload makes new ones, with their own grant), the principal object (one per connection, weakly
   * held), the credential where it counts (at most MAX_CREDENTIALS per endpoint and principal, in
   * memory only, as the store keeps each session's own), and the asking capabilities (a handful).
   */
  const memo = new WeakMap<RouteEndpoint, WeakMap<object, Map<string | undefined, Map<string, HostIdentity>>>>();

  const identityOf = (caller: HostCaller): HostIdentity => {
    const { endpoint, principal } = caller;
    let byPrincipal = memo.get(endpoint);
    if (byPrincipal === undefined) memo.set(endpoint, (byPrincipal = new WeakMap()));
    let byCredential = byPrincipal.get(principal ?? NO_PRINCIPAL);
    if (byCredential === undefined) byPrincipal.set(principal ?? NO_PRINCIPAL, (byCredential = new Map()));
    const credential = endpoint.forwardsCredential || principal === undefined ? caller.authorization : '';
    let byAsking = byCredential.get(credential);
    if (byAsking === undefined) {
      if (byCredential.size >= MAX_CREDENTIALS) byCredential.clear();
      byCredential.set(credential, (byAsking = new Map()));
    }
    let identity = byAsking.get(caller.asking);
    if (identity === undefined) {
      const scope = scopeOf(caller);
      const owner = principal === undefined ? scope : `${endpoint.endpoint}\u0000${principal.id}`;
      byAsking.set(caller.asking, (identity = { scope, key: keyOf(caller, scope), owner }));
    }
    return identity;
  };

  return { scopeOf: (caller) => identityOf(caller).scope, keyOf, identityOf };
}
