/**
 * Per-principal upstream identity: a target's `principalHeaders` (remote) and `principalEnv`
 * (stdio) are templates in which `{sub}` and `{principal}` become the caller's subject and id, so
 * an upstream can tell its users apart while the client's own token never reaches it. Without a
 * principal (no gateway.auth) both are `anonymous`.
 *
 * What goes into a value is encoded, never stripped: stripping made `alice\u200b`, `al\u00adice`
 * and `alice` one user upstream. Every character outside printable ASCII, and `%` itself, becomes
 * `%XX` per UTF-8 byte (percent-encoding, RFC 3986 section 2.1; a lone UTF-16 surrogate, which has
 * no UTF-8 form, becomes `%uXXXX`). So a plain value (printable ASCII without `%`) arrives as it is,
 * every encoded one contains `%` and no plain one does, and two different subjects never arrive
 * alike; an issuer's `sub` cannot inject a header line (CR, LF) or end a variable early (NUL).
 */

import type { TargetConfig } from '../config/types.ts';
import type { Principal } from './caller.ts';

/**
 * The token a token exchange may present as the subject: the caller's bearer token, and only when
 * the gateway verified it as a JWT (an API key must never be sent to an authorization server).
 */
export function subjectTokenOf(principal: Pick<Principal, 'id' | 'kind'> | undefined, authorization: string | undefined): string | undefined {
  if (principal?.kind !== 'jwt' || authorization === undefined) return undefined;
  const match = /^Bearer +([\x21-\x7E]+)$/i.exec(authorization);
  return match?.[1];
}

/** Everything but printable ASCII without `%`; whole code points (`u`), a lone surrogate alone. */
const NOT_PLAIN = /[^\x20-\x24\x26-\x7e]/gu;

function encodeChar(ch: string): string {
  const unit = ch.charCodeAt(0);
  if (ch.length === 1 && unit >= 0xd800 && unit <= 0xdfff) return `%u${unit.toString(16).toUpperCase()}`;
  let out = '';
  for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte < 16 ? '0' : ''}${byte.toString(16).toUpperCase()}`;
  return out;
}

/** `value` as it goes into a template: unchanged when plain, else percent-encoded (see above). */
export function encodeIdentity(value: string): string {
  return value.replace(NOT_PLAIN, encodeChar);
}

const PLACEHOLDER = /\{sub\}|\{principal\}/g;

function fill(templates: Readonly<Record<string, string>>, principal: Pick<Principal, 'id' | 'subject'> | undefined): Record<string, string> {
  const id = encodeIdentity(principal?.id ?? 'anonymous');
  const sub = principal?.subject === undefined ? id : encodeIdentity(principal.subject);
  const out: Record<string, string> = {};
  // One pass with a function: a subject holding `{principal}` or `$&` stays text, never a template.
  for (const [name, template] of Object.entries(templates)) out[name] = template.replace(PLACEHOLDER, (p) => (p === '{sub}' ? sub : id));
  return out;
}

/** A remote target's headers for `principal` (one encoding for headers and variables: see above). */
export const principalHeaders = (templates: Readonly<Record<string, string>>, principal: Pick<Principal, 'id' | 'subject'> | undefined) => fill(templates, principal);

/** A stdio target's variables for `principal`. */
export const principalEnv = (templates: Readonly<Record<string, string>>, principal: Pick<Principal, 'id' | 'subject'> | undefined) => fill(templates, principal);

/**
 * Whether what the upstream says may depend on who calls (per-principal headers or variables, an
 * exchanged or forwarded token): then anything learnt from it in one principal's session (its
 * capabilities, instructions) must not be shown to another.
 */
export function hasPrincipalIdentity(target: TargetConfig): boolean {
  if (target.type === 'stdio') return Object.keys(target.principalEnv).length > 0;
  return Object.keys(target.principalHeaders).length > 0 || target.tokenExchange !== undefined || target.oauth !== undefined || target.forwardAuthorization;
}
