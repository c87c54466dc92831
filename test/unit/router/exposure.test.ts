import { describe, expect, it } from 'vitest';
import { hiddenNamed, refuseHidden } from '../../../src/router/exposure.ts';
import { createNameFilter } from '../../../src/router/glob.ts';
import type { Exposure } from '../../../src/router/list-merge.ts';

const exposure: Exposure = {
  prefix: '',
  tools: createNameFilter([], ['secret*']),
  prompts: createNameFilter([], ['hidden']),
  resources: createNameFilter([], ['file:///private/*']),
};
const req = (method: string, params: Record<string, unknown>) => ({ jsonrpc: '2.0' as const, id: 1, method, params });

describe('refusing what a filter hides, by what each method names', () => {
  it('refuses a hidden tool, prompt or resource the way an unknown one is refused, with no gateway code', () => {
    expect(hiddenNamed(req('tools/call', { name: 'secret_admin' }), exposure)).toEqual({ code: -32602, message: 'Unknown tool: secret_admin' });
    expect(hiddenNamed(req('prompts/get', { name: 'hidden' }), exposure)).toEqual({ code: -32602, message: 'Unknown prompt: hidden' });
    for (const method of ['resources/read', 'resources/subscribe', 'resources/unsubscribe']) {
      expect(hiddenNamed(req(method, { uri: 'file:///private/a' }), exposure), method).toEqual({ code: -32602, message: 'Resource not found: file:///private/a' });
    }
  });

  it('refuses a completion that refers to a hidden prompt or resource', () => {
    expect(hiddenNamed(req('completion/complete', { ref: { type: 'ref/prompt', name: 'hidden' } }), exposure)?.message).toBe('Unknown prompt: hidden');
    expect(hiddenNamed(req('completion/complete', { ref: { type: 'ref/resource', uri: 'file:///private/b' } }), exposure)?.message).toBe('Resource not found: file:///private/b');
  });

  it('lets through what is visible, and never reads a field the method does not name', () => {
    expect(hiddenNamed(req('tools/call', { name: 'echo', uri: 'file:///private/a' }), exposure)).toBeUndefined();
    expect(hiddenNamed(req('resources/read', { uri: 'file:///public/a', name: 'secret_admin' }), exposure)).toBeUndefined();
    expect(hiddenNamed(req('tools/list', { name: 'secret_admin' }), exposure)).toBeUndefined();
    expect(hiddenNamed(req('x/custom', { uri: 'file:///private/a' }), exposure)).toBeUndefined();
    expect(hiddenNamed(req('completion/complete', { ref: { type: 'ref/prompt', uri: 'file:///private/a' } }), exposure)).toBeUndefined();
    expect(() => refuseHidden(req('tools/call', { name: 7 }), exposure)).not.toThrow();
  });
});
