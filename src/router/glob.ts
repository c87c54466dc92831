/**
 * Glob allow/deny filters for names (`tools.allow: ["read_*"]`). `*` matches any run of characters
 * (including none), `?` exactly one; everything else is literal. Patterns are compiled once, at
 * config load, into one anchored regular expression per list.
 */

export interface NameFilter {
  /** True when the name passes: allowed (or no allow list) and not denied. */
  (name: string): boolean;
}

const SPECIAL = /[.+^${}()|[\]\\/]/g;

/** One anchored expression matching any of `patterns`; undefined for an empty list. */
/** A filter that lets everything through. */
export const PASS_ALL: NameFilter = () => true;

export function compileGlobs(patterns: readonly string[]): RegExp | undefined {
  if (patterns.length === 0) return undefined;
  const parts = patterns.map((p) => p.replace(SPECIAL, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.'));
  return new RegExp(`^(?:${parts.join('|')})$`, 's');
}

/** A filter from allow and deny lists; deny wins. Empty allow = everything allowed. */
export function createNameFilter(allow: readonly string[] = [], deny: readonly string[] = []): NameFilter {
  // No lists: the one PASS_ALL, so a caller can tell "no filter" by identity and skip the work.
  if (allow.length === 0 && deny.length === 0) return PASS_ALL;
  const allowed = compileGlobs(allow);
  const denied = compileGlobs(deny);
  return (name) => (allowed === undefined || allowed.test(name)) && (denied === undefined || !denied.test(name));
}


