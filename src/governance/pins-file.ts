/**
 * The pins file (`gateway.pinning.file`): what was approved per target and kind, and the changes
 * waiting for a decision, as one JSON document. Written whole and atomically (a temporary file in
 * the same folder, then rename), so a reader (the gateway, the `pins` command) never sees half a
 * file; read defensively, since an operator may edit it by hand.
 *
 * {
 *   "version": 1,
 *   "targets": { "<target>": { "tool": { "<name>": { "hash", "definition", "pinnedAt" } }, "prompt": {...}, "resourceTemplate": {...}, "skill": {...} } },
 *   "pending": [ { "target", "kind", "key", "hash", "definition", "changed", "dangers", "seenAt" } ],
 *   "sealed": { "<target>": ["tool", ...] }
 * }
 *
 * A kind of a target is **sealed** once the gateway has read its whole list: from then on an item
 * it never saw is a change to approve, not a first sight. A file without "sealed" (written by hand)
 * seals every kind it pins.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { JsonObject } from '../jsonrpc/types.ts';
import { PIN_KIND_NAMES, type PinKind } from './canonical.ts';
import type { Danger } from './danger.ts';

export interface Pin {
  readonly hash: string;
  /** The pinned fields as approved (canonical.ts pinnedView): what a diff is shown against. */
  readonly definition: JsonObject;
  readonly pinnedAt: string;
}

/** A definition that differs from its pin (or could not be pinned), waiting for a decision. */
export interface PinChange {
  readonly target: string;
  readonly kind: PinKind;
  /** The item's name (its URI template for a resource template). */
  readonly key: string;
  readonly hash: string;
  readonly definition: JsonObject;
  /** Pinned fields that differ (all of them when nothing was pinned: the pins file was full). */
  readonly changed: readonly string[];
  readonly dangers: readonly Danger[];
  readonly seenAt: string;
}

/** target -> kind -> key -> pin. */
export type PinTable = Map<string, Record<PinKind, Map<string, Pin>>>;

export interface PinsDocument {
  readonly pins: PinTable;
  readonly pending: PinChange[];
  /** `<target>\u0000<kind>` of the sealed kinds. */
  readonly sealed: Set<string>;
}

export const sealKey = (target: string, kind: PinKind) => `${target}\u0000${kind}`;

export const emptyKinds = (): Record<PinKind, Map<string, Pin>> => ({ tool: new Map(), prompt: new Map(), resourceTemplate: new Map(), skill: new Map() });

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function toPin(value: unknown): Pin | undefined {
  if (!isRecord(value) || typeof value.hash !== 'string' || !isRecord(value.definition)) return undefined;
  return { hash: value.hash, definition: value.definition as JsonObject, pinnedAt: typeof value.pinnedAt === 'string' ? value.pinnedAt : '' };
}

function toChange(value: unknown): PinChange | undefined {
  if (!isRecord(value) || !isRecord(value.definition)) return undefined;
  const { target, kind, key, hash } = value;
  if (typeof target !== 'string' || typeof key !== 'string' || typeof hash !== 'string' || !PIN_KIND_NAMES.includes(kind as PinKind)) return undefined;
  const changed = Array.isArray(value.changed) ? value.changed.filter((c): c is string => typeof c === 'string') : [];
  const dangers = Array.isArray(value.dangers) ? (value.dangers.filter((d) => isRecord(d) && typeof d.code === 'string' && typeof d.detail === 'string') as unknown as Danger[]) : [];
  return { target, kind: kind as PinKind, key, hash, definition: value.definition as JsonObject, changed, dangers, seenAt: typeof value.seenAt === 'string' ? value.seenAt : '' };
}

/** Reads `path`; a missing file is an empty document. Throws with the path on a file that is not a pins document. */
export function readPinsFile(path: string): PinsDocument {
  const pins: PinTable = new Map();
  if (!existsSync(path)) return { pins, pending: [], sealed: new Set() };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`pins file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (!isRecord(parsed) || parsed.version !== 1 || !isRecord(parsed.targets)) throw new Error(`pins file ${path} is not a version 1 pins document`);
  for (const [target, kinds] of Object.entries(parsed.targets)) {
    if (!isRecord(kinds)) continue;
    const table = emptyKinds();
    for (const kind of PIN_KIND_NAMES) {
      const items = kinds[kind];
      if (!isRecord(items)) continue;
      for (const [key, value] of Object.entries(items)) {
        const pin = toPin(value);
        if (pin !== undefined) table[kind].set(key, pin);
      }
    }
    pins.set(target, table);
  }
  const pending = Array.isArray(parsed.pending) ? parsed.pending.map(toChange).filter((c): c is PinChange => c !== undefined) : [];
  const sealed = new Set<string>();
  if (isRecord(parsed.sealed)) {
    for (const [target, kinds] of Object.entries(parsed.sealed)) {
      if (Array.isArray(kinds)) for (const kind of kinds) if (PIN_KIND_NAMES.includes(kind as PinKind)) sealed.add(sealKey(target, kind as PinKind));
    }
  } else {
    for (const [target, kinds] of pins) for (const kind of PIN_KIND_NAMES) if (kinds[kind].size > 0) sealed.add(sealKey(target, kind));
  }
  return { pins, pending, sealed };
}

/** The document as JSON text (keys of the tables sorted, so diffs of the file stay readable). */
export function pinsText(doc: PinsDocument): string {
  const targets: Record<string, Record<string, Record<string, Pin>>> = {};
  for (const target of [...doc.pins.keys()].sort()) {
    const kinds = doc.pins.get(target) as Record<PinKind, Map<string, Pin>>;
    const out: Record<string, Record<string, Pin>> = {};
    for (const kind of PIN_KIND_NAMES) {
      if (kinds[kind].size > 0) out[kind] = Object.fromEntries([...kinds[kind]].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    targets[target] = out;
  }
  const sealed: Record<string, string[]> = {};
  for (const key of [...doc.sealed].sort()) {
    const [target, kind] = key.split('\u0000') as [string, string];
    (sealed[target] ??= []).push(kind);
  }
  return `${JSON.stringify({ version: 1, targets, pending: doc.pending, sealed }, null, 2)}\n`;
}

/** Writes the document atomically: a reader sees the old file or the new one, never a mix. */
export function writePinsFile(path: string, doc: PinsDocument): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, pinsText(doc));
  renameSync(temporary, path);
}
