import { describe, expect, it } from 'vitest';
import { askingCapabilities } from '../../../../src/session/stateless/host-keys.ts';

describe('askingCapabilities: what keys a held session', () => {
  it('is the spec-defined abilities only, never the contents of the objects', () => {
    expect(askingCapabilities({})).toBe('---');
    expect(askingCapabilities({ sampling: { variant: 1 } })).toBe(askingCapabilities({ sampling: { other: 'x'.repeat(1_000) } }));
    expect(askingCapabilities({ sampling: {}, experimental: { a: {} } })).toBe('s--');
    expect(askingCapabilities({ sampling: { tools: {} } })).toBe('st--');
    expect(askingCapabilities({ sampling: { tools: {}, context: {} } })).toBe('stc--');
  });

  it('tells form from url elicitation (an empty object is form) and roots with list changes', () => {
    expect(askingCapabilities({ elicitation: {} })).toBe(askingCapabilities({ elicitation: { form: {} } }));
    expect(askingCapabilities({ elicitation: { url: {} } })).toBe('-eu-');
    expect(askingCapabilities({ elicitation: { form: {}, url: {} } })).toBe('-efu-');
    expect(askingCapabilities({ roots: {} })).toBe('--r');
    expect(askingCapabilities({ roots: { listChanged: true } })).toBe('--rl');
    expect(askingCapabilities({ roots: { listChanged: false } })).toBe('--r');
  });
});
