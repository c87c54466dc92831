/**
 * Reversible encoding of resource URIs (and URI templates) behind an aggregate endpoint:
 * `<target>+<uri>`, e.g. `files+file:///etc/hosts`.
 *
 * Target names cannot contain `+` (config/schema.ts TARGET_NAME_PATTERN), so the first `+` always
 * ends the target name and the rest is the original text, byte for byte: decoding needs no table.
 * When the target name is a valid URI scheme and the original has a scheme, the result is itself a
 * URI with a composite scheme (RFC 3986 section 3.1 allows `+` in schemes, as in `git+ssh`).
 * Templates are encoded the same way: a client expands `<target>+test://r/{id}` into
 * `<target>+test://r/5`, which decodes to `test://r/5` for the target.
 */

export interface DecodedUri {
  readonly target: string;
  readonly uri: string;
}

/** `<target>+<uri>`. */
export function encodeResourceUri(target: string, uri: string): string {
  return `${target}+${uri}`;
}

/** The target and original URI, or undefined when `encoded` is not of our form. */
export function decodeResourceUri(encoded: string): DecodedUri | undefined {
  const plus = encoded.indexOf('+');
  if (plus <= 0) return undefined;
  return { target: encoded.slice(0, plus), uri: encoded.slice(plus + 1) };
}
