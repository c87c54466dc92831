/**
 * The reversible map between exposed names and (target, original name), for one kind (tools or
 * prompts) in one session. Built from the lists as they are merged; a call is routed by looking its
 * name up here, never by parsing it.
 *
 * Collisions (two originals that would get the same exposed name) are settled in favour of the
 * first one recorded, in config order of targets:
 * - with prefixes, the later one gets a salted hash form (still reversible through this table);
 * - without a prefix (`prefix: ""`), the later one is left out and reported, naming both targets:
 *   a name the operator chose to expose bare must not silently change.
 */
import { exposeName } from './naming.ts';

export interface NameOwner {
  readonly target: string;
  readonly name: string;
}

export interface Collision {
  readonly exposed: string;
  readonly kept: NameOwner;
  readonly dropped: NameOwner;
}

export interface NameTable {
  /** Exposed name for this original, assigning one if new; undefined when dropped as a collision. */
  expose(target: string, prefix: string, name: string): string | undefined;
  /** Who owns an exposed name. */
  resolve(exposed: string): NameOwner | undefined;
  /** Every owner whose own name (after overrides, before the prefix) is `name`: a bare-name call's candidates. */
  bare(name: string): NameOwner[];
  /** The exposed name of `target`'s `name`, if the table holds it. */
  exposedOf(target: string, name: string): string | undefined;
  /** Forgets every name of `target` (its list changed or it went away). */
  forget(target: string): void;
  /** Counts `forget` calls: a list built at one generation is stale at the next. */
  readonly generation: number;
  /** Collisions seen since the last call (then cleared). */
  takeCollisions(): Collision[];
}

export function createNameTable(separator: string, maxLength?: number): NameTable {
  const byExposed = new Map<string, NameOwner>();
  const byOriginal = new Map<string, string>();
  let collisions: Collision[] = [];
  let generation = 0;
  const originalKey = (target: string, name: string) => `${target}\u0000${name}`;

  return {
    expose(target, prefix, name) {
      const key = originalKey(target, name);
      const known = byOriginal.get(key);
      if (known !== undefined) return known;
      let exposed = exposeName(prefix, separator, name, maxLength);
      for (let salt = 1; byExposed.has(exposed); salt++) {
        const owner = byExposed.get(exposed) as NameOwner;
        if (prefix === '') {
          collisions.push({ exposed, kept: owner, dropped: { target, name } });
          return undefined;
        }
        exposed = exposeName(prefix, separator, name, maxLength, String(salt));
      }
      byExposed.set(exposed, { target, name });
      byOriginal.set(key, exposed);
      return exposed;
    },
    resolve(exposed) {
      return byExposed.get(exposed);
    },
    exposedOf(target, name) {
      return byOriginal.get(originalKey(target, name));
    },
    bare(name) {
      return [...byExposed.values()].filter((owner) => owner.name === name);
    },
    get generation() {
      return generation;
    },
    forget(target) {
      generation++;
      for (const [exposed, owner] of byExposed) {
        if (owner.target !== target) continue;
        byExposed.delete(exposed);
        byOriginal.delete(originalKey(target, owner.name));
      }
    },
    takeCollisions() {
      const out = collisions;
      collisions = [];
      return out;
    },
  };
}
