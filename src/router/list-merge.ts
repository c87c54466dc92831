/**
 * Merging one page of a list method from many targets: rename (tools, prompts) or encode (resources,
 * templates) each item, drop what the target's filter hides, and keep the per-target cursors for
 * the next page. Items keep every field the target sent; only the name or URI changes.
 */
import type { JsonObject } from '../jsonrpc/types.ts';
import type { FanOutOutcome } from './fan-out.ts';
import type { NameFilter } from './glob.ts';
import type { Collision, NameTable } from './name-table.ts';
import { canonicalUri } from './canonical.ts';
import { clientName, overrideItem, passesEvery, serverName, type Overrides } from './overrides.ts';
import { encodeResourceUri } from './resource-uri.ts';

/** The four list methods and where their items and keys are. */
export interface ListKind {
  readonly method: 'tools/list' | 'prompts/list' | 'resources/list' | 'resources/templates/list';
  readonly resultKey: 'tools' | 'prompts' | 'resources' | 'resourceTemplates';
  readonly field: 'name' | 'uri' | 'uriTemplate';
  /** Which filter applies (templates share the resources filter). */
  readonly filter: 'tools' | 'prompts' | 'resources';
  /** Server capability that must be present for the target to be asked. */
  readonly capability: 'tools' | 'prompts' | 'resources';
}

export const LIST_KINDS: Readonly<Record<ListKind['method'], ListKind>> = {
  'tools/list': { method: 'tools/list', resultKey: 'tools', field: 'name', filter: 'tools', capability: 'tools' },
  'prompts/list': { method: 'prompts/list', resultKey: 'prompts', field: 'name', filter: 'prompts', capability: 'prompts' },
  'resources/list': { method: 'resources/list', resultKey: 'resources', field: 'uri', filter: 'resources', capability: 'resources' },
  'resources/templates/list': {
    method: 'resources/templates/list',
    resultKey: 'resourceTemplates',
    field: 'uriTemplate',
    filter: 'resources',
    capability: 'resources',
  },
};

export function isListMethod(method: string): method is ListKind['method'] {
  return Object.hasOwn(LIST_KINDS, method);
}

/** How one target's items are exposed. */
export interface Exposure {
  readonly prefix: string;
  readonly tools: NameFilter;
  readonly prompts: NameFilter;
  readonly resources: NameFilter;
  /** Renames and rewrites of its tools and prompts (overrides.ts); undefined: none. */
  readonly overrides?: Overrides | undefined;
}

export interface MergedPage {
  readonly items: JsonObject[];
  /** Next upstream cursor per target that has more pages. */
  readonly next: Record<string, string>;
  /** Targets left out of this page and why. */
  readonly failed: Array<{ target: string; reason: string }>;
  readonly collisions: Collision[];
}

/**
 * Merges answers in the order given (config order). `tables` holds the name tables of tools and
 * prompts; resources need none (their encoding is reversible by itself).
 */
export function mergePage(
  kind: ListKind,
  outcomes: ReadonlyArray<FanOutOutcome<JsonObject>>,
  exposureOf: (target: string) => Exposure,
  tables: { readonly tools: NameTable; readonly prompts: NameTable },
  /** Keys of a page's items to leave out after naming them (pinning withholds them; the name table still learns them). */
  withheld?: (page: JsonObject) => ReadonlySet<string> | undefined,
): MergedPage {
  const items: JsonObject[] = [];
  const next: Record<string, string> = {};
  const failed: Array<{ target: string; reason: string }> = [];
  /** Server items an override's new name shadows (the rename wins). */
  const shadowed: Collision[] = [];
  const table = kind.filter === 'tools' ? tables.tools : kind.filter === 'prompts' ? tables.prompts : undefined;
  for (const outcome of outcomes) {
    if (!outcome.ok) {
      failed.push({ target: outcome.target, reason: outcome.reason });
      continue;
    }
    const exposure = exposureOf(outcome.target);
    const filter = exposure[kind.filter];
    const held = withheld?.(outcome.value);
    const list = outcome.value[kind.resultKey];
    if (Array.isArray(list)) {
      for (const item of list as unknown[]) {
        if (typeof item !== 'object' || item === null) continue;
        const record = item as JsonObject;
        const key = record[kind.field];
        if (typeof key !== 'string') continue;
        if (table !== undefined) {
          const nameKind = kind.filter as 'tools' | 'prompts';
          const client = clientName(exposure.overrides, nameKind, key);
          if (client === undefined) {
            // The server lists a name an override gave to another of its items: the rename wins.
            const kept = { target: outcome.target, name: serverName(exposure.overrides, nameKind, key) ?? key };
            shadowed.push({ exposed: key, kept, dropped: { target: outcome.target, name: key } });
            continue;
          }
          if (!passesEvery(filter, exposure.overrides, nameKind, key, client)) continue;
          if (exposure.overrides !== undefined) overrideItem(exposure.overrides, nameKind, record, client);
          const exposed = table.expose(outcome.target, exposure.prefix, client);
          if (exposed === undefined) continue;
          record[kind.field] = exposed;
        } else {
          // Judged in the canonical spelling the rules are written in (router/canonical.ts).
          if (!filter(canonicalUri(key) ?? key)) continue;
          record[kind.field] = encodeResourceUri(outcome.target, key);
        }
        if (held?.has(key) === true) continue;
        items.push(record);
      }
    }
    const cursor = outcome.value.nextCursor;
    if (typeof cursor === 'string' && cursor !== '') next[outcome.target] = cursor;
  }
  const collisions = [...tables.tools.takeCollisions(), ...tables.prompts.takeCollisions(), ...shadowed];
  return { items, next, failed, collisions };
}
