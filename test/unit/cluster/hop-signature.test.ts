/** Hop signatures: fresh, exact and from a key of the ring, or refused. */
import { describe, expect, it } from 'vitest';
import { createHopSigner, MAX_SKEW_MS } from '../../../src/cluster/hop-signature.ts';
import { deriveKeyRing } from '../../../src/cluster/keyring.ts';

const KEY_A = 'a'.repeat(40);
const KEY_B = 'b'.repeat(40);
const facts = { method: 'POST', url: '/servers/rec/mcp', sessionId: 'sealed-id', principal: 'eyJpZCI6ImtleTphbGljZSJ9' };

describe('hop signatures', () => {
  it('verifies its own signature', () => {
    const signer = createHopSigner(deriveKeyRing([KEY_A]));
    expect(signer.verify(signer.sign(facts), facts)).toBe(true);
  });

  it('refuses any other method, URL, session, principal', () => {
    const signer = createHopSigner(deriveKeyRing([KEY_A]));
    const signature = signer.sign(facts);
    for (const change of [{ method: 'DELETE' }, { url: '/servers/other/mcp' }, { url: '/servers/rec/mcp?x=1' }, { sessionId: 'another' }, { sessionId: '' }, { principal: '' }, { principal: 'eyJpZCI6ImtleTptYWxsb3J5In0' }]) {
      expect(signer.verify(signature, { ...facts, ...change })).toBe(false);
    }
  });

  it('refuses stale, future, malformed and foreign-key signatures', () => {
    const signer = createHopSigner(deriveKeyRing([KEY_A]));
    const now = Date.now();
    expect(signer.verify(signer.sign(facts, now - MAX_SKEW_MS - 1), facts, now)).toBe(false);
    expect(signer.verify(signer.sign(facts, now + MAX_SKEW_MS + 1), facts, now)).toBe(false);
    expect(signer.verify(signer.sign(facts, now - 1_000), facts, now)).toBe(true);
    expect(signer.verify('', facts)).toBe(false);
    expect(signer.verify('v1.123.abc', facts)).toBe(false);
    const signature = signer.sign(facts);
    const at = signature.length - 10;
    const flipped = signature.slice(0, at) + (signature[at] === 'A' ? 'B' : 'A') + signature.slice(at + 1);
    expect(signer.verify(flipped, facts)).toBe(false);
    // The same MAC spelt with the spare bits of its last character set is not taken either.
    const last = signature.at(-1) as string;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    expect(signer.verify(signature.slice(0, -1) + alphabet[alphabet.indexOf(last) + 1], facts)).toBe(false);
    expect(createHopSigner(deriveKeyRing([KEY_B])).verify(signature, facts)).toBe(false);
  });

  it('rotation: every key of the ring verifies, the first signs', () => {
    const old = createHopSigner(deriveKeyRing([KEY_A]));
    const rotated = createHopSigner(deriveKeyRing([KEY_B, KEY_A]));
    expect(rotated.verify(old.sign(facts), facts)).toBe(true);
    expect(old.verify(rotated.sign(facts), facts)).toBe(false);
  });
});
