import { describe, expect, it } from 'vitest';
import { encodeIdentity, principalEnv, principalHeaders } from '../../../src/upstream/identity.ts';

describe('per-principal templates', () => {
  it('fills {sub} and {principal}, every occurrence', () => {
    expect(principalHeaders({ 'x-user': '{sub}', 'x-who': '{principal} ({sub}/{sub})' }, { id: 'https://as#alice', subject: 'alice' })).toEqual({
      'x-user': 'alice',
      'x-who': 'https://as#alice (alice/alice)',
    });
  });

  it('without a principal, both are anonymous', () => {
    expect(principalEnv({ USER: '{sub}:{principal}' }, undefined)).toEqual({ USER: 'anonymous:anonymous' });
  });

  it('a subject cannot inject a header line or end a variable early: it is percent-encoded', () => {
    const evil = { id: 'iss#x', subject: 'x\r\nX-Admin: yes\u0000é' };
    expect(principalHeaders({ 'x-user': '{sub}' }, evil)).toEqual({ 'x-user': 'x%0D%0AX-Admin: yes%00%C3%A9' });
    expect(principalEnv({ USER: '{sub}' }, evil)).toEqual({ USER: 'x%0D%0AX-Admin: yes%00%C3%A9' });
  });

  it('look-alike subjects stay distinct, from each other and from every plain subject', () => {
    const subjects = ['alice', 'alice\u200b', 'al\u00adice', 'alice\u00a0', 'alice\u0000', 'alice%E2%80%8B', 'alice%', 'alice\ud800', 'alice\u{1F600}'];
    const seen = subjects.map((subject) => principalHeaders({ u: '{sub}' }, { id: `iss#${subject}`, subject }).u!);
    expect(new Set(seen).size).toBe(subjects.length);
    expect(seen[0]).toBe('alice');
    for (const value of seen) expect(value).toMatch(/^[\x20-\x7e]+$/);
    // Reversible: percent-decoding gives the subject back (a lone surrogate is written %uXXXX).
    for (const [i, value] of seen.entries()) if (i !== 7) expect(decodeURIComponent(value)).toBe(subjects[i]);
    expect(seen[7]).toBe('alice%uD800');
    expect(encodeIdentity('plain ASCII: ok! ~')).toBe('plain ASCII: ok! ~');
  });

  it('a subject is text, never template: placeholders and $ patterns in it stay as they are', () => {
    expect(principalHeaders({ u: '{sub}|{principal}' }, { id: 'iss#{sub}$&', subject: "{principal}$'" })).toEqual({ u: "{principal}$'|iss#{sub}$&" });
  });
});
