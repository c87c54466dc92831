/**
 * The gateway's pins: one registry per gateway (the Runtime's), over the pins file. It judges every
 * list page a target sends (first sight records a pin; a definition that differs from its pin
 * becomes a pending change), answers whether a named item may be served, and applies approvals
 * (the admin API in-process, the `pins` command through the file, which the registry watches).
 *
 * Decisions (docs/governance.md): a pending change is withheld and refused when the target's mode is
 * `block`, or when it is dangerous (danger.ts) in any mode but `off`; in `warn` a benign change is
 * served and flagged. Bounds: `maxItems` pins in all (past it a new item is not pinned but pending,
 * so `block` withholds it) and `maxPending` changes waiting (the oldest is forgotten, and judged
 * again when a list shows it).
 */
import { unwatchFile, watchFile } from 'node:fs';
import type { JsonObject } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import { PIN_KINDS, pinHash, pinnedView, type PinKind } from './canonical.ts';
import { sealKey, type Pin, type PinChange } from './pins-file.ts';
import { blocks, idOf, PinState, type PinMode, type PinningSettings, type PinReporter } from './pin-state.ts';

export type { PinDecision, PinMode, PinningSettings, PinReporter } from './pin-state.ts';

/**
 * Which pending changes an approval takes: a target, optionally one kind and key, optionally one
 * hash, whole: a prefix is not enough, since a server can grind a version to match a short one.
 */
export interface ApprovalSelector {
  readonly target: string;
  readonly kind?: PinKind | undefined;
  readonly key?: string | undefined;
  readonly hash?: string | undefined;
}

export interface PinRegistry {
  readonly settings: PinningSettings;
  /**
   * Judges the items of one list page of `target` (records first sights, notes changes) and
   * returns each item's key and hash, and the keys to withhold from the page.
   */
  judge(target: string, mode: PinMode, kind: PinKind, items: readonly unknown[]): { seen: Array<[string, string]>; withheld: Set<string> };
  /** May the item with this key and hash be served? undefined: yes; a change: refuse; 'unjudged': no list has shown it yet. */
  verdict(target: string, mode: PinMode, kind: PinKind, key: string, hash: string): PinChange | 'unjudged' | undefined;
  /** Whether the gateway has read `kind`'s whole list of `target` (pins-file.ts): new items are then changes. */
  sealed(target: string, kind: PinKind): boolean;
  /**
   * The gateway read `kind`'s list of `target`: from now on an unseen item waits for approval.
   * `incomplete` says why the read stopped short of the list's end (sealed anyway, logged at warn).
   */
  seal(target: string, kind: PinKind, incomplete?: string): void;
  /** A call refused because of `change` (an audit line and a metric). */
  refused(change: PinChange): void;
  pending(): PinChange[];
  /** Pins per target and kind (counts), for `/status` and the admin API. */
  counts(): Record<string, Record<PinKind, number>>;
  approve(selector: ApprovalSelector, by: string): PinChange[];
  /** Reads the file again (a reload, or the `pins` command wrote it). */
  reload(): void;
  close(): void;
  /** The pin in force for an item (the console shows a change against it); undefined: none. */
  pinned(target: string, kind: PinKind, key: string): Pin | undefined;
}

/** A full SHA-256 in hex: what an approval's hash must be (lower-cased by the callers). */
export const FULL_HASH = /^[0-9a-f]{64}$/;

export function matches(change: PinChange, selector: ApprovalSelector): boolean {
  return (
    change.target === selector.target &&
    (selector.kind === undefined || change.kind === selector.kind) &&
    (selector.key === undefined || change.key === selector.key) &&
    (selector.hash === undefined || change.hash === selector.hash)
  );
}

export function createPinRegistry(settings: PinningSettings, logger: Logger, report: PinReporter = () => undefined): PinRegistry {
  return new Pins(settings, logger, report);
}

/** The registry's API over its state (pin-state.ts). */
class Pins implements PinRegistry {
  readonly settings: PinningSettings;
  readonly s: PinState;
  watching = false;

  constructor(settings: PinningSettings, logger: Logger, report: PinReporter) {
    this.settings = settings;
    this.s = new PinState(settings, logger, report);
    watchFile(settings.file, { interval: 500, persistent: false }, this.onfile);
    this.watching = true;
  }

  // The `pins` command writes the file: its approvals reach the running gateway within a second.
  // An arrow field: watchFile and unwatchFile need the one function.
  readonly onfile = (): void => this.s.fresh();

  judge(target: string, mode: PinMode, kind: PinKind, items: readonly unknown[]): { seen: Array<[string, string]>; withheld: Set<string> } {
    const s = this.s;
    // Someone else wrote the file since (an approval): read it before writing over it.
    s.fresh();
    const seen: Array<[string, string]> = [];
    const withheld = new Set<string>();
    let dirty = false;
    const keyField = PIN_KINDS[kind].key;
    for (const item of items) {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
      const key = (item as JsonObject)[keyField];
      if (typeof key !== 'string') continue;
      const hash = pinHash(kind, item as JsonObject);
      seen.push([key, hash]);
      const table = s.kindsOf(target)[kind];
      const pin = table.get(key);
      if (pin?.hash === hash) continue;
      if (pin === undefined && s.total < this.settings.maxItems && !s.doc.sealed.has(sealKey(target, kind))) {
        table.set(key, { hash, definition: pinnedView(kind, item as JsonObject), pinnedAt: new Date().toISOString() });
        s.total++;
        dirty = true;
        s.decide({ target, kind, key, hash }, 'recorded');
        continue;
      }
      const before = s.pending.size;
      const change = s.note(target, kind, key, hash, pinnedView(kind, item as JsonObject), mode);
      if (s.pending.size !== before) dirty = true;
      if (blocks(mode, change)) withheld.add(key);
    }
    if (dirty) s.save();
    return { seen, withheld };
  }

  verdict(target: string, mode: PinMode, kind: PinKind, key: string, hash: string): PinChange | 'unjudged' | undefined {
    const pin = this.s.doc.pins.get(target)?.[kind].get(key);
    if (pin?.hash === hash) return undefined;
    const change = this.s.pending.get(idOf(target, kind, key, hash));
    if (change === undefined) return 'unjudged';
    return blocks(mode, change) ? change : undefined;
  }

  sealed(target: string, kind: PinKind): boolean {
    return this.s.doc.sealed.has(sealKey(target, kind));
  }

  seal(target: string, kind: PinKind, incomplete?: string): void {
    const s = this.s;
    const key = sealKey(target, kind);
    if (s.doc.sealed.has(key)) return;
    if (incomplete !== undefined) {
      s.audit.warn({ event: 'pin-seal', target, kind, incomplete }, 'list sealed after an incomplete read; items first seen from now on wait for approval');
    }
    s.fresh();
    s.doc.sealed.add(key);
    s.save();
  }

  refused(change: PinChange): void {
    this.s.decide(change, 'refused');
  }

  pending(): PinChange[] {
    return [...this.s.pending.values()];
  }

  counts(): Record<string, Record<PinKind, number>> {
    const out: Record<string, Record<PinKind, number>> = {};
    for (const [target, kinds] of this.s.doc.pins) out[target] = { tool: kinds.tool.size, prompt: kinds.prompt.size, resourceTemplate: kinds.resourceTemplate.size, skill: kinds.skill.size };
    return out;
  }

  approve(selector: ApprovalSelector, by: string): PinChange[] {
    const s = this.s;
    s.fresh();
    const approved = [...s.pending.values()].filter((c) => matches(c, selector));
    // Several versions of one item waiting: the one seen last wins (an explicit hash picks another).
    const latest = new Map<string, PinChange>();
    for (const change of approved) latest.set(`${change.kind}\u0000${change.key}`, change);
    for (const change of latest.values()) {
      const table = s.kindsOf(change.target)[change.kind];
      if (!table.has(change.key)) s.total++;
      table.set(change.key, { hash: change.hash, definition: change.definition, pinnedAt: new Date().toISOString() });
      // Other versions of the item were judged against the old pin: judged again when seen.
      for (const [id, other] of s.pending) if (other.target === change.target && other.kind === change.kind && other.key === change.key) s.pending.delete(id);
      s.decide(change, 'approved', { by });
    }
    if (latest.size > 0) s.save();
    return [...latest.values()];
  }

  reload(): void {
    this.s.reload();
  }

  pinned(target: string, kind: PinKind, key: string): Pin | undefined {
    return this.s.doc.pins.get(target)?.[kind].get(key);
  }

  close(): void {
    if (this.watching) unwatchFile(this.settings.file, this.onfile);
    this.watching = false;
  }
}
