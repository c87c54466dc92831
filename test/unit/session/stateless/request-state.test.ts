import { describe, expect, it } from 'vitest';
import { deriveKeyRing } from '../../../../src/cluster/keyring.ts';
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

  describe('with a cluster key ring', () => {
    const stateKeys = (keys: string[], replica: string) => ({ keys: deriveKeyRing(keys).map((k) => k.state), replica });
    const KEY_A = 'a'.repeat(32) + '-first-cluster-key';
    const KEY_B = 'b'.repeat(32) + '-second-cluster-key';

    it('names the replica that sealed it, readable by any replica of the ring, and by no one else', () => {
      const r1 = createStateCodec(stateKeys([KEY_A], 'r1'));
      const r2 = createStateCodec(stateKeys([KEY_A], 'r2'));
      const token = r1.seal(claims);
      expect(r2.open(token)).toEqual({ ...claims, replica: 'r1' });
      expect(Buffer.from(token, 'base64url').toString('latin1')).not.toContain('r1');
      expect(createStateCodec(stateKeys([KEY_B], 'r1')).open(token)).toBeUndefined();
      expect(createStateCodec().open(token)).toBeUndefined();
      // The session-id key of the same ring is another key: a state is not a session id, nor the reverse.
      expect(createStateCodec({ keys: deriveKeyRing([KEY_A]).map((k) => k.seal.export()), replica: 'r2' }).open(token)).toBeUndefined();
    });

    it('rotation: the first key seals, every key opens', () => {
      const old = createStateCodec(stateKeys([KEY_A], 'r1')).seal(claims);
      const rotated = createStateCodec(stateKeys([KEY_B, KEY_A], 'r2'));
      expect(rotated.open(old)?.replica).toBe('r1');
      expect(createStateCodec(stateKeys([KEY_A], 'r1')).open(rotated.seal(claims))).toBeUndefined();
      expect(createStateCodec(stateKeys([KEY_B], 'r1')).open(rotated.seal(claims))?.replica).toBe('r2');
    });

    it('cannot be pointed at another replica: any altered byte opens to nothing', () => {
      const token = createStateCodec(stateKeys([KEY_A], 'r1')).seal(claims);
      const reader = createStateCodec(stateKeys([KEY_A], 'r2'));
      const raw = Buffer.from(token, 'base64url');
      for (let i = 0; i < raw.length; i++) {
        const altered = Buffer.from(raw);
        altered[i] = (altered[i] as number) ^ 0x01;
        expect(reader.open(altered.toString('base64url')), `byte ${i}`).toBeUndefined();
      }
    });
  });
});
