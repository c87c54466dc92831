/**
 * A key written twice in one JSON object. RFC 8259 section 4 leaves such an object's meaning to
 * the reader: JSON.parse keeps the last value, a person or `grep` reads the first. An audit line
 * with `{"outcome":"denied", ...the record..., "outcome":"ok"}` would verify (its hash is of what
 * JSON.parse kept) while showing anyone who reads it something else, so `audit verify` refuses a
 * record line that repeats a key at any depth. Keys are compared decoded (`"a"` and `"\u0061"`
 * are one key). Called only on text JSON.parse accepted, so the structure is known to be valid.
 */
export function duplicateKey(text: string): string | undefined {
  const stack: Array<{ keys: Set<string>; expectKey: boolean } | undefined> = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{') stack.push({ keys: new Set(), expectKey: true });
    else if (c === '[') stack.push(undefined);
    else if (c === '}' || c === ']') stack.pop();
    else if (c === ',') {
      const top = stack.at(-1);
      if (top !== undefined) top.expectKey = true;
    } else if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const top = stack.at(-1);
      if (top !== undefined && top.expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) return key;
        top.keys.add(key);
        top.expectKey = false;
      }
      i = end;
    }
  }
  return undefined;
}
