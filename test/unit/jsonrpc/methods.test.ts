import { describe, expect, it } from 'vitest';
import { isAudited, isCacheable, isRemovedAt, mayAsk, mcpNameField, methodFacts, namedBy, subjectOf } from '../../../src/jsonrpc/methods.ts';

describe('the method vocabulary', () => {
  it('names the tool, prompt or resource each method acts on, by its params field', () => {
    expect(subjectOf('tools/call')).toEqual({ field: 'name', kind: 'tool' });
    expect(subjectOf('prompts/get')).toEqual({ field: 'name', kind: 'prompt' });
    expect(subjectOf('resources/read')).toEqual({ field: 'uri', kind: 'uri' });
    expect(subjectOf('resources/subscribe')).toEqual({ field: 'uri', kind: 'uri' });
    expect(subjectOf('resources/unsubscribe')).toEqual({ field: 'uri', kind: 'uri' });
    for (const method of ['tools/list', 'completion/complete', 'initialize', 'x/unknown']) expect(subjectOf(method), method).toBeUndefined();
  });

  it('reads the named value only from the field the method names, and only a string', () => {
    expect(namedBy('tools/call', { name: 'echo', uri: 'u://x' })).toBe('echo');
    expect(namedBy('resources/read', { name: 'echo', uri: 'u://x' })).toBe('u://x');
    expect(namedBy('tools/call', { name: 3 })).toBeUndefined();
    expect(namedBy('tools/call', undefined)).toBeUndefined();
    // A method that names nothing has nothing named, whatever its params hold.
    expect(namedBy('tools/list', { name: 'echo', uri: 'u://x' })).toBeUndefined();
    expect(namedBy('x/custom', { uri: 'u://x' })).toBeUndefined();
  });

  it('mirrors in Mcp-Name only the subjects of methods that exist in 2026 (SEP-2243)', () => {
    expect(['tools/call', 'prompts/get', 'resources/read'].map(mcpNameField)).toEqual(['name', 'name', 'uri']);
    expect(mcpNameField('resources/subscribe')).toBeUndefined();
    expect(mcpNameField('tools/list')).toBeUndefined();
  });

  it('audits and lets ask exactly the three calls that use what they name', () => {
    const methods = ['tools/call', 'prompts/get', 'resources/read', 'resources/subscribe', 'tools/list', 'completion/complete', 'ping'];
    expect(methods.filter(isAudited)).toEqual(['tools/call', 'prompts/get', 'resources/read']);
    expect(methods.filter(mayAsk)).toEqual(['tools/call', 'prompts/get', 'resources/read']);
  });

  it('marks the lists and resources/read cacheable, and nothing that acts', () => {
    const cacheable = ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read'];
    for (const method of cacheable) expect(isCacheable(method), method).toBe(true);
    for (const method of ['tools/call', 'prompts/get', 'completion/complete', 'server/discover', 'x/unknown']) expect(isCacheable(method), method).toBe(false);
  });

  it('knows what 2026-07-28 removed, and that it still exists in every 2025 revision', () => {
    const removed = ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe'];
    for (const method of removed) {
      expect(isRemovedAt(method, '2026-07-28'), method).toBe(true);
      expect(isRemovedAt(method, '2025-11-25'), method).toBe(false);
      expect(methodFacts(method).removedIn).toBe('2026-07-28');
    }
    for (const method of ['tools/call', 'server/discover', 'subscriptions/listen', 'x/unknown']) expect(isRemovedAt(method, '2026-07-28'), method).toBe(false);
  });

  it('answers for names an object prototype has, as for any unknown method', () => {
    for (const method of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      expect(methodFacts(method)).toEqual({});
      expect(subjectOf(method)).toBeUndefined();
      expect(namedBy(method, { name: 'x', uri: 'y' })).toBeUndefined();
      expect([mayAsk(method), isCacheable(method), isAudited(method), isRemovedAt(method, '2026-07-28')]).toEqual([false, false, false, false]);
    }
  });

  it('cannot be changed by a caller', () => {
    const facts = methodFacts('tools/call') as { mayAsk?: boolean };
    expect(() => {
      facts.mayAsk = false;
    }).toThrow(TypeError);
    expect(() => {
      (subjectOf('tools/call') as { field: string }).field = 'uri';
    }).toThrow(TypeError);
    expect(mayAsk('tools/call')).toBe(true);
  });
});
