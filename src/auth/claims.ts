/**
 * What a principal keeps of its token's claims: only those the policy names (never the token, nor
 * claims nobody asked for), as lists of strings, bounded. A claim is looked up by its name as it
 * is (namespaced claims such as `https://example.com/groups` contain dots), else as a dotted path
 * into nested objects (`realm_access.roles`). Strings, numbers and booleans count, alone or in a
 * list; anything else is no value.
 *
 * Bounds: `MAX_VALUES` values per claim and `MAX_VALUE_LENGTH` characters per value; longer
 * values are dropped, not cut (a cut value could match a glob the whole value does not). A claim
 * that lost values to these bounds is named in `cut`: the policy cannot know what it lost, so a
 * deny rule naming it applies (fails closed) while allow rules see only the values kept.
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

/** The values kept, and whether any value was left out for the bounds. */
function toStrings(value: unknown): { values: string[]; cut: boolean } {
  const values: string[] = [];
  let cut = false;
  for (const v of Array.isArray(value) ? value : [value]) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') continue;
    const text = String(v);
    if (values.length >= MAX_VALUES || text.length > MAX_VALUE_LENGTH) {
      cut = true;
      if (values.length >= MAX_VALUES) break;
    } else values.push(text);
  }
  return { values, cut };
}

/** What a principal keeps: the values, and the names of the claims that lost some to the bounds. */
export interface PickedClaims {
  readonly claims: Claims;
  /** Names of claims cut by the bounds; undefined when none was (the usual case). */
  readonly claimsCut: ReadonlySet<string> | undefined;
}

/**
 * The claims named in `names`, each present (possibly as an empty list: the claim was looked at and
 * the token has none), frozen. Always an object for a token, even when the policy names no
 * claim: a name missing from it means "not captured", which a deny rule treats as matching.
 */
export function pickClaims(payload: Record<string, unknown>, names: readonly string[]): PickedClaims {
  const out: Record<string, readonly string[]> = {};
  let claimsCut: Set<string> | undefined;
  for (const name of names) {
    const { values, cut } = toStrings(lookup(payload, name));
    out[name] = Object.freeze(values);
    if (cut) (claimsCut ??= new Set()).add(name);
  }
  return { claims: Object.freeze(out), claimsCut };
}
