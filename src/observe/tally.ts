/**
 * The numbers behind the metrics, kept as plain counters in nested Maps keyed by label values
 * (strings the gateway already holds: no key is built per event). prom-client reads them when
 * Prometheus scrapes (metrics-export.ts).
 */
import { createHistogram, type Histogram } from './histogram.ts';

/** A map of maps, `depth` levels deep, whose leaves are `V`. */
export interface Tree<V> {
  readonly root: Map<string, unknown>;
  readonly depth: number;
  readonly make: () => V;
}

export function createTree<V>(depth: number, make: () => V): Tree<V> {
  return { root: new Map(), depth, make };
}

const newMap = () => new Map<string, unknown>();

/** The leaf at `a` (> `b` > `c` > `d`, as deep as the tree is), made on first use. */
export function leaf<V>(tree: Tree<V>, a: string, b?: string, c?: string, d?: string): V {
  let node = tree.root;
  const keys = tree.depth;
  for (let i = 0; i < keys - 1; i++) {
    const key = (i === 0 ? a : i === 1 ? b : i === 2 ? c : d) as string;
    let next = node.get(key) as Map<string, unknown> | undefined;
    if (next === undefined) node.set(key, (next = newMap()));
    node = next;
  }
  const last = (keys === 1 ? a : keys === 2 ? b : keys === 3 ? c : d) as string;
  let value = node.get(last) as V | undefined;
  if (value === undefined) node.set(last, (value = tree.make()));
  return value;
}

/** Every leaf with its label values, in insertion order (scrape time only). */
export function* leaves<V>(tree: Tree<V>): Generator<[string[], V]> {
  function* walk(node: Map<string, unknown>, path: string[]): Generator<[string[], V]> {
    for (const [key, value] of node) {
      if (path.length + 1 === tree.depth) yield [[...path, key], value as V];
      else yield* walk(value as Map<string, unknown>, [...path, key]);
    }
  }
  yield* walk(tree.root, []);
}

/** A counter slot per outcome (or event) index. */
export const counters = (n: number) => () => new Float64Array(n);
export const histograms = () => createHistogram();
export type { Histogram };
