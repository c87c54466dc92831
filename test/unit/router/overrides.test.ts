import { describe, expect, it } from 'vitest';
import { createNameFilter } from '../../../src/router/glob.ts';
import { createNameTable } from '../../../src/router/name-table.ts';
import { filterList, refuseHidden } from '../../../src/router/exposure.ts';
import { LIST_KINDS, mergePage, type Exposure } from '../../../src/router/list-merge.ts';
import { clientName, compileOverrides, overrideInitialize, passesBoth, serverName } from '../../../src/router/overrides.ts';
import { PASS_ALL } from '../../../src/router/glob.ts';
import type { JsonRpcRequest } from '../../../src/jsonrpc/types.ts';

const overrides = compileOverrides({
  tools: { echo: { name: 'say', description: 'd', annotations: { readOnlyHint: true } }, add: { name: 'sum' }, sum: { name: 'add' }, keep: { title: 'T' } },
  prompts: { greet: { name: 'hello' } },
});

describe('compileOverrides', () => {
  it('is undefined when nothing is set, so the hot path does no work', () => {
    expect(compileOverrides(undefined)).toBeUndefined();
    expect(compileOverrides({ tools: {}, prompts: {} })).toBeUndefined();
    expect(compileOverrides({ tools: {}, prompts: {}, instructions: 'x' })).toBeDefined();
  });
});

describe('names', () => {
  it('maps the server\'s name to the client\'s and back', () => {
    expect(clientName(overrides, 'tools', 'echo')).toBe('say');
    expect(serverName(overrides, 'tools', 'say')).toBe('echo');
    expect(clientName(overrides, 'tools', 'keep')).toBe('keep');
    expect(serverName(overrides, 'tools', 'keep')).toBe('keep');
    expect(serverName(overrides, 'prompts', 'hello')).toBe('greet');
  });

  it('refuses the old name of a renamed item', () => {
    expect(serverName(overrides, 'tools', 'echo')).toBeUndefined();
    expect(serverName(overrides, 'prompts', 'greet')).toBeUndefined();
  });

  it('withholds a server item listed under a name an override gave to another (the rename wins)', () => {
    expect(clientName(overrides, 'tools', 'say')).toBeUndefined();
  });

  it('lets two items swap names', () => {
    expect(clientName(overrides, 'tools', 'add')).toBe('sum');
    expect(clientName(overrides, 'tools', 'sum')).toBe('add');
    expect(serverName(overrides, 'tools', 'add')).toBe('sum');
    expect(serverName(overrides, 'tools', 'sum')).toBe('add');
  });

  it('checks a filter under both names', () => {
    const denyServer = createNameFilter([], ['echo']);
    const denyClient = createNameFilter([], ['say']);
    expect(passesBoth(denyServer, 'echo', 'say')).toBe(false);
    expect(passesBoth(denyClient, 'echo', 'say')).toBe(false);
    expect(passesBoth(PASS_ALL, 'echo', 'say')).toBe(true);
  });
});

const exposure: Exposure = { prefix: 'a', tools: PASS_ALL, prompts: PASS_ALL, resources: PASS_ALL, overrides };

describe('lists', () => {
  it('rewrites items, merges annotations, keeps unknown fields, and drops a shadowed one (aggregate)', () => {
    const tables = { tools: createNameTable('__'), prompts: createNameTable('__') };
    const value = {
      tools: [
        { name: 'echo', description: 'old', annotations: { destructiveHint: false, readOnlyHint: false }, x: 1 },
        { name: 'say', description: 'native say' },
        { name: 'keep', description: 'kept' },
      ],
    };
    const page = mergePage(LIST_KINDS['tools/list'], [{ target: 'a', ok: true, value }], () => exposure, tables);
    expect(page.items).toEqual([
      { name: 'a__say', description: 'd', annotations: { destructiveHint: false, readOnlyHint: true }, x: 1 },
      { name: 'a__keep', description: 'kept', title: 'T' },
    ]);
    expect(tables.tools.resolve('a__say')).toEqual({ target: 'a', name: 'say' });
    expect(page.collisions).toEqual([{ exposed: 'say', kept: { target: 'a', name: 'echo' }, dropped: { target: 'a', name: 'say' } }]);
    expect(tables.tools.resolve('a__echo')).toBeUndefined();
  });

  it('rewrites a pass-through list answer the same way', () => {
    const result = { tools: [{ name: 'echo' }, { name: 'say' }, { name: 'other' }] };
    expect(filterList('tools/list', result, { ...exposure, prefix: '' })).toBe(true);
    expect(result.tools).toEqual([{ name: 'say', description: 'd', annotations: { readOnlyHint: true } }, { name: 'other' }]);
  });
});

describe('requests on a pass-through', () => {
  const request = (method: string, params: Record<string, unknown>): JsonRpcRequest => ({ jsonrpc: '2.0', id: 1, method, params });

  it('restores the server\'s name of a call, a prompt and a completion ref', () => {
    const call = request('tools/call', { name: 'say' });
    refuseHidden(call, exposure);
    expect(call.params?.name).toBe('echo');
    const prompt = request('prompts/get', { name: 'hello' });
    refuseHidden(prompt, exposure);
    expect(prompt.params?.name).toBe('greet');
    const complete = request('completion/complete', { ref: { type: 'ref/prompt', name: 'hello' } });
    refuseHidden(complete, exposure);
    expect(complete.params?.ref).toEqual({ type: 'ref/prompt', name: 'greet' });
  });

  it('refuses the old name like an unknown one', () => {
    expect(() => refuseHidden(request('tools/call', { name: 'echo' }), exposure)).toThrow('Unknown tool: echo');
    expect(() => refuseHidden(request('prompts/get', { name: 'greet' }), exposure)).toThrow('Unknown prompt: greet');
  });
});

describe('overrideInitialize', () => {
  it('sets serverInfo.name (keeping the rest) and instructions', () => {
    const result: Record<string, unknown> = { serverInfo: { name: 'x', version: '1' }, instructions: 'old' };
    overrideInitialize(compileOverrides({ tools: {}, prompts: {}, serverName: 'y', instructions: 'new' }), result);
    expect(result).toEqual({ serverInfo: { name: 'y', version: '1' }, instructions: 'new' });
  });
});
