import { describe, expect, it } from 'vitest';
import { principalEnv, principalHeaders } from '../../../src/upstream/identity.ts';

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

  it('a subject cannot inject a header line or end a variable early', () => {
    const evil = { id: 'iss#x', subject: 'x\r\nX-Admin: yes\u0000é' };
    expect(principalHeaders({ 'x-user': '{sub}' }, evil)).toEqual({ 'x-user': 'xX-Admin: yes' });
    expect(principalEnv({ USER: '{sub}' }, evil)).toEqual({ USER: 'x\r\nX-Admin: yesé' });
  });
});
