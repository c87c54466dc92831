/**
 * Step-up rules (router/step-up.ts): which scopes a routed call needs that the caller's token lacks.
 */
import { describe, expect, it } from 'vitest';
import type { RequiredScopesConfig } from '../../../src/config/types.ts';
import { compileStepUp } from '../../../src/router/step-up.ts';

const rules = (given: Partial<RequiredScopesConfig>): RequiredScopesConfig => ({ tools: {}, prompts: {}, resources: {}, ...given });
const held = (...scopes: string[]) => new Set(scopes);

const stepUp = compileStepUp(
  new Map([
    ['files', rules({ tools: { 'delete_*': ['files:write'], '*_all': ['files:admin', 'files:write'] }, prompts: { 'secret?': ['prompts:secret'] }, resources: { 'file:///private/*': ['files:read'] } })],
    ['other', rules({})],
  ]),
)!;

describe('compileStepUp', () => {
  it('is undefined without rules: nothing is judged per call', () => {
    expect(compileStepUp(undefined)).toBeUndefined();
    expect(compileStepUp(new Map())).toBeUndefined();
  });

  it('lists every scope a rule names, once (scopes_supported)', () => {
    expect([...stepUp.scopes].sort()).toEqual(['files:admin', 'files:read', 'files:write', 'prompts:secret']);
  });

  it('names only the missing scopes, in rule order, each once across matching globs', () => {
    expect(stepUp.missing('files', 'tools/call', { name: 'delete_file' }, held('mcp'))).toEqual(['files:write']);
    expect(stepUp.missing('files', 'tools/call', { name: 'delete_all' }, held('mcp'))).toEqual(['files:write', 'files:admin']);
    expect(stepUp.missing('files', 'tools/call', { name: 'delete_all' }, held('files:write'))).toEqual(['files:admin']);
    expect(stepUp.missing('files', 'tools/call', { name: 'delete_all' }, held('files:write', 'files:admin'))).toBeUndefined();
    expect(stepUp.missing('files', 'tools/call', { name: 'read_file' }, held())).toBeUndefined();
  });

  it('judges prompts by name and resources by URI; other methods and targets not at all', () => {
    expect(stepUp.missing('files', 'prompts/get', { name: 'secret1' }, held())).toEqual(['prompts:secret']);
    expect(stepUp.missing('files', 'prompts/get', { name: 'secret12' }, held())).toBeUndefined();
    expect(stepUp.missing('files', 'resources/read', { uri: 'file:///private/key.pem' }, held())).toEqual(['files:read']);
    expect(stepUp.missing('files', 'resources/read', { uri: 'file:///public/a' }, held())).toBeUndefined();
    expect(stepUp.missing('files', 'tools/list', { name: 'delete_file' }, held())).toBeUndefined();
    expect(stepUp.missing('other', 'tools/call', { name: 'delete_file' }, held())).toBeUndefined();
    expect(stepUp.missing('nobody', 'tools/call', { name: 'delete_file' }, held())).toBeUndefined();
  });

  it('fails closed for a caller without scopes (no principal)', () => {
    expect(stepUp.missing('files', 'tools/call', { name: 'delete_file' }, undefined)).toEqual(['files:write']);
  });

  it('catches look-alike spellings: case, full-width letters, padding', () => {
    for (const name of ['DELETE_FILE', 'Delete_File', '\uFF44elete_file', ' delete_file', 'delete_file\n']) {
      expect(stepUp.missing('files', 'tools/call', { name }, held('mcp')), JSON.stringify(name)).toEqual(['files:write']);
    }
  });

  it('a glob is literal but for * and ?: regex characters in names match only themselves', () => {
    const literal = compileStepUp(new Map([['t', rules({ tools: { 'a.b': ['s'] } })]]))!;
    expect(literal.missing('t', 'tools/call', { name: 'a.b' }, held())).toEqual(['s']);
    expect(literal.missing('t', 'tools/call', { name: 'axb' }, held())).toBeUndefined();
  });
});
