/** When a warm spare serves a session as a fresh child would (upstream/spares.ts `fits`). */
import { describe, expect, it } from 'vitest';
import { fits, sparesWanted } from '../../../src/upstream/spares.ts';
import { kindFor } from '../../../src/upstream/spare-fit.ts';
import { stdioTarget } from '../../support/gateway.ts';

const SPARE = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'switchboard', version: '1' } };

describe('fits', () => {
  it('takes a client that declares what the spare declared and asks for its version; clientInfo does not matter', () => {
    const answer = { protocolVersion: '2025-11-25' };
    expect(fits({ protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'other' } }, SPARE, answer)).toBe(true);
    expect(fits({ protocolVersion: '2025-11-25' }, SPARE, answer)).toBe(true);
  });

  it('refuses any declared capability: the server may act on it (roots, sampling, elicitation, experimental)', () => {
    for (const capabilities of [{ roots: { listChanged: true } }, { sampling: {} }, { elicitation: {} }, { experimental: {} }]) {
      expect(fits({ protocolVersion: '2025-11-25', capabilities }, SPARE, { protocolVersion: '2025-11-25' })).toBe(false);
    }
  });

  it('takes the version the server answered the spare with, refuses one neither asked nor answered', () => {
    const older = { protocolVersion: '2025-06-18' };
    expect(fits({ protocolVersion: '2025-06-18', capabilities: {} }, SPARE, older)).toBe(true);
    expect(fits({ protocolVersion: '2025-06-18', capabilities: {} }, SPARE, { protocolVersion: '2025-11-25' })).toBe(false);
    expect(fits({ protocolVersion: '2024-11-05', capabilities: {} }, SPARE, older)).toBe(false);
    expect(fits({ capabilities: {} }, SPARE, older)).toBe(false);
  });
});

describe('sparesWanted', () => {
  it('per-session stdio targets only, and none with principalEnv', () => {
    expect(sparesWanted(stdioTarget('t', { command: 'x', upstream: { mode: 'per-session', children: 1, spares: 2 } }))).toBe(2);
    expect(sparesWanted(stdioTarget('t', { command: 'x' }))).toBe(0);
    expect(sparesWanted(stdioTarget('t', { command: 'x', upstream: { mode: 'shared', children: 1, spares: 2 } }))).toBe(0);
    expect(sparesWanted(stdioTarget('t', { command: 'x', principalEnv: { U: '{sub}' }, upstream: { mode: 'per-session', children: 1, spares: 2 } }))).toBe(0);
  });
});

describe('kindFor', () => {
  it('an initialized spare follows a client that fits the gateway params; any other gets a spawned one', () => {
    expect(kindFor({ protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'host' } }, SPARE)).toBe('initialized');
    expect(kindFor({ protocolVersion: '2025-06-18', capabilities: {} }, SPARE)).toBe('spawned');
    expect(kindFor({ protocolVersion: '2025-11-25', capabilities: { roots: {} } }, SPARE)).toBe('spawned');
  });
});
