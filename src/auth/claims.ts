/**
 * What a principal keeps of its token's claims: only those the policy names (never the token, nor
 * claims nobody asked for), as lists of strings, bounded. A claim is looked up by its name as it
 * is (namespaced claims such as `https://example.com/groups` contain dots), else as a dotted path
 * into nested objects (`realm_access.roles`). Strings, numbers and booleans count, alone or in a
 * list; anything else is no value.
 *
 * Bounds: `MAX_VALUES` values per claim and `MAX_VALUE_LENGTH` characters per value; longer
 * values are dropped, not cut (a cut value could match a glob the whole value does not).
 */

export const MAX_VALUES = 64;
export const MAX_VALUE_LENGTH = 256;

export type Claims = Readonly<Record<string, readonly string[]>>;

function lookup(payload: Record<string, unknown>, name: string): unknown {
  if (name in payload) return payload[name];
  let at: unknown = payload;
  for (const part of name.split('.')) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

function toStrings(value: unknown): string[] {
  const out: string[] = [];
  for (const v of Array.isArray(value) ? value : [value]) {
    if (out.length >= MAX_VALUES) break;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
      const text = String(v);
      if (text.length <= MAX_VALUE_LENGTH) out.push(text);
    }
  }
  return out;
}

/**
 * The claims named in `names`, each present (possibly as an empty list: the claim was looked at and
 * the token has none), frozen. Always an object for a token, even when the policy names no
 * claim: a name missing from it means "not captured", which a deny rule treats as matching.
 */
export function pickClaims(payload: Record<string, unknown>, names: readonly string[]): Claims {
  const out: Record<string, readonly string[]> = {};
  for (const name of names) out[name] = Object.freeze(toStrings(lookup(payload, name)));
  return Object.freeze(out);
}
