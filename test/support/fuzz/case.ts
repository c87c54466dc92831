/**
 * What the targets share: the result of one case, fresh ids, drawing a seed message and a
 * mutation, and reading back which request ids a body carried.
 */
import { SEED_LISTS, type Json, type JsonObject, type SeedContext, type SeedList } from './corpus.ts';
import { MUTATIONS, type MutationLimits } from './mutate.ts';
import type { Rng } from './prng.ts';

export interface CaseResult {
  target: string;
  mutation: string;
  /** The start of what was sent, for the report (escaped). */
  excerpt: string;
  /** HTTP statuses (or close codes) seen, for the summary. */
  outcomes: string[];
  problems: string[];
}

export interface Target {
  name: string;
  run(rng: Rng, limits: MutationLimits): Promise<CaseResult>;
  /** Ends what the target holds open. */
  close(): Promise<void>;
}

let counter = 0;
/** A fresh id: mostly numbers, some strings; unique across the campaign. */
export function freshId(rng: Rng): Json {
  counter++;
  return rng.chance(0.6) ? 100_000 + counter : `fz-${counter}`;
}

export function seedContext(rng: Rng, tools: SeedContext['tools']): SeedContext {
  return { rng, tools, id: () => freshId(rng) };
}

/** One seed message of a random list. */
export function drawSeed(rng: Rng, tools: SeedContext['tools']): JsonObject {
  return drawEraSeed(rng, tools).message;
}

function drawEraSeed(rng: Rng, tools: SeedContext['tools']): { era: SeedList['era']; message: JsonObject } {
  const list = rng.pick(SEED_LISTS);
  return { era: list.era, message: rng.pick(list.messages(seedContext(rng, tools))) };
}

/** A mutated seed: the mutation's name, the bytes, and the era of the seed (2026: no session). */
export function drawMutated(rng: Rng, tools: SeedContext['tools'], limits: MutationLimits): { mutation: string; body: Buffer; era: SeedList['era']; named: Named } {
  const seed = drawEraSeed(rng, tools);
  const mutation = rng.pick(MUTATIONS);
  // The headers of a 2026 case follow the seed before the mutation: the mutation decides what disagrees.
  const named = namedOf(seed.message);
  return { mutation: mutation.name, body: mutation.apply(seed.message, rng, limits), era: seed.era, named };
}

/** What a seed's standard headers name: its method, and its tool, prompt or resource. */
export interface Named {
  readonly method: string | undefined;
  readonly name: string | undefined;
}

function namedOf(message: JsonObject): Named {
  const params = message.params;
  const subject = typeof params === 'object' && params !== null && !Array.isArray(params) ? (params.name ?? params.uri) : undefined;
  return { method: typeof message.method === 'string' ? message.method : undefined, name: typeof subject === 'string' ? subject : undefined };
}

/** JSON texts of the request ids in a body (an object or a batch); empty when it does not parse. */
export function requestIds(body: Buffer): Set<string> {
  const ids = new Set<string>();
  try {
    // Deep nesting can overflow the stack of JSON.parse or JSON.stringify here: no ids then.
    const value: unknown = JSON.parse(body.toString('utf8'));
    for (const m of Array.isArray(value) ? value : [value]) {
      if (m !== null && typeof m === 'object' && 'id' in m) ids.add(JSON.stringify((m as { id: unknown }).id));
    }
  } catch {
    return ids;
  }
  return ids;
}

export function excerptOf(body: Buffer): string {
  const text = body.subarray(0, 300).toString('latin1');
  return JSON.stringify(text) + (body.length > 300 ? ` (+${body.length - 300} bytes)` : '');
}

/** Runs `promise` with a deadline; a missed deadline becomes the problem `what`. */
export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
