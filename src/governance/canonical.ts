/**
 * What a pin covers, in one canonical form: per kind the fields a model reads (a tool's name,
 * title, description, input and output schema and annotations; a prompt's name, title, description
 * and arguments; a resource template's URI template, name, title, description and MIME type),
 * serialised with object keys sorted at every depth, so that two servers sending the same
 * definition in another key order get the same SHA-256. Fields outside the pin (`_meta`, `icons`)
 * may change freely. Pure functions.
 */
import { createHash } from 'node:crypto';
import type { JsonObject } from '../jsonrpc/types.ts';

/** The three kinds of listed item that are pinned, with their list method and key field. */
export const PIN_KINDS = {
  tool: { method: 'tools/list', resultKey: 'tools', key: 'name', fields: ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] },
  prompt: { method: 'prompts/list', resultKey: 'prompts', key: 'name', fields: ['name', 'title', 'description', 'arguments'] },
  resourceTemplate: {
    method: 'resources/templates/list',
    resultKey: 'resourceTemplates',
    key: 'uriTemplate',
    fields: ['uriTemplate', 'name', 'title', 'description', 'mimeType'],
  },
  // SEP-2640: a skill is pinned by its SKILL.md URI with its frontmatter and its files' digests,
  // so a changed file (a new digest) or a new file is a change like a tool's new description.
  skill: { method: 'skills/list', resultKey: 'skills', key: 'uri', fields: ['uri', 'frontmatter', 'resources'] },
} as const;

export type PinKind = keyof typeof PIN_KINDS;

export const PIN_KIND_NAMES = Object.keys(PIN_KINDS) as PinKind[];

/** The kind whose list `method` is, if it is one. */
export function pinKindOf(method: string): PinKind | undefined {
  if (method === 'tools/list') return 'tool';
  if (method === 'prompts/list') return 'prompt';
  if (method === 'resources/templates/list') return 'resourceTemplate';
  if (method === 'skills/list') return 'skill';
  return undefined;
}

/** The pinned fields of `item` (absent ones left out). */
export function pinnedView(kind: PinKind, item: JsonObject): JsonObject {
  const view: JsonObject = {};
  for (const field of PIN_KINDS[kind].fields) if (item[field] !== undefined) view[field] = item[field];
  return view;
}

/** JSON text with object keys sorted at every depth (arrays keep their order: it is meaningful). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** SHA-256 (hex) of the canonical form of the pinned fields. */
export function pinHash(kind: PinKind, item: JsonObject): string {
  return createHash('sha256').update(canonicalJson(pinnedView(kind, item))).digest('hex');
}

/** The pinned fields whose canonical form differs between two views. */
export function changedFields(kind: PinKind, before: JsonObject, after: JsonObject): string[] {
  return PIN_KINDS[kind].fields.filter((field) => canonicalJson(before[field]) !== canonicalJson(after[field]));
}
