/** Directory entries: signed by a key of the ring, under their own id, fresh; anything else refused. */
import { describe, expect, it } from 'vitest';
import { createEntryCodec } from '../../../src/cluster/directory-entry.ts';
import { MAX_SKEW_MS } from '../../../src/cluster/hop-signature.ts';
import { deriveKeyRing } from '../../../src/cluster/keyring.ts';

const KEY_A = 'a'.repeat(40);
const KEY_B = 'b'.repeat(40);
const TTL = 3_000;
const entry = { url: 'http://10.0.0.5:8080', draining: false };

describe('directory entries', () => {
  const codec = createEntryCodec(deriveKeyRing([KEY_A]), 'switchboard:', TTL);

  it('reads back what a replica of the cluster wrote', () => {
    expect(codec.read('r1', codec.write('r1', entry))).toEqual({ entry });
    expect(codec.read('r1', codec.write('r1', { ...entry, draining: true }))).toEqual({ entry: { ...entry, draining: true } });
  });

  it('refuses the old unsigned shape, garbage and other shapes', () => {
    for (const text of [JSON.stringify(entry), JSON.stringify({ url: 'http://attacker:1' }), 'not json', 'null', '[]', '{"v":2}']) {
      expect(codec.read('r1', text)).toEqual({ refused: 'unsigned' });
    }
  });

  it('refuses a changed URL or flag, another key, another prefix', () => {
    const written = JSON.parse(codec.write('r1', entry)) as Record<string, unknown>;
    expect(codec.read('r1', JSON.stringify({ ...written, url: 'http://attacker.example:9' }))).toEqual({ refused: 'foreign' });
    expect(codec.read('r1', JSON.stringify({ ...written, draining: true }))).toEqual({ refused: 'foreign' });
    expect(codec.read('r1', JSON.stringify({ ...written, at: (written.at as number) + 1 }))).toEqual({ refused: 'foreign' });
    expect(createEntryCodec(deriveKeyRing([KEY_B]), 'switchboard:', TTL).read('r1', codec.write('r1', entry))).toEqual({ refused: 'foreign' });
    expect(createEntryCodec(deriveKeyRing([KEY_A]), 'other:', TTL).read('r1', codec.write('r1', entry))).toEqual({ refused: 'foreign' });
    // Rotation: a ring with the old key second still reads it.
    expect(createEntryCodec(deriveKeyRing([KEY_B, KEY_A]), 'switchboard:', TTL).read('r1', codec.write('r1', entry))).toEqual({ entry });
  });

  it("refuses another replica's genuine entry copied under this id, and a stale or future one", () => {
    expect(codec.read('r1', codec.write('r2', entry))).toEqual({ refused: 'moved' });
    const now = Date.now();
    expect(codec.read('r1', codec.write('r1', entry, now - TTL - MAX_SKEW_MS - 1), now)).toEqual({ refused: 'stale' });
    expect(codec.read('r1', codec.write('r1', entry, now + MAX_SKEW_MS + 1), now)).toEqual({ refused: 'stale' });
    expect(codec.read('r1', codec.write('r1', entry, now - TTL), now)).toEqual({ entry });
  });
});
