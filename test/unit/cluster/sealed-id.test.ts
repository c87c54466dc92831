/** Sealed session ids: what one key ring seals, it opens; anything else opens to nothing. */
import { describe, expect, it } from 'vitest';
import { deriveKeyRing } from '../../../src/cluster/keyring.ts';
import { createSessionSealer } from '../../../src/cluster/sealed-id.ts';

const KEY_A = 'a'.repeat(32) + '-first-cluster-key';
const KEY_B = 'b'.repeat(32) + '-second-cluster-key';
const session = { replica: 'r1', local: '6f1c1f8e-0c39-4a8e-9d1e-1b2f7f1e2a3b', principal: 'key:alice' };

describe('sealed session ids', () => {
  it('opens what it sealed, and each seal differs (random IV)', () => {
    const sealer = createSessionSealer(deriveKeyRing([KEY_A]));
    const one = sealer.seal(session);
    const two = sealer.seal(session);
    expect(one).not.toBe(two);
    expect(one).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(sealer.open(one)).toEqual(session);
    expect(sealer.open(two)).toEqual(session);
  });

  it('keeps principal ids with any characters intact', () => {
    const sealer = createSessionSealer(deriveKeyRing([KEY_A]));
    const odd = { ...session, principal: 'https://issuer.example/#sub "with" \n newline, ü' };
    expect(sealer.open(sealer.seal(odd))).toEqual(odd);
  });

  it('refuses every altered byte, truncation and garbage', () => {
    const sealer = createSessionSealer(deriveKeyRing([KEY_A]));
    const token = sealer.seal(session);
    const bytes = Buffer.from(token, 'base64url');
    for (let i = 0; i < bytes.length; i++) {
      const altered = Buffer.from(bytes);
      altered[i] = (altered[i] as number) ^ 0x01;
      expect(sealer.open(altered.toString('base64url'))).toBeUndefined();
    }
    expect(sealer.open(token.slice(0, -2))).toBeUndefined();
    expect(sealer.open('')).toBeUndefined();
    expect(sealer.open('6f1c1f8e-0c39-4a8e-9d1e-1b2f7f1e2a3b')).toBeUndefined();
    expect(sealer.open('not base64 at all!')).toBeUndefined();
    expect(sealer.open('A'.repeat(5_000))).toBeUndefined();
  });

  it('refuses a token another cluster sealed', () => {
    const ours = createSessionSealer(deriveKeyRing([KEY_A]));
    const theirs = createSessionSealer(deriveKeyRing([KEY_B]));
    expect(ours.open(theirs.seal(session))).toBeUndefined();
  });

  it('rotation: the new key seals, the old one still opens', () => {
    const before = createSessionSealer(deriveKeyRing([KEY_A]));
    const after = createSessionSealer(deriveKeyRing([KEY_B, KEY_A]));
    const old = before.seal(session);
    expect(after.open(old)).toEqual(session);
    const fresh = after.seal(session);
    expect(before.open(fresh)).toBeUndefined();
    expect(createSessionSealer(deriveKeyRing([KEY_B])).open(fresh)).toEqual(session);
  });
});
