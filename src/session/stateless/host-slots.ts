/**
 * The held sessions of a pool (hosts.ts) by key and by owner: each key's hosts, open or opening, as
 * the promises of their opening ("slots"), and how many each owner (endpoint and principal) holds
 * across capability sets and credentials, the number `perCaller` bounds (docs/security.md).
 */
import type { Host } from './host.ts';

export class HostSlots {
  /** Each key's hosts, open or opening, oldest first. */
  private readonly byKey = new Map<string, Array<Promise<Host>>>();
  /** Hosts open or opening per owner (endpoint and principal), across capability sets and credentials. */
  private readonly perOwner = new Map<string, number>();
  /** The slot each open host fills in its key's list. */
  private readonly slots = new Map<string, Promise<Host>>();

  /** `owner`'s hosts, open or opening, of any key. */
  held(owner: string): number {
    return this.perOwner.get(owner) ?? 0;
  }

  /** The host of `key` that began opening last (open or opening); undefined when it has none. */
  latest(key: string): Promise<Host> | undefined {
    const list = this.byKey.get(key);
    return list === undefined ? undefined : list[list.length - 1];
  }

  /** A host of `key` begins opening for `owner`: it fills a place at once. */
  add(key: string, owner: string, slot: Promise<Host>): void {
    const list = this.byKey.get(key);
    if (list === undefined) this.byKey.set(key, [slot]);
    else list.push(slot);
    this.count(owner, 1);
  }

  /** The host `id` is open in `slot`. */
  place(id: string, slot: Promise<Host>): void {
    this.slots.set(id, slot);
  }

  /** The slot an open host fills; undefined once it was forgotten. */
  slotOf(id: string): Promise<Host> | undefined {
    return this.slots.get(id);
  }

  /** `host` no longer fills `slot` (its place is free). */
  forget(host: Host, slot: Promise<Host>): void {
    this.slots.delete(host.id);
    this.drop(host.key, host.owner, slot);
  }

  /** Removes `slot` from its key's list (and the owner's count) once, whichever way the host went. */
  drop(key: string, owner: string, slot: Promise<Host>): void {
    const list = this.byKey.get(key);
    const at = list === undefined ? -1 : list.indexOf(slot);
    if (list === undefined || at < 0) return;
    list.splice(at, 1);
    this.count(owner, -1);
    if (list.length === 0) this.byKey.delete(key);
  }

  private count(owner: string, delta: number): void {
    const n = (this.perOwner.get(owner) ?? 0) + delta;
    if (n > 0) this.perOwner.set(owner, n);
    else this.perOwner.delete(owner);
  }
}
