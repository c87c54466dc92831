import { describe, expect, it } from 'vitest';
import { judgeGeneration } from '../../../src/cluster/generations.ts';

const live = (entries: Record<string, string>) => new Map(Object.entries(entries));

describe('judging a replica generation', () => {
  it('agrees when every replica runs the same one, or when it is alone', () => {
    expect(judgeGeneration('r1', 'a', live({ r1: 'a', r2: 'a', r3: 'a' }))).toEqual({ differs: false, others: {} });
    expect(judgeGeneration('r1', 'a', live({}))).toEqual({ differs: false, others: {} });
  });

  it('the odd one out differs and names the others; the majority does not differ but names it', () => {
    expect(judgeGeneration('r3', 'b', live({ r1: 'a', r2: 'a', r3: 'b' }))).toEqual({ differs: true, others: { r1: 'a', r2: 'a' } });
    expect(judgeGeneration('r1', 'a', live({ r1: 'a', r2: 'a', r3: 'b' }))).toEqual({ differs: false, others: { r3: 'b' } });
  });

  it('a tie: every side differs (no majority to follow)', () => {
    expect(judgeGeneration('r1', 'a', live({ r1: 'a', r2: 'b' })).differs).toBe(true);
    expect(judgeGeneration('r2', 'b', live({ r1: 'a', r2: 'b' })).differs).toBe(true);
  });

  it('its own generation now counts, not the one it published before a reload', () => {
    expect(judgeGeneration('r1', 'new', live({ r1: 'old', r2: 'new' }))).toEqual({ differs: false, others: {} });
  });
});
