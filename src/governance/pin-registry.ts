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
import { statSync, unwatchFile, watchFile } from 'node:fs';
import type { JsonObject } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import type { PinDecisionName } from '../log/observer.ts';
import { changedFields, PIN_KINDS, pinHash, pinnedView, type PinKind } from './canonical.ts';
import { judgeDanger } from './danger.ts';
import { emptyKinds, readPinsFile, sealKey, writePinsFile, type Pin, type PinChange, type PinsDocument } from './pins-file.ts';

export type PinMode = 'off' | 'warn' | 'block';

/** What a decision is called in audit lines and metrics. */
export type PinDecision = PinDecisionName;

export interface PinningSettings {
  readonly file: string;
  readonly maxItems: number;
  readonly maxPending: number;
}

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

/** Told of every decision (the metrics; observe/). */
export type PinReporter = (target: string, decision: PinDecision) => void;

const idOf = (target: string, kind: PinKind, key: string, hash: string) => `${target}\u0000${kind}\u0000${key}\u0000${hash}`;

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
  const audit = logger.child({ audit: true, component: 'pinning' });
  /**
   * The file's identity when this registry last read or wrote it (inode, times, size: every write
   * is a new inode, and file times are too coarse alone): another writer (the `pins` command) changes it.
   */
  let known = '';
  const mtime = () => {
    try {
      const s = statSync(settings.file);
      return `${s.ino}:${s.mtimeMs}:${s.ctimeMs}:${s.size}`;
    } catch {
      return '';
    }
  };
  let doc: PinsDocument = readPinsFile(settings.file);
  known = mtime();
  let pending = new Map(doc.pending.map((c) => [idOf(c.target, c.kind, c.key, c.hash), c]));
  let total = 0;
  const recount = () => {
    total = 0;
    for (const kinds of doc.pins.values()) for (const kind of Object.values(kinds)) total += kind.size;
  };
  recount();

  const save = () => {
    doc = { pins: doc.pins, pending: [...pending.values()], sealed: doc.sealed };
    try {
      writePinsFile(settings.file, doc);
      known = mtime();
    } catch (err) {
      // The decision stands in memory; the operator learns that it will not survive a restart.
      logger.error({ err, file: settings.file }, 'could not write the pins file; pins are kept in memory only until it can be');
    }
  };
  const decide = (change: Pick<PinChange, 'target' | 'kind' | 'key' | 'hash'>, decision: PinDecision, extra: Record<string, unknown> = {}) => {
    report(change.target, decision);
    const line = { event: 'pin', decision, target: change.target, kind: change.kind, key: change.key, hash: change.hash, ...extra };
    if (decision === 'recorded' || decision === 'approved') audit.info(line, 'audit');
    else audit.warn(line, 'audit');
  };
  const kindsOf = (target: string) => {
    let kinds = doc.pins.get(target);
    if (kinds === undefined) doc.pins.set(target, (kinds = emptyKinds()));
    return kinds;
  };
  const blocks = (mode: PinMode, change: PinChange) => mode === 'block' || (mode !== 'off' && change.dangers.length > 0);

  const note = (target: string, kind: PinKind, key: string, hash: string, view: JsonObject, mode: PinMode): PinChange => {
    const id = idOf(target, kind, key, hash);
    const waiting = pending.get(id);
    if (waiting !== undefined) return waiting;
    const pin = doc.pins.get(target)?.[kind].get(key);
    const before = pin?.definition ?? {};
    const change: PinChange = {
      target,
      kind,
      key,
      hash,
      definition: view,
      changed: changedFields(kind, before, view),
      // A new item has no hints to flip: what its text carries counts, and a malformed hint.
      dangers: judgeDanger(kind, before, view, pin === undefined),
      seenAt: new Date().toISOString(),
    };
    pending.set(id, change);
    if (pending.size > settings.maxPending) pending.delete(pending.keys().next().value as string);
    decide(change, blocks(mode, change) ? 'blocked' : 'warned', { changed: change.changed, dangers: change.dangers.map((d) => d.code), pinned: pin !== undefined });
    return change;
  };

  let watching = false;
  const registry: PinRegistry = {
    settings,
    judge(target, mode, kind, items) {
      // Someone else wrote the file since (an approval): read it before writing over it.
      if (mtime() !== known) registry.reload();
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
        const table = kindsOf(target)[kind];
        const pin = table.get(key);
        if (pin?.hash === hash) continue;
        if (pin === undefined && total < settings.maxItems && !doc.sealed.has(sealKey(target, kind))) {
          table.set(key, { hash, definition: pinnedView(kind, item as JsonObject), pinnedAt: new Date().toISOString() });
          total++;
          dirty = true;
          decide({ target, kind, key, hash }, 'recorded');
          continue;
        }
        const before = pending.size;
        const change = note(target, kind, key, hash, pinnedView(kind, item as JsonObject), mode);
        if (pending.size !== before) dirty = true;
        if (blocks(mode, change)) withheld.add(key);
      }
      if (dirty) save();
      return { seen, withheld };
    },
    verdict(target, mode, kind, key, hash) {
      const pin = doc.pins.get(target)?.[kind].get(key);
      if (pin?.hash === hash) return undefined;
      const change = pending.get(idOf(target, kind, key, hash));
      if (change === undefined) return 'unjudged';
      return blocks(mode, change) ? change : undefined;
    },
    sealed: (target, kind) => doc.sealed.has(sealKey(target, kind)),
    seal(target, kind, incomplete) {
      const key = sealKey(target, kind);
      if (doc.sealed.has(key)) return;
      if (incomplete !== undefined) {
        audit.warn({ event: 'pin-seal', target, kind, incomplete }, 'list sealed after an incomplete read; items first seen from now on wait for approval');
      }
      if (mtime() !== known) registry.reload();
      doc.sealed.add(key);
      save();
    },
    refused(change) {
      decide(change, 'refused');
    },
    pending: () => [...pending.values()],
    counts() {
      const out: Record<string, Record<PinKind, number>> = {};
      for (const [target, kinds] of doc.pins) out[target] = { tool: kinds.tool.size, prompt: kinds.prompt.size, resourceTemplate: kinds.resourceTemplate.size, skill: kinds.skill.size };
      return out;
    },
    approve(selector, by) {
      if (mtime() !== known) registry.reload();
      const approved = [...pending.values()].filter((c) => matches(c, selector));
      // Several versions of one item waiting: the one seen last wins (an explicit hash picks another).
      const latest = new Map<string, PinChange>();
      for (const change of approved) latest.set(`${change.kind}\u0000${change.key}`, change);
      for (const change of latest.values()) {
        const table = kindsOf(change.target)[change.kind];
        if (!table.has(change.key)) total++;
        table.set(change.key, { hash: change.hash, definition: change.definition, pinnedAt: new Date().toISOString() });
        // Other versions of the item were judged against the old pin: judged again when seen.
        for (const [id, other] of pending) if (other.target === change.target && other.kind === change.kind && other.key === change.key) pending.delete(id);
        decide(change, 'approved', { by });
      }
      if (latest.size > 0) save();
      return [...latest.values()];
    },
    reload() {
      let next: PinsDocument;
      try {
        next = readPinsFile(settings.file);
      } catch (err) {
        logger.error({ err, file: settings.file }, 'pins file unreadable; the pins in memory stay in force');
        return;
      }
      // The file's pins are the decisions; changes still waiting in memory stay unless now pinned.
      const merged = new Map(next.pending.map((c) => [idOf(c.target, c.kind, c.key, c.hash), c]));
      for (const [id, change] of pending) {
        if (next.pins.get(change.target)?.[change.kind].get(change.key)?.hash !== change.hash && !merged.has(id)) merged.set(id, change);
      }
      for (const [id, change] of merged) if (next.pins.get(change.target)?.[change.kind].get(change.key)?.hash === change.hash) merged.delete(id);
      doc = next;
      known = mtime();
      pending = merged;
      recount();
    },
    pinned: (target, kind, key) => doc.pins.get(target)?.[kind].get(key),
    close() {
      if (watching) unwatchFile(settings.file, onfile);
      watching = false;
    },
  };
  // The `pins` command writes the file: its approvals reach the running gateway within a second.
  const onfile = () => {
    if (mtime() !== known) registry.reload();
  };
  watchFile(settings.file, { interval: 500, persistent: false }, onfile);
  watching = true;
  return registry;
}
