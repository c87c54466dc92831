/**
 * The correlator's pending requests by upstream id, in a slot table instead of a Map (issue 34: a
 * Map that empties at one request in flight shrinks and grows its hash table again on every call,
 * about 150 bytes allocated inside `Map.prototype.delete` per call).
 *
 * The ids are the correlator's own counter, so consecutive requests take consecutive slots
 * (`id & mask`) and a slot is free again long before the counter comes round to it. A request still
 * pending when its slot comes round again (one slow call among many fast ones) leaves the newer id
 * to a Map beside the table; the table doubles while more than half of it is pending, up to
 * MAX_SLOTS. Bounded: the table by MAX_SLOTS, the Map by what is pending.
 */

/** What a slot holds: the entry's own upstream id. */
export interface Keyed {
  readonly id: number;
}

const FIRST_SLOTS = 32;
const MAX_SLOTS = 4096;

export class PendingTable<E extends Keyed> {
  private slots: Array<E | undefined> = new Array<E | undefined>(FIRST_SLOTS).fill(undefined);
  private mask = FIRST_SLOTS - 1;
  private readonly spill = new Map<number, E>();
  /** Entries held, in the slots and the spill Map. */
  size = 0;

  get(id: number): E | undefined {
    const entry = this.slots[id & this.mask];
    if (entry !== undefined && entry.id === id) return entry;
    return this.spill.size === 0 ? undefined : this.spill.get(id);
  }

  /** Adds an entry under its id (ids are never reused while pending). */
  add(entry: E): void {
    if (2 * this.size >= this.slots.length && this.slots.length < MAX_SLOTS) this.grow();
    const at = entry.id & this.mask;
    if (this.slots[at] === undefined) this.slots[at] = entry;
    else this.spill.set(entry.id, entry);
    this.size++;
  }

  /** Removes and returns the entry under `id`, if any. */
  take(id: number): E | undefined {
    const at = id & this.mask;
    const entry = this.slots[at];
    if (entry !== undefined && entry.id === id) {
      this.slots[at] = undefined;
      this.size--;
      return entry;
    }
    if (this.spill.size === 0) return undefined;
    const spilled = this.spill.get(id);
    if (spilled === undefined) return undefined;
    this.spill.delete(id);
    this.size--;
    return spilled;
  }

  /** The ids pending now, oldest first as a Map's keys were (a copy: safe to settle them while iterating). */
  ids(): number[] {
    const ids: number[] = [];
    for (const entry of this.slots) if (entry !== undefined) ids.push(entry.id);
    for (const id of this.spill.keys()) ids.push(id);
    return ids.sort((a, b) => a - b);
  }

  /** Twice the slots: every entry placed again, spilled ones back into the table where they fit. */
  private grow(): void {
    const entries = [...this.slots, ...this.spill.values()];
    const length = this.slots.length * 2;
    this.slots = new Array<E | undefined>(length).fill(undefined);
    this.mask = length - 1;
    this.spill.clear();
    for (const entry of entries) {
      if (entry === undefined) continue;
      const at = entry.id & this.mask;
      if (this.slots[at] === undefined) this.slots[at] = entry;
      else this.spill.set(entry.id, entry);
    }
  }
}

export function createPendingTable<E extends Keyed>(): PendingTable<E> {
  return new PendingTable<E>();
}
