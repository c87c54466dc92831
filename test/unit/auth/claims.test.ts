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
    expect(pickClaims(payload, ['groups', 'role', 'https://example.com/roles', 'realm_access.roles', 'admin', 'missing']).claims).toEqual({
      groups: ['admins', 'users', '7'],
      role: ['editor'],
      'https://example.com/roles': ['ops'],
      'realm_access.roles': ['realm-admin'],
      admin: ['true'],
      missing: [],
    });
    expect(pickClaims(payload, [])).toEqual({ claims: {}, claimsCut: undefined });
  });

  it('is bounded: at most MAX_VALUES values, and values over MAX_VALUE_LENGTH are dropped, not cut', () => {
    const many = Array.from({ length: MAX_VALUES + 10 }, (_, i) => `g${i}`);
    expect(pickClaims({ groups: many }, ['groups']).claims.groups).toHaveLength(MAX_VALUES);
    expect(pickClaims({ groups: ['x'.repeat(MAX_VALUE_LENGTH + 1), 'ok'] }, ['groups']).claims.groups).toEqual(['ok']);
  });

  it('names each claim that lost values to the bounds, and only those', () => {
    const exactly = Array.from({ length: MAX_VALUES }, (_, i) => `g${i}`);
    expect(pickClaims({ groups: exactly, role: 'x'.repeat(MAX_VALUE_LENGTH) }, ['groups', 'role']).claimsCut).toBeUndefined();
    const picked = pickClaims({ groups: [...exactly, 'contractors'], role: ['x'.repeat(MAX_VALUE_LENGTH + 1)], tenant: 'acme' }, ['groups', 'role', 'tenant']);
    expect([...(picked.claimsCut ?? [])].sort()).toEqual(['groups', 'role']);
    expect(picked.claims.role).toEqual([]);
    // A value of no kind (an object) is no value, not a cut one.
    expect(pickClaims({ groups: [...exactly, { x: 1 }] }, ['groups']).claimsCut).toBeUndefined();
  });
});
