import { describe, expect, it } from 'vitest';
import { createNameTable } from '../../../src/router/name-table.ts';
import { exposeName, isStrictName, MAX_EXPOSED_NAME_LENGTH } from '../../../src/router/naming.ts';
import { createRandom, STRICT_ALPHABET, TARGET_ALPHABET, WILD_ALPHABET } from './random.ts';

const SEEDS = [1, 7, 42, 2026, 99991];

describe('exposeName', () => {
  it('keeps a short strict name readable: <prefix>__<name>', () => {
    expect(exposeName('github', '__', 'create_issue')).toBe('github__create_issue');
    expect(exposeName('', '__', 'create_issue')).toBe('create_issue');
  });

  it('shortens a long name to exactly 64 characters with a stable hash suffix', () => {
    const long = 'a_very_long_tool_name_that_goes_on_and_on_to_exceed_the_limit_of_sixty_four_characters';
    const exposed = exposeName('collider', '__', long);
    expect(exposed).toHaveLength(MAX_EXPOSED_NAME_LENGTH);
    expect(exposed.slice(0, 55)).toBe(`collider__${long}`.slice(0, 55));
    expect(exposed.slice(55)).toMatch(/^-[0-9a-f]{8}$/);
    expect(exposeName('collider', '__', long)).toBe(exposed);
    expect(exposeName('collider', '__', `${long}_2`)).not.toBe(exposed);
  });

  it('gives the names docs/aggregation.md and the README show', () => {
    expect(exposeName('notes', '__', 'dotted.name')).toBe('notes__dotted_name-81419233');
    expect(exposeName('fs', '__', 'read_file')).toBe('fs__read_file');
  });

  it('hashes a name with characters outside the strict set instead of passing them on', () => {
    const exposed = exposeName('fs', '__', 'read.file');
    expect(exposed).toMatch(/^fs__read_file-[0-9a-f]{8}$/);
    expect(exposeName('fs', '__', 'read_file')).toBe('fs__read_file');
  });

  it.each(SEEDS)('property (seed %i): every exposed name is strict, at most 64 characters, and deterministic', (seed) => {
    const random = createRandom(seed);
    for (let i = 0; i < 500; i++) {
      const prefix = random.int(10) === 0 ? '' : random.string(TARGET_ALPHABET, 1 + random.int(64));
      const name = random.string(random.int(2) === 0 ? STRICT_ALPHABET : WILD_ALPHABET, 1 + random.int(150));
      const exposed = exposeName(prefix, '__', name);
      expect(isStrictName(exposed), `seed ${seed}: ${prefix} ${name} -> ${exposed}`).toBe(true);
      expect(exposeName(prefix, '__', name)).toBe(exposed);
      const full = prefix === '' ? name : `${prefix}__${name}`;
      if (full.length <= 64 && /^[A-Za-z0-9_-]+$/.test(full)) expect(exposed).toBe(full);
      else expect(exposed).toMatch(/-[0-9a-f]{8}$/);
    }
  });
});

describe('name table', () => {
  it('round-trips exposed names back to (target, name), and recognises nothing else', () => {
    const table = createNameTable('__');
    const exposed = table.expose('one', 'one', 'echo');
    expect(exposed).toBe('one__echo');
    expect(table.resolve('one__echo')).toEqual({ target: 'one', name: 'echo' });
    expect(table.resolve('two__echo')).toBeUndefined();
    expect(table.expose('one', 'one', 'echo')).toBe('one__echo');
  });

  it('settles a prefixed collision in favour of the first target, the second gets a distinct reversible name', () => {
    const table = createNameTable('__');
    // "a_" + "__" + "b" and "a" + "__" + "_b" spell the same thing.
    const first = table.expose('a_', 'a_', 'b');
    const second = table.expose('a', 'a', '_b');
    expect(first).toBe('a___b');
    expect(second).not.toBe(first);
    expect(table.resolve(first as string)).toEqual({ target: 'a_', name: 'b' });
    expect(table.resolve(second as string)).toEqual({ target: 'a', name: '_b' });
    expect(table.takeCollisions()).toEqual([]);
  });

  it('without a prefix, keeps the first owner of a name and reports the second, naming both targets', () => {
    const table = createNameTable('__');
    expect(table.expose('one', '', 'echo')).toBe('echo');
    expect(table.expose('two', '', 'echo')).toBeUndefined();
    expect(table.takeCollisions()).toEqual([{ exposed: 'echo', kept: { target: 'one', name: 'echo' }, dropped: { target: 'two', name: 'echo' } }]);
    expect(table.takeCollisions()).toEqual([]);
    expect(table.resolve('echo')).toEqual({ target: 'one', name: 'echo' });
  });

  it('forgets a target without touching the others', () => {
    const table = createNameTable('__');
    table.expose('one', 'one', 'x');
    table.expose('two', 'two', 'x');
    table.forget('one');
    expect(table.resolve('one__x')).toBeUndefined();
    expect(table.resolve('two__x')).toEqual({ target: 'two', name: 'x' });
  });

  it.each(SEEDS)('property (seed %i): many targets and names, long and colliding: every exposed name is unique, strict and resolves back', (seed) => {
    const random = createRandom(seed);
    const table = createNameTable('__');
    const targets = Array.from({ length: 6 }, (_, i) => (i === 0 ? 'a' : i === 1 ? 'a_' : random.string(TARGET_ALPHABET, 1 + random.int(40))));
    const seen = new Map<string, { target: string; name: string }>();
    // A small alphabet and long shared stems make collisions and shortened names likely.
    const stem = 'x'.repeat(55);
    for (let i = 0; i < 600; i++) {
      const target = random.pick(targets);
      const name = random.int(3) === 0 ? `${stem}${random.string('ab', 1 + random.int(12))}` : random.string('_ab.', 1 + random.int(6));
      const exposed = table.expose(target, target, name);
      expect(exposed, `seed ${seed}`).toBeDefined();
      expect(isStrictName(exposed as string), `seed ${seed}: ${exposed}`).toBe(true);
      const owner = seen.get(exposed as string);
      if (owner !== undefined) expect(owner, `seed ${seed}: ${exposed} given twice`).toEqual({ target, name });
      seen.set(exposed as string, { target, name });
      expect(table.resolve(exposed as string)).toEqual({ target, name });
    }
  });
});
