/**
 * Lexical search over a caller's tool catalog (progressive discovery, docs/aggregation.md): Okapi
 * BM25 (k1 1.2, b 0.75) over one bag of words per tool, each field's words counted with a weight
 * (BM25F-style): the name 3, the title 2, argument names 1.5, the description and argument
 * descriptions 1. Words are cut at case changes, digits and punctuation (`create_issue`,
 * `createIssue`, `github__create-issue` all give "create", "issue"), lower-cased, stripped of a few
 * English endings and stop words. No network, no model: the index is built from the list in
 * memory, in linear time, and a query costs its terms' postings. Pure.
 */
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject } from '../jsonrpc/types.ts';

const K1 = 1.2;
const B = 0.75;
const WEIGHTS = { name: 3, title: 2, argument: 1.5, text: 1 } as const;
/** Words a query or description is full of that tell tools apart poorly. */
const STOP = new Set('a an and are as at be by for from get has have how i in into is it its me my of on or that the this to use used using was what when which with you your'.split(' '));
/** Longest text read from one field: a hostile server's 10 MB description costs no more than this. */
const MAX_FIELD_CHARS = 4_096;
const MAX_ARGUMENTS = 64;

/** Light stemming: plurals and common verb endings, so "files" finds "file" and "searching" "search". */
function stem(word: string): string {
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && word.endsWith('ed')) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/** The words of `text`, split at case changes and non-alphanumerics, stemmed, stop words out. */
export function words(text: string): string[] {
  const spaced = text.slice(0, MAX_FIELD_CHARS).replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  const out: string[] = [];
  for (const raw of spaced.split(/[^\p{L}\p{N}]+/u)) {
    if (raw === '' || STOP.has(raw)) continue;
    out.push(stem(raw));
  }
  return out;
}

/** What one tool contributes: argument names and descriptions from its input schema's properties. */
function argumentsOf(tool: JsonObject): { names: string[]; texts: string[] } {
  const schema = tool.inputSchema;
  const properties = isObject(schema) && isObject(schema.properties) ? schema.properties : {};
  const names: string[] = [];
  const texts: string[] = [];
  for (const [name, property] of Object.entries(properties).slice(0, MAX_ARGUMENTS)) {
    names.push(name);
    if (isObject(property) && typeof property.description === 'string') texts.push(property.description);
  }
  return { names, texts };
}

export interface SearchHit {
  readonly tool: JsonObject;
  readonly score: number;
}

export interface ToolIndex {
  readonly size: number;
  /** The `limit` best tools for `query`, best first; ties keep catalog order. Only tools with a score. */
  search(query: string, limit: number): SearchHit[];
}

/** Indexes `tools` (listed tool objects: `name`, `title`, `description`, `inputSchema`). */
export function createToolIndex(tools: readonly JsonObject[]): ToolIndex {
  /** term -> [tool index, weighted frequency] */
  const postings = new Map<string, Array<[number, number]>>();
  const lengths: number[] = [];
  tools.forEach((tool, i) => {
    const counts = new Map<string, number>();
    const add = (text: unknown, weight: number) => {
      if (typeof text !== 'string') return;
      for (const word of words(text)) counts.set(word, (counts.get(word) ?? 0) + weight);
    };
    add(tool.name, WEIGHTS.name);
    add(tool.title, WEIGHTS.title);
    add(tool.description, WEIGHTS.text);
    const args = argumentsOf(tool);
    for (const name of args.names) add(name, WEIGHTS.argument);
    for (const text of args.texts) add(text, WEIGHTS.text);
    let length = 0;
    for (const [term, count] of counts) {
      length += count;
      let list = postings.get(term);
      if (list === undefined) postings.set(term, (list = []));
      list.push([i, count]);
    }
    lengths.push(length);
  });
  const n = tools.length;
  const average = n === 0 ? 1 : lengths.reduce((a, b) => a + b, 0) / n || 1;
  return {
    size: n,
    search(query, limit) {
      const scores = new Map<number, number>();
      for (const term of new Set(words(query))) {
        const list = postings.get(term);
        if (list === undefined) continue;
        const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
        for (const [i, tf] of list) {
          const norm = tf + K1 * (1 - B + (B * (lengths[i] as number)) / average);
          scores.set(i, (scores.get(i) ?? 0) + (idf * tf * (K1 + 1)) / norm);
        }
      }
      return [...scores]
        .sort((x, y) => y[1] - x[1] || x[0] - y[0])
        .slice(0, Math.max(0, limit))
        .map(([i, score]) => ({ tool: tools[i] as JsonObject, score }));
    },
  };
}
