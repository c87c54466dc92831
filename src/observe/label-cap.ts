/**
 * Bounded label values (docs/operations.md, "Cardinality"): the first `max` distinct values of a
 * label are kept as they are, every later one is reported as `other`. Tool names, targets, methods
 * and codes come from clients and servers; without a cap one client could make the gateway keep a
 * series per made-up name for ever.
 */

/** The value that stands for every value past the cap. */
export const OTHER = 'other';

export interface LabelCap {
  /** `value`, or `other` once `max` other values are known. No allocation. */
  fold(value: string): string;
  /** How many values were folded into `other` so far. */
  readonly folded: number;
}

export function createLabelCap(max: number): LabelCap {
  const known = new Set<string>();
  let folded = 0;
  return {
    fold(value) {
      if (known.has(value)) return value;
      if (known.size < max && value !== OTHER) {
        known.add(value);
        return value;
      }
      folded++;
      return OTHER;
    },
    get folded() {
      return folded;
    },
  };
}
