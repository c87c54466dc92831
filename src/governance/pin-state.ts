/**
 * The pins registry's state (pin-registry.ts): the pins document as last read or written, the
 * changes waiting, the count of pins, and what every decision does with them (note a change,
 * record the decision, save, read the file again). The registry's types live here too, so that
 * this file and pin-registry.ts do not import each other (pin-registry.ts re-exports them).
 */
import { statSync } from 'node:fs';
import type { JsonObject } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import type { PinDecisionName } from '../log/observer.ts';
import { changedFields, type PinKind } from './canonical.ts';
import { judgeDanger } from './danger.ts';
import { emptyKinds, readPinsFile, writePinsFile, type Pin, type PinChange, type PinsDocument } from './pins-file.ts';

export type PinMode = 'off' | 'warn' | 'block';

/** What a decision is called in audit lines and metrics. */
export type PinDecision = PinDecisionName;

export interface PinningSettings {
  readonly file: string;
  readonly maxItems: number;
  readonly maxPending: number;
}

/** Told of every decision (the metrics; observe/). */
export type PinReporter = (target: string, decision: PinDecision) => void;

export const idOf = (target: string, kind: PinKind, key: string, hash: string) => `${target}\u0000${kind}\u0000${key}\u0000${hash}`;

export const blocks = (mode: PinMode, change: PinChange) => mode === 'block' || (mode !== 'off' && change.dangers.length > 0);

export class PinState {
  readonly settings: PinningSettings;
  readonly logger: Logger;
  readonly audit: Logger;
  readonly report: PinReporter;
  /**
   * The file's identity when this registry last read or wrote it (inode, times, size: every write
   * is a new inode, and file times are too coarse alone): another writer (the `pins` command) changes it.
   */
  known = '';
  doc: PinsDocument;
  pending: Map<string, PinChange>;
  total = 0;

  constructor(settings: PinningSettings, logger: Logger, report: PinReporter) {
    this.settings = settings;
    this.logger = logger;
    this.report = report;
    this.audit = logger.child({ audit: true, component: 'pinning' });
    this.doc = readPinsFile(settings.file);
    this.known = this.mtime();
    this.pending = new Map(this.doc.pending.map((c) => [idOf(c.target, c.kind, c.key, c.hash), c]));
    this.recount();
  }

  mtime(): string {
    try {
      const s = statSync(this.settings.file);
      return `${s.ino}:${s.mtimeMs}:${s.ctimeMs}:${s.size}`;
    } catch {
      return '';
    }
  }

  /** Someone else wrote the file since (an approval): read it before writing over it. */
  fresh(): void {
    if (this.mtime() !== this.known) this.reload();
  }

  recount(): void {
    this.total = 0;
    for (const kinds of this.doc.pins.values()) for (const kind of Object.values(kinds)) this.total += kind.size;
  }

  save(): void {
    const doc = (this.doc = { pins: this.doc.pins, pending: [...this.pending.values()], sealed: this.doc.sealed });
    try {
      writePinsFile(this.settings.file, doc);
      this.known = this.mtime();
    } catch (err) {
      // The decision stands in memory; the operator learns that it will not survive a restart.
      this.logger.error({ err, file: this.settings.file }, 'could not write the pins file; pins are kept in memory only until it can be');
    }
  }

  decide(change: Pick<PinChange, 'target' | 'kind' | 'key' | 'hash'>, decision: PinDecision, extra: Record<string, unknown> = {}): void {
    this.report(change.target, decision);
    const line = { event: 'pin', decision, target: change.target, kind: change.kind, key: change.key, hash: change.hash, ...extra };
    if (decision === 'recorded' || decision === 'approved') this.audit.info(line, 'audit');
    else this.audit.warn(line, 'audit');
  }

  kindsOf(target: string): Record<PinKind, Map<string, Pin>> {
    let kinds = this.doc.pins.get(target);
    if (kinds === undefined) this.doc.pins.set(target, (kinds = emptyKinds()));
    return kinds;
  }

  /** A definition that differs from its pin (or a new one past the bounds): a pending change. */
  note(target: string, kind: PinKind, key: string, hash: string, view: JsonObject, mode: PinMode): PinChange {
    const id = idOf(target, kind, key, hash);
    const waiting = this.pending.get(id);
    if (waiting !== undefined) return waiting;
    const pin = this.doc.pins.get(target)?.[kind].get(key);
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
    this.pending.set(id, change);
    if (this.pending.size > this.settings.maxPending) this.pending.delete(this.pending.keys().next().value as string);
    this.decide(change, blocks(mode, change) ? 'blocked' : 'warned', { changed: change.changed, dangers: change.dangers.map((d) => d.code), pinned: pin !== undefined });
    return change;
  }

  /** Reads the file again (a reload, or the `pins` command wrote it). */
  reload(): void {
    let next: PinsDocument;
    try {
      next = readPinsFile(this.settings.file);
    } catch (err) {
      this.logger.error({ err, file: this.settings.file }, 'pins file unreadable; the pins in memory stay in force');
      return;
    }
    // The file's pins are the decisions; changes still waiting in memory stay unless now pinned.
    const merged = new Map(next.pending.map((c) => [idOf(c.target, c.kind, c.key, c.hash), c]));
    for (const [id, change] of this.pending) {
      if (next.pins.get(change.target)?.[change.kind].get(change.key)?.hash !== change.hash && !merged.has(id)) merged.set(id, change);
    }
    for (const [id, change] of merged) if (next.pins.get(change.target)?.[change.kind].get(change.key)?.hash === change.hash) merged.delete(id);
    this.doc = next;
    this.known = this.mtime();
    this.pending = merged;
    this.recount();
  }
}
