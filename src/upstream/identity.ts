/**
 * Per-principal upstream identity: a target's `principalHeaders` (remote) and `principalEnv`
 * (stdio) are templates in which `{sub}` and `{principal}` become the caller's subject and id, so
 * an upstream can tell its users apart while the client's own token never reaches it. Without a
 * principal (no gateway.auth) both are `anonymous`. A value is cut to printable ASCII (headers) or
 * stripped of NUL (env): an issuer's `sub` must not be able to inject a header or a variable.
 */

import type { TargetConfig } from '../config/types.ts';

/** Who the upstream works for. */
export interface UpstreamPrincipal {
  readonly id: string;
  readonly subject?: string | undefined;
  /** `jwt` when the caller proved itself with a verified bearer token (the only kind exchanged). */
  readonly kind?: string | undefined;
}

/** A session's latest Authorization, read when it is needed (the client may have refreshed its token). */
export interface LiveAuthorization {
  readonly authorization: string | undefined;
}

/**
 * The token a token exchange may present as the subject: the caller's bearer token, and only when
 * the gateway verified it as a JWT (an API key must never be sent to an authorization server).
 */
export function subjectTokenOf(principal: UpstreamPrincipal | undefined, authorization: string | undefined): string | undefined {
  if (principal?.kind !== 'jwt' || authorization === undefined) return undefined;
  const match = /^Bearer +([\x21-\x7E]+)$/i.exec(authorization);
  return match?.[1];
}

const HEADER_UNSAFE = /[^\x20-\x7e]/g;

function fill(templates: Readonly<Record<string, string>>, principal: UpstreamPrincipal | undefined, unsafe: RegExp): Record<string, string> {
  const id = principal?.id ?? 'anonymous';
  const sub = principal?.subject ?? id;
  const out: Record<string, string> = {};
  for (const [name, template] of Object.entries(templates)) {
    out[name] = template.replaceAll('{sub}', sub.replace(unsafe, '')).replaceAll('{principal}', id.replace(unsafe, ''));
  }
  return out;
}

export const principalHeaders = (templates: Readonly<Record<string, string>>, principal: UpstreamPrincipal | undefined) =>
  fill(templates, principal, HEADER_UNSAFE);

export const principalEnv = (templates: Readonly<Record<string, string>>, principal: UpstreamPrincipal | undefined) => fill(templates, principal, /\0/g);

/**
 * Whether what the upstream says may depend on who calls (per-principal headers or variables, an
 * exchanged or forwarded token): then anything learnt from it in one principal's session (its
 * capabilities, instructions) must not be shown to another.
 */
export function hasPrincipalIdentity(target: TargetConfig): boolean {
  if (target.type === 'stdio') return Object.keys(target.principalEnv).length > 0;
  return Object.keys(target.principalHeaders).length > 0 || target.tokenExchange !== undefined || target.forwardAuthorization;
}
