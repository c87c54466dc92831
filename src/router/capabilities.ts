/**
 * What an aggregate endpoint says about itself in initialize: a capability is advertised when at
 * least one target has it (2025-11-25 basic/lifecycle, "Capability Negotiation"), and the targets'
 * instructions are combined under their names.
 */
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject } from '../jsonrpc/types.ts';

/** Used for a target whose capabilities are not known yet (lazy start): everything it may offer. */
export const ASSUMED_CAPABILITIES: JsonObject = Object.freeze({
  tools: {},
  prompts: {},
  resources: { subscribe: true },
  logging: {},
  completions: {},
});

/**
 * Merges server capabilities. `listChanged` is always advertised for the list features: the
 * gateway itself changes the lists (a target crashes, a reload adds one) and says so.
 */
export function mergeCapabilities(all: readonly JsonObject[]): JsonObject {
  const merged: JsonObject = {};
  const has = (key: string) => all.some((c) => c[key] !== undefined && c[key] !== null);
  if (has('tools')) merged.tools = { listChanged: true };
  if (has('prompts')) merged.prompts = { listChanged: true };
  if (has('resources')) {
    const subscribe = all.some((c) => isObject(c.resources) && c.resources.subscribe === true);
    merged.resources = subscribe ? { subscribe: true, listChanged: true } : { listChanged: true };
  }
  if (has('logging')) merged.logging = {};
  if (has('completions')) merged.completions = {};
  const extensions = mergeExtensions(all);
  if (extensions !== undefined) merged.extensions = extensions;
  return merged;
}

/**
 * SEP-2133 extensions: every extension a member declares, its settings merged (a `true` setting of
 * any member stays true, e.g. the skills extension's `directoryRead`: a request a member without
 * it cannot serve gets that member's own refusal). Undefined when no member declares one.
 */
function mergeExtensions(all: readonly JsonObject[]): JsonObject | undefined {
  let merged: JsonObject | undefined;
  for (const capabilities of all) {
    if (!isObject(capabilities.extensions)) continue;
    for (const [id, settings] of Object.entries(capabilities.extensions)) {
      if (!isObject(settings)) continue;
      merged ??= {};
      const into: JsonObject = isObject(merged[id]) ? merged[id] : (merged[id] = {});
      for (const [key, value] of Object.entries(settings)) if (into[key] === undefined || value === true) into[key] = value;
    }
  }
  return merged;
}

/** `## <target>` sections, in the order given; undefined when no target has instructions. */
export function combineInstructions(parts: ReadonlyArray<{ target: string; instructions: string | undefined }>): string | undefined {
  const sections = parts
    .filter((p): p is { target: string; instructions: string } => typeof p.instructions === 'string' && p.instructions.trim() !== '')
    .map((p) => `## ${p.target}\n\n${p.instructions.trim()}`);
  return sections.length === 0 ? undefined : sections.join('\n\n');
}
