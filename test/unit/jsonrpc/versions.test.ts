import { describe, expect, it } from 'vitest';
import {
  ALL_PROTOCOL_VERSIONS,
  eraOf,
  isModernVersion,
  isServedModernVersion,
  isSupportedVersion,
  LATEST_PROTOCOL_VERSION,
  MODERN_PROTOCOL_VERSION,
  MODERN_PROTOCOL_VERSIONS,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '../../../src/jsonrpc/versions.ts';

describe('protocol revisions', () => {
  it('lists both eras, newest first, for a discover answer', () => {
    expect(ALL_PROTOCOL_VERSIONS).toEqual(['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);
    expect(LATEST_PROTOCOL_VERSION).toBe('2025-11-25');
    expect(MODERN_PROTOCOL_VERSIONS).toEqual([MODERN_PROTOCOL_VERSION]);
    expect(Object.isFrozen(ALL_PROTOCOL_VERSIONS) && Object.isFrozen(MODERN_PROTOCOL_VERSIONS)).toBe(true);
  });

  it('tells the 2025 revisions it negotiates from the modern ones it serves', () => {
    for (const v of SUPPORTED_PROTOCOL_VERSIONS) expect([isSupportedVersion(v), isServedModernVersion(v), isModernVersion(v)], v).toEqual([true, false, false]);
    expect([isSupportedVersion('2026-07-28'), isServedModernVersion('2026-07-28'), isModernVersion('2026-07-28')]).toEqual([false, true, true]);
    // A later revision is modern (a 2026 request, refused -32022), but not one served.
    expect([isServedModernVersion('2027-01-01'), isModernVersion('2027-01-01')]).toEqual([false, true]);
    for (const v of [undefined, 7, '', '2025-01-01', '2026-07-28 ']) {
      expect(isSupportedVersion(v), String(v)).toBe(false);
      expect(isServedModernVersion(v), String(v)).toBe(false);
    }
  });

  it('labels the era of a revision the same for metrics and traces', () => {
    expect([undefined, '2024-11-05', '2025-11-25', '2026-01-01', '2026-07-28', '2027-01-01'].map(eraOf)).toEqual(['2025', '2025', '2025', '2025', '2026', '2026']);
  });
});
