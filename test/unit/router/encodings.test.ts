import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../../src/router/cursor.ts';
import { createNameFilter } from '../../../src/router/glob.ts';
import { decodeResourceUri, encodeResourceUri } from '../../../src/router/resource-uri.ts';
import { createRandom, TARGET_ALPHABET, WILD_ALPHABET } from './random.ts';

const SEEDS = [3, 11, 4242];

describe('resource URI encoding', () => {
  it('is <target>+<uri> and valid as a URI when the target is a valid scheme', () => {
    const encoded = encodeResourceUri('files', 'file:///etc/hosts');
    expect(encoded).toBe('files+file:///etc/hosts');
    expect(new URL(encoded).protocol).toBe('files+file:');
    expect(decodeResourceUri(encoded)).toEqual({ target: 'files', uri: 'file:///etc/hosts' });
  });

  it('decodes a URI whose own text holds "+" (only the first "+" ends the target)', () => {
    expect(decodeResourceUri('git+git+ssh://host/repo?a+b')).toEqual({ target: 'git', uri: 'git+ssh://host/repo?a+b' });
  });

  it('refuses what is not of its form', () => {
    expect(decodeResourceUri('file:///etc/hosts')).toBeUndefined();
    expect(decodeResourceUri('+file:///x')).toBeUndefined();
  });

  it.each(SEEDS)('property (seed %i): decode(encode(t, u)) = (t, u) for any target name and any URI text', (seed) => {
    const random = createRandom(seed);
    for (let i = 0; i < 1000; i++) {
      const target = random.string(TARGET_ALPHABET, 1 + random.int(64));
      const uri = random.string(`${WILD_ALPHABET}{}%#`, random.int(200));
      expect(decodeResourceUri(encodeResourceUri(target, uri)), `seed ${seed}`).toEqual({ target, uri });
    }
  });
});

describe('composite cursor', () => {
  it('round-trips the per-target cursors of one method', () => {
    const codec = createCursorCodec();
    const cursor = codec.encode('tools/list', { one: '10', two: 'abc' });
    expect(codec.decode('tools/list', cursor)).toEqual({ one: '10', two: 'abc' });
  });

  it('is refused for another method, by another process (key), or when malformed', () => {
    const codec = createCursorCodec();
    const cursor = codec.encode('tools/list', { one: '10' });
    expect(codec.decode('prompts/list', cursor)).toBeUndefined();
    expect(createCursorCodec().decode('tools/list', cursor)).toBeUndefined();
    for (const bad of ['', '.', 'abc', 'abc.', '.abc', `${cursor}x`, cursor.slice(0, -1), 'x'.repeat(70_000)]) {
      expect(codec.decode('tools/list', bad), bad.slice(0, 20)).toBeUndefined();
    }
  });

  it('refuses a payload edited to point elsewhere, even with the old signature', () => {
    const codec = createCursorCodec();
    const cursor = codec.encode('tools/list', { one: '10' });
    const [, mac] = cursor.split('.');
    const forged = Buffer.from(JSON.stringify({ v: 1, m: 'tools/list', t: { one: '0' } })).toString('base64url');
    expect(codec.decode('tools/list', `${forged}.${mac}`)).toBeUndefined();
  });

  it.each(SEEDS)('property (seed %i): any single-character change to a cursor is detected', (seed) => {
    const random = createRandom(seed);
    const codec = createCursorCodec();
    for (let i = 0; i < 300; i++) {
      const state: Record<string, string> = {};
      for (let t = 0; t < 1 + random.int(4); t++) state[random.string(TARGET_ALPHABET, 1 + random.int(10))] = random.string(WILD_ALPHABET, random.int(30));
      const cursor = codec.encode('resources/list', state);
      expect(codec.decode('resources/list', cursor)).toEqual(state);
      const at = random.int(cursor.length);
      const replacement = random.pick([...'ABCabc0129-_.']);
      if (cursor[at] === replacement) continue;
      const tampered = cursor.slice(0, at) + replacement + cursor.slice(at + 1);
      // base64url has a few spellings that decode to the same bytes in the last character; the
      // signature still covers the decoded payload, so any accepted cursor must mean the same state.
      const decoded = codec.decode('resources/list', tampered);
      if (decoded !== undefined) expect(decoded, `seed ${seed}: ${tampered}`).toEqual(state);
    }
  });
});

describe('glob filters', () => {
  it('allows everything without lists, and deny wins over allow', () => {
    expect(createNameFilter()('anything')).toBe(true);
    const filter = createNameFilter(['read_*', 'list_?'], ['read_secret*']);
    expect(filter('read_file')).toBe(true);
    expect(filter('list_a')).toBe(true);
    expect(filter('list_ab')).toBe(false);
    expect(filter('write_file')).toBe(false);
    expect(filter('read_secret_key')).toBe(false);
  });

  it('takes every other character literally (regex metacharacters, dots, slashes)', () => {
    const filter = createNameFilter(['file:///data/*.txt', 'a+b', '(x)']);
    expect(filter('file:///data/notes.txt')).toBe(true);
    expect(filter('file:///data/notes_txt')).toBe(false);
    expect(filter('a+b')).toBe(true);
    expect(filter('aab')).toBe(false);
    expect(filter('(x)')).toBe(true);
    expect(filter('x')).toBe(false);
  });

  it.each(SEEDS)('property (seed %i): a name matches itself as a pattern, and "*" + its tail', (seed) => {
    const random = createRandom(seed);
    for (let i = 0; i < 500; i++) {
      const name = random.string(WILD_ALPHABET.replace(/[*?]/g, ''), 1 + random.int(40));
      expect(createNameFilter([name])(name), `seed ${seed}: ${name}`).toBe(true);
      expect(createNameFilter([`*${name.slice(-3)}`])(name)).toBe(true);
      expect(createNameFilter([], [name])(name)).toBe(false);
      expect(createNameFilter([`${name}?`])(name)).toBe(false);
    }
  });
});
