/**
 * A seeded generator for property-style tests: the same seed gives the same cases on every run, so
 * a failure is reproducible; the seed is part of each assertion message.
 */
export interface Random {
  readonly seed: number;
  int(max: number): number;
  pick<T>(items: readonly T[]): T;
  /** A string of `length` characters drawn from `alphabet`. */
  string(alphabet: string, length: number): string;
}

export function createRandom(seed: number): Random {
  let state = seed >>> 0 || 1;
  const next = () => {
    // xorshift32: tiny, fast, good enough to spread test cases.
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x1_0000_0000;
  };
  const random: Random = {
    seed,
    int: (max) => Math.floor(next() * max),
    pick: (items) => items[random.int(items.length)] as (typeof items)[number],
    string: (alphabet, length) => Array.from({ length }, () => alphabet[random.int(alphabet.length)]).join(''),
  };
  return random;
}

export const STRICT_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-';
/** What servers actually send: the spec's set plus characters it discourages (dots, slashes, spaces, colons). */
export const WILD_ALPHABET = `${STRICT_ALPHABET}._/ :@+*?`;
export const TARGET_ALPHABET = STRICT_ALPHABET;
