/**
 * Overrides: how a target's tools and prompts look to clients when the operator rewrites them
 * (`mcpServers.<n>.overrides`, and the picks of a virtual server). Pure functions over the items a
 * server lists and the names a client calls; applied on every list answer (lists are never cached,
 * so a refresh or `list_changed` can never serve a stale override).
 *
 * Names: an override's `name` is the client's name for the server's tool (before any aggregate
 * prefix). A call to it reaches the original; the original's own name is no longer callable (it
 * is as unknown as a name the server does not have) unless another tool is renamed to it. A tool
 * the server lists under a name an override gave to another of its tools is withheld: the
 * operator's rename wins over what the server adds later (see `clientName`).
 *
 * Filters and policy see both names: an item passes only when it passes under its server's name
 * AND under its client name (`passesBoth`), so a rule written for either form holds.
 */
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject } from '../jsonrpc/types.ts';
import type { ItemOverride, OverridesConfig } from '../config/types.ts';
import type { NameFilter } from './glob.ts';

export type { ItemOverride, OverridesConfig };

export type OverrideKind = 'tools' | 'prompts';

interface KindTable {
  /** Server's name -> its override. */
  readonly byOriginal: ReadonlyMap<string, ItemOverride>;
  /** Client name given by a rename -> the server's name. */
  readonly byNew: ReadonlyMap<string, string>;
}

/** Compiled overrides of one target, looked up by map (no parsing per message). */
export interface Overrides {
  readonly tools: KindTable;
  readonly prompts: KindTable;
  readonly serverName: string | undefined;
  readonly instructions: string | undefined;
}

function tableOf(entries: Readonly<Record<string, ItemOverride>>): KindTable {
  const byOriginal = new Map<string, ItemOverride>();
  const byNew = new Map<string, string>();
  for (const [original, override] of Object.entries(entries)) {
    byOriginal.set(original, override);
    if (override.name !== undefined && override.name !== original) byNew.set(override.name, original);
  }
  return { byOriginal, byNew };
}

/** Undefined when `config` sets nothing (the hot path then does no work for overrides). */
export function compileOverrides(config: OverridesConfig | undefined): Overrides | undefined {
  if (config === undefined) return undefined;
  const empty = Object.keys(config.tools).length === 0 && Object.keys(config.prompts).length === 0;
  if (empty && config.serverName === undefined && config.instructions === undefined) return undefined;
  return { tools: tableOf(config.tools), prompts: tableOf(config.prompts), serverName: config.serverName, instructions: config.instructions };
}

/**
 * The client's name for the server's `original`; undefined when the item is withheld: the server
 * lists it under a name an override gave to another of its items (the rename wins).
 */
export function clientName(overrides: Overrides | undefined, kind: OverrideKind, original: string): string | undefined {
  if (overrides === undefined) return original;
  const table = overrides[kind];
  const renamed = table.byOriginal.get(original)?.name;
  if (renamed !== undefined) return renamed;
  return table.byNew.has(original) ? undefined : original;
}

/**
 * The server's name for the client's `name`; undefined when nothing answers to it: the server's
 * own name of an item renamed away (and not given to another item).
 */
export function serverName(overrides: Overrides | undefined, kind: OverrideKind, name: string): string | undefined {
  if (overrides === undefined) return name;
  const table = overrides[kind];
  const original = table.byNew.get(name);
  if (original !== undefined) return original;
  const renamed = table.byOriginal.get(name)?.name;
  return renamed !== undefined && renamed !== name ? undefined : name;
}

/** True when `filter` lets the item through under its server's name and under its client name. */
export function passesBoth(filter: NameFilter, original: string, client: string): boolean {
  return filter(original) && (client === original || filter(client));
}

/**
 * True when `filter` lets the item through under every name it carries: its server's `original`,
 * its `client` name, and the names other overrides gave it (a virtual server's pick of a tool its
 * target renamed carries the target's override name too: `ItemOverride.also`). The one check of
 * names for lists and calls, on every path, so a rule written with any of them holds.
 */
export function passesEvery(filter: NameFilter, overrides: Overrides | undefined, kind: OverrideKind, original: string, client: string): boolean {
  if (!passesBoth(filter, original, client)) return false;
  const also = overrides?.[kind].byOriginal.get(original)?.also;
  return also === undefined || also.every((name) => filter(name));
}

/**
 * Rewrites a listed item (a tool or prompt, its `name` the server's) in place for the client:
 * its name, title, description and annotations as the override says. Fields not overridden, and
 * fields the gateway does not know, pass through untouched.
 */
export function overrideItem(overrides: Overrides, kind: OverrideKind, item: JsonObject, client: string): void {
  const original = item.name as string;
  item.name = client;
  const override = overrides[kind].byOriginal.get(original);
  if (override === undefined) return;
  if (override.title !== undefined) item.title = override.title;
  if (override.description !== undefined) item.description = override.description;
  if (kind === 'tools' && override.annotations !== undefined) {
    const merged: JsonObject = { ...(isObject(item.annotations) ? item.annotations : {}) };
    for (const [key, value] of Object.entries(override.annotations)) if (value !== undefined) merged[key] = value;
    item.annotations = merged;
  }
}

/** The target's initialize answer (`result`) with its serverInfo name and instructions overridden, in place. */
export function overrideInitialize(overrides: Overrides | undefined, result: JsonObject): void {
  if (overrides === undefined) return;
  if (overrides.serverName !== undefined) {
    result.serverInfo = { ...(isObject(result.serverInfo) ? result.serverInfo : {}), name: overrides.serverName };
  }
  if (overrides.instructions !== undefined) result.instructions = overrides.instructions;
}
