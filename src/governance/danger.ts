/**
 * Which changes to a pinned definition are dangerous whatever `pinning.mode` says about benign
 * ones (docs/governance.md): a change that can steer a model or loosen a host's confirmation
 * prompts. Judged on the pinned views (canonical.ts), old against new; only what the new one
 * GAINS counts (a description that drops a URL is benign). Pure functions.
 *
 * - `destructiveHint`, `openWorldHint` or `readOnlyHint` changing their effective value (the spec's
 *   defaults fill absent ones: destructive and open-world true, read-only false), either way: a
 *   tool that starts claiming to be harmless gets auto-approved by hosts that trust hints, and one
 *   that starts destroying or reaching out has widened what was approved;
 * - a hint that is not a boolean (`"readOnlyHint": "true"`, `"destructiveHint": 0`), or
 *   annotations that are not an object, whenever that value is new: common SDKs read `"true"` as
 *   true and `0` as false, so what a host believes cannot be known; it counts as a changed hint,
 *   on an item first seen after its list was sealed too (docs/governance.md);
 * - a URL that no text of the old definition had (descriptions at any depth, titles);
 * - words addressed to the model that the old text did not have ("ignore previous", "you must",
 *   `<IMPORTANT>`, "do not tell the user", ...);
 * - invisible characters: zero-width and joiners, bidi controls, the Unicode tags block, soft hyphen.
 */
import type { JsonObject } from '../jsonrpc/types.ts';
import type { PinKind } from './canonical.ts';

/** One dangerous change: a stable code and the words that explain it. */
export interface Danger {
  readonly code: 'hint-changed' | 'url-added' | 'model-instructions' | 'invisible-unicode';
  readonly detail: string;
}

/** The spec's defaults (schema.ts ToolAnnotations): what an absent hint means. */
const HINT_DEFAULTS = { destructiveHint: true, openWorldHint: true, readOnlyHint: false } as const;

const URL_PATTERN = /\b(?:https?|ftp|file|wss?|data|javascript):[^\s"'<>)\]]*|\bwww\.[a-z0-9-]+\.[^\s"'<>)\]]*/gi;

/** Words addressed to the model rather than describing the tool. Lower-case matching. */
const INSTRUCTION_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|other)\b/i, 'ignore previous'],
  [/\byou\s+(?:must|should\s+always|have\s+to|are\s+required\s+to)\b/i, 'you must'],
  [/<\s*\/?\s*(?:important|system|instructions?|secret|admin)\s*>/i, '<IMPORTANT>-style tag'],
  [/\bdo\s+not\s+(?:tell|mention|inform|reveal|show)\b/i, 'do not tell'],
  [/\b(?:before|after)\s+(?:using|calling)\s+(?:this|any)\s+(?:other\s+)?tool\b/i, 'before using this tool'],
  [/\b(?:system\s+prompt|new\s+instructions?)\b/i, 'system prompt'],
  [/\b(?:read|send|include|upload)\b[^.]{0,40}\b(?:~\/\.ssh|id_rsa|\.env|credentials|api[_ -]?keys?|passwords?)\b/i, 'asks for secrets'],
];

/** Zero-width and joiners, bidi controls, soft hyphen, word joiner family, BOM, the tags block. */
const INVISIBLE = /[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]|[\u{E0000}-\u{E007F}]/gu;

/** Every string in `value`, at any depth (object keys included: a schema's property names are read too). */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      strings(v, out);
    }
  }
  return out;
}

type HintName = keyof typeof HINT_DEFAULTS;

/** The raw value of a hint (undefined when absent, or when `annotations` is no object). */
function rawHint(view: JsonObject, name: HintName): unknown {
  const annotations = view.annotations;
  return annotations !== null && typeof annotations === 'object' && !Array.isArray(annotations) ? (annotations as JsonObject)[name] : undefined;
}

function hint(view: JsonObject, name: HintName): boolean {
  const value = rawHint(view, name);
  return typeof value === 'boolean' ? value : HINT_DEFAULTS[name];
}

/** What is malformed in `view`'s annotations: non-boolean hints, or annotations that are no object. */
function malformedHints(view: JsonObject): Map<string, string> {
  const out = new Map<string, string>();
  const annotations = view.annotations;
  if (annotations !== undefined && (annotations === null || typeof annotations !== 'object' || Array.isArray(annotations))) {
    out.set('annotations', `annotations is ${JSON.stringify(annotations)}, not an object`);
  }
  for (const name of Object.keys(HINT_DEFAULTS) as HintName[]) {
    const value = rawHint(view, name);
    if (value !== undefined && typeof value !== 'boolean') out.set(name, `annotations.${name} is ${JSON.stringify(value)}, not a boolean`);
  }
  return out;
}

/**
 * The hint changes from `before` to `after`: an effective value that flips, and a malformed hint
 * `before` did not have. `firstSight` (no pin to compare with): only the malformed ones count.
 */
function hintDangers(before: JsonObject, after: JsonObject, firstSight: boolean): Danger[] {
  const dangers: Danger[] = [];
  const malformedBefore = malformedHints(before);
  for (const [name, detail] of malformedHints(after)) {
    if (malformedBefore.get(name) !== detail) dangers.push({ code: 'hint-changed', detail });
  }
  if (firstSight) return dangers;
  for (const name of Object.keys(HINT_DEFAULTS) as HintName[]) {
    const was = hint(before, name);
    const now = hint(after, name);
    if (was !== now) dangers.push({ code: 'hint-changed', detail: `annotations.${name} changed from ${was} to ${now}` });
  }
  return dangers;
}

function count(text: string, pattern: RegExp): number {
  return text.match(new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`))?.length ?? 0;
}

/**
 * The dangerous changes from `before` to `after` (pinned views of one item); [] when none.
 * `firstSight`: `after` is an item with no pin (added after its list was sealed): it has no
 * hints to flip, but a malformed hint still counts.
 */
export function judgeDanger(kind: PinKind, before: JsonObject, after: JsonObject, firstSight = false): Danger[] {
  const dangers: Danger[] = kind === 'tool' ? hintDangers(before, after, firstSight) : [];
  const oldText = strings(before).join('\n');
  const newText = strings(after).join('\n');
  const oldUrls = new Set(oldText.match(URL_PATTERN) ?? []);
  const added = [...new Set(newText.match(URL_PATTERN) ?? [])].filter((url) => !oldUrls.has(url));
  if (added.length > 0) dangers.push({ code: 'url-added', detail: `new URL in the text: ${added.slice(0, 3).join(', ')}` });
  for (const [pattern, label] of INSTRUCTION_PATTERNS) {
    if (count(newText, pattern) > count(oldText, pattern)) dangers.push({ code: 'model-instructions', detail: `words addressed to the model: ${label}` });
  }
  const invisibleBefore = oldText.match(INVISIBLE)?.length ?? 0;
  const invisibleAfter = newText.match(INVISIBLE)?.length ?? 0;
  if (invisibleAfter > invisibleBefore) {
    dangers.push({ code: 'invisible-unicode', detail: `${invisibleAfter - invisibleBefore} invisible character(s) added (zero-width, bidi control or tag)` });
  }
  return dangers;
}
