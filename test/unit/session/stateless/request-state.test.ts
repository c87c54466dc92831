import { describe, expect, it } from 'vitest';
import { createStateCodec, type StateClaims } from '../../../../src/session/stateless/request-state.ts';

const claims: StateClaims = { scope: 'target:a\u0000key:alice', host: 'h-1', call: 3, method: 'tools/call', round: 1, expires: 1_900_000_000_000 };

describe('requestState codec', () => {
  it('opens what it sealed, and the token says nothing readable', () => {
    const codec = createStateCodec();
    const token = codec.seal(claims);
    expect(codec.open(token)).toEqual(claims);
    expect(Buffer.from(token, 'base64url').toString('latin1')).not.toContain('alice');
  });

  it('refuses any altered byte, a foreign key, junk and oversize input', () => {
    const codec = createStateCodec();
    const token = codec.seal(claims);
    for (let i = 0; i < token.length; i += 7) {
      const flipped = token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);
      expect(codec.open(flipped), `byte ${i}`).toBeUndefined();
    }
    expect(createStateCodec().open(token)).toBeUndefined();
    expect(codec.open(`${token}-TAMPERED`)).toBeUndefined();
    expect(codec.open('')).toBeUndefined();
    expect(codec.open(42)).toBeUndefined();
    expect(codec.open('A'.repeat(10_000))).toBeUndefined();
  });
});
