import { describe, expect, it } from 'vitest';
import { MAX_VALUE_LENGTH, MAX_VALUES, pickClaims } from '../../../src/auth/claims.ts';

describe('claims kept on a principal', () => {
  const payload = {
    sub: 'alice',
    groups: ['admins', 'users', 7, { nested: true }],
    role: 'editor',
    'https://example.com/roles': ['ops'],
    realm_access: { roles: ['realm-admin'] },
    admin: true,
  };

  it('keeps only the names asked for, as lists of strings, by name or by dotted path', () => {
    expect(pickClaims(payload, ['groups', 'role', 'https://example.com/roles', 'realm_access.roles', 'admin', 'missing'])).toEqual({
      groups: ['admins', 'users', '7'],
      role: ['editor'],
      'https://example.com/roles': ['ops'],
      'realm_access.roles': ['realm-admin'],
      admin: ['true'],
      missing: [],
    });
    expect(pickClaims(payload, [])).toEqual({});
  });

  it('is bounded: at most MAX_VALUES values, and values over MAX_VALUE_LENGTH are dropped, not cut', () => {
    const many = Array.from({ length: MAX_VALUES + 10 }, (_, i) => `g${i}`);
    expect(pickClaims({ groups: many }, ['groups']).groups).toHaveLength(MAX_VALUES);
    expect(pickClaims({ groups: ['x'.repeat(MAX_VALUE_LENGTH + 1), 'ok'] }, ['groups']).groups).toEqual(['ok']);
  });
});
