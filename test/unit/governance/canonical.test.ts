import { describe, expect, it } from 'vitest';
import { canonicalJson, changedFields, pinHash, pinnedView } from '../../../src/governance/canonical.ts';

const tool = {
  name: 'echo',
  description: 'Echoes.',
  inputSchema: { type: 'object', properties: { text: { type: 'string', description: 'What' } }, required: ['text'] },
  annotations: { readOnlyHint: true, destructiveHint: false },
};

describe('canonical form of a pinned definition', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
    expect(canonicalJson({ a: undefined, b: 'x' })).toBe('{"b":"x"}');
  });

  it('gives one hash for the same definition in another key order', () => {
    const reordered = {
      annotations: { destructiveHint: false, readOnlyHint: true },
      inputSchema: { required: ['text'], properties: { text: { description: 'What', type: 'string' } }, type: 'object' },
      description: 'Echoes.',
      name: 'echo',
    };
    expect(pinHash('tool', reordered)).toBe(pinHash('tool', tool));
  });

  it('covers name, title, description, schemas and annotations, not _meta or icons', () => {
    const base = pinHash('tool', tool);
    expect(pinHash('tool', { ...tool, _meta: { x: 1 }, icons: [{ src: 'a.png' }] })).toBe(base);
    // A hint's type is part of it: "true" and 1 are other definitions than true (danger.ts judges them).
    const stringy = [{ annotations: { readOnlyHint: 'true', destructiveHint: false } }, { annotations: { readOnlyHint: 1, destructiveHint: false } }, { annotations: { readOnlyHint: true, destructiveHint: 0 } }];
    for (const change of [{ description: 'Echoes!' }, { title: 'Echo' }, { outputSchema: { type: 'object' } }, { annotations: { readOnlyHint: false } }, { inputSchema: { type: 'object' } }, ...stringy]) {
      expect(pinHash('tool', { ...tool, ...change }), JSON.stringify(change)).not.toBe(base);
    }
    expect(pinHash('prompt', { name: 'p', arguments: [{ name: 'a' }] })).not.toBe(pinHash('prompt', { name: 'p', arguments: [{ name: 'a', required: true }] }));
    expect(pinnedView('resourceTemplate', { uriTemplate: 'x://{id}', name: 'n', annotations: { a: 1 } })).toEqual({ uriTemplate: 'x://{id}', name: 'n' });
  });

  it('names the fields that changed', () => {
    expect(changedFields('tool', pinnedView('tool', tool), pinnedView('tool', { ...tool, description: 'New', annotations: { ...tool.annotations } }))).toEqual(['description']);
    expect(changedFields('tool', {}, pinnedView('tool', tool))).toEqual(['name', 'description', 'inputSchema', 'annotations']);
  });
});
