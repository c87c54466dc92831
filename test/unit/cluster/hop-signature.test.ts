/** Hop signatures: fresh, exact (body included) and from a key of the ring, or refused; the sealed credential bound to its hop. */
import { describe, expect, it } from 'vitest';
import { createHopSigner, MAX_SKEW_MS } from '../../../src/cluster/hop-signature.ts';
import { deriveKeyRing } from '../../../src/cluster/keyring.ts';

const KEY_A = 'a'.repeat(40);
const KEY_B = 'b'.repeat(40);
const facts = { method: 'POST', url: '/servers/rec/mcp', sessionId: 'sealed-id', principal: 'eyJpZCI6ImtleTphbGljZSJ9', credential: '' };
const BODY = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}';

describe('hop signatures', () => {
  it('verifies its own signature and gives the digest of the body it covers', () => {
    const signer = createHopSigner(deriveKeyRing([KEY_A]));
    expect(signer.verify(signer.sign(facts, BODY), facts)).toBe(signer.digest(BODY));
    expect(signer.digest(BODY)).not.toBe(signer.digest(BODY.replace('hi', 'rm -rf /')));
  });

  it('refuses any other method, URL, session, principal or credential', () => {
    const signer = createHopSigner(deriveKeyRing([KEY_A]));
    const signature = signer.sign(facts, BODY);
    for (const change of [{ method: 'DELETE' }, { url: '/servers/other/mcp' }, { url: '/servers/rec/mcp?x=1' }, { sessionId: 'another' }, { sessionId: '' }, { principal: '' }, { principal: 'eyJpZCI6ImtleTptYWxsb3J5In0' }, { credential: 'AAAA' }]) {
      expect(signer.verify(signature, { ...facts, ...change })).toBeUndefined();
    }
  });

  it('refuses a signature whose body digest was swapped for another body', () => {
    const signer = createHopSigner(deriveKeyRing([KEY_A]));
    const [v, at, , mac] = signer.sign(facts, BODY).split('.');
    expect(signer.verify(`${v}.${at}.${signer.digest('{"other":1}')}.${mac}`, facts)).toBeUndefined();
  });

  it('refuses stale, future, malformed, v1 and foreign-key signatures', () => {
    const signer = createHopSigner(deriveKeyRing([KEY_A]));
    const now = Date.now();
    expect(signer.verify(signer.sign(facts, BODY, now - MAX_SKEW_MS - 1), facts, now)).toBeUndefined();
    expect(signer.verify(signer.sign(facts, BODY, now + MAX_SKEW_MS + 1), facts, now)).toBeUndefined();
    expect(signer.verify(signer.sign(facts, BODY, now - 1_000), facts, now)).toBeDefined();
    expect(signer.verify('', facts)).toBeUndefined();
    expect(signer.verify('v1.123.abc', facts)).toBeUndefined();
    const signature = signer.sign(facts, BODY);
    const at = signature.length - 10;
    const flipped = signature.slice(0, at) + (signature[at] === 'A' ? 'B' : 'A') + signature.slice(at + 1);
    expect(signer.verify(flipped, facts)).toBeUndefined();
    // The same MAC spelt with the spare bits of its last character set is not taken either.
    const last = signature.at(-1) as string;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    expect(signer.verify(signature.slice(0, -1) + alphabet[alphabet.indexOf(last) + 1], facts)).toBeUndefined();
    expect(createHopSigner(deriveKeyRing([KEY_B])).verify(signature, facts)).toBeUndefined();
  });

  it('rotation: every key of the ring verifies, the first signs', () => {
    const old = createHopSigner(deriveKeyRing([KEY_A]));
    const rotated = createHopSigner(deriveKeyRing([KEY_B, KEY_A]));
    expect(rotated.verify(old.sign(facts, BODY), facts)).toBeDefined();
    expect(old.verify(rotated.sign(facts, BODY), facts)).toBeUndefined();
  });

  it('seals the credential for the hop it rides in: never in clear, opened only there and only with the key', () => {
    const signer = createHopSigner(deriveKeyRing([KEY_A]));
    const token = 'Bearer eyJhbGciOiJSUzI1NiJ9.secret-token.sig';
    const sealed = signer.sealCredential(token, facts);
    expect(sealed).not.toContain('secret-token');
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain('secret-token');
    expect(signer.openCredential(sealed, facts)).toBe(token);
    expect(signer.openCredential(sealed, { ...facts, sessionId: 'another' })).toBeUndefined();
    expect(signer.openCredential(sealed, { ...facts, principal: '' })).toBeUndefined();
    expect(createHopSigner(deriveKeyRing([KEY_B])).openCredential(sealed, facts)).toBeUndefined();
    expect(createHopSigner(deriveKeyRing([KEY_B, KEY_A])).openCredential(sealed, facts)).toBe(token);
    expect(signer.openCredential('not base64!', facts)).toBeUndefined();
    expect(signer.openCredential('AAAA', facts)).toBeUndefined();
  });
});
