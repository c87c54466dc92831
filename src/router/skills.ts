/**
 * Skills (SEP-2640, the `io.modelcontextprotocol/skills` extension) behind an aggregate endpoint.
 * A skill entry (`skills/list`, `skills/get`) is `{ uri, frontmatter, resources: [{ uri, digest,
 * size, mimeType }] }`: its `uri` is its SKILL.md, `skill://<name>/SKILL.md`, and each of its files is
 * a resource of the same server. Behind an aggregate every URI gets the server's `<target>+` in
 * front (resource-uri.ts), so two servers' `skill://git-workflow/SKILL.md` stay apart and a read
 * of either goes to its own server; digests, sizes and the frontmatter pass byte for byte (a digest
 * is of the file's bytes, which the gateway does not change). Pure functions.
 */
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject } from '../jsonrpc/types.ts';
import { PASS_ALL, type NameFilter } from './glob.ts';
import { encodeResourceUri } from './resource-uri.ts';

/** SEP-2640's extension identifier (SEP-2133 extension negotiation). */
export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';

/** Whether a server's capabilities declare the skills extension. */
export function hasSkills(capabilities: JsonObject | undefined): boolean {
  const extensions = capabilities?.extensions;
  return isObject(extensions) && isObject(extensions[SKILLS_EXTENSION]);
}

/**
 * Whether `entry` passes the resource filter `allowed` (a filter or the caller's policy on
 * resources): its SKILL.md must pass; its files that do not pass are left out of its manifest.
 * False for an entry without a string `uri`.
 */
export function visibleSkill(entry: JsonObject, allowed: NameFilter): boolean {
  if (typeof entry.uri !== 'string' || !allowed(entry.uri)) return false;
  if (allowed !== PASS_ALL && Array.isArray(entry.resources)) {
    entry.resources = entry.resources.filter((r) => !isObject(r) || typeof r.uri !== 'string' || allowed(r.uri));
  }
  return true;
}

/** Rewrites, in place, the URIs of a skill entry of `target` (its own and its files'), nothing else. */
export function encodeSkill(target: string, entry: JsonObject): void {
  if (typeof entry.uri === 'string') entry.uri = encodeResourceUri(target, entry.uri);
  if (!Array.isArray(entry.resources)) return;
  for (const file of entry.resources as unknown[]) {
    if (isObject(file) && typeof file.uri === 'string') file.uri = encodeResourceUri(target, file.uri);
  }
}

/** Rewrites and filters, in place, the children of a `resources/directory/read` answer of `target`. */
export function encodeDirectory(target: string, result: JsonObject, allowed: NameFilter): void {
  if (!Array.isArray(result.resources)) return;
  const kept: unknown[] = [];
  for (const child of result.resources as unknown[]) {
    if (!isObject(child) || typeof child.uri !== 'string') continue;
    if (!allowed(child.uri)) continue;
    child.uri = encodeResourceUri(target, child.uri);
    kept.push(child);
  }
  result.resources = kept;
}

/**
 * The cache hints (SEP-2549) of an answer merged from several: the shortest `ttlMs` any part gave
 * (0 when one gave none), and `private` when any part was private or the list was filtered for
 * this caller (a filter or the policy: another caller may see another list).
 */
export function mergeCacheHints(parts: readonly JsonObject[], filtered: boolean): { ttlMs: number; cacheScope: 'private' | 'public' } {
  let ttlMs: number | undefined;
  let isPrivate = filtered;
  for (const part of parts) {
    const ttl = typeof part.ttlMs === 'number' && Number.isFinite(part.ttlMs) && part.ttlMs >= 0 ? part.ttlMs : 0;
    ttlMs = ttlMs === undefined ? ttl : Math.min(ttlMs, ttl);
    if (part.cacheScope !== 'public') isPrivate = true;
  }
  return { ttlMs: ttlMs ?? 0, cacheScope: isPrivate ? 'private' : 'public' };
}
