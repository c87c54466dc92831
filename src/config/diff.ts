/**
 * What a reload would change, for the console (docs/operations.md, "The console"): servers added,
 * removed and changed (with the names of the keys that differ), and the other sections that
 * differ. Names only, never values: a server's `env` and `headers`, API keys and cluster keys are
 * secrets, and a diff is shown to people.
 */
import { isDeepStrictEqual } from 'node:util';
import type { GatewayConfig } from './types.ts';

export interface ConfigDiff {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: ReadonlyArray<{ readonly name: string; readonly keys: readonly string[] }>;
  /** Top-level sections other than the servers that differ (`policy`, `auth`, `aggregate`, ...). */
  readonly sections: readonly string[];
}

const keysOf = (value: object) => Object.keys(value);

function changedKeys(before: object, after: object): string[] {
  const a = before as Record<string, unknown>;
  const b = after as Record<string, unknown>;
  return [...new Set([...keysOf(a), ...keysOf(b)])].filter((key) => !isDeepStrictEqual(a[key], b[key])).sort();
}

export function configDiff(before: GatewayConfig, after: GatewayConfig): ConfigDiff {
  const added = [...after.targets.keys()].filter((name) => !before.targets.has(name));
  const removed = [...before.targets.keys()].filter((name) => !after.targets.has(name));
  const changed = [...after.targets]
    .filter(([name]) => before.targets.has(name))
    .map(([name, target]) => ({ name, keys: changedKeys(before.targets.get(name) as object, target) }))
    .filter((c) => c.keys.length > 0);
  const { targets: _a, warnings: _w, ...restBefore } = before;
  const { targets: _b, warnings: _x, ...restAfter } = after;
  return { added, removed, changed, sections: changedKeys(restBefore, restAfter) };
}
