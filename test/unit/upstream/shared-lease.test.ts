import { describe, expect, it } from 'vitest';
import { negotiate } from '../../../src/upstream/shared-lease.ts';

const known = new Set(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']);

describe('negotiate (shared mode: the version a session gets)', () => {
  it('gives a session its own version when the child speaks it or a newer one', () => {
    expect(negotiate('2025-03-26', '2025-11-25', known)).toBe('2025-03-26');
    expect(negotiate('2025-06-18', '2025-06-18', known)).toBe('2025-06-18');
  });

  it("gives the child's version when the session asks for a newer one, an unknown one or none", () => {
    expect(negotiate('2025-11-25', '2025-03-26', known)).toBe('2025-03-26');
    expect(negotiate('2099-01-01', '2025-11-25', known)).toBe('2025-11-25');
    expect(negotiate(undefined, '2025-06-18', known)).toBe('2025-06-18');
    expect(negotiate(20250326, '2025-06-18', known)).toBe('2025-06-18');
  });
});
