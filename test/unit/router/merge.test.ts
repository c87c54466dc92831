import { describe, expect, it } from 'vitest';
import { combineInstructions, mergeCapabilities } from '../../../src/router/capabilities.ts';
import { fanOut } from '../../../src/router/fan-out.ts';
import { createNameFilter, PASS_ALL } from '../../../src/router/glob.ts';
import { LIST_KINDS, mergePage, type Exposure } from '../../../src/router/list-merge.ts';
import { createNameTable } from '../../../src/router/name-table.ts';
import { encodeResultUris } from '../../../src/router/result-uris.ts';

const exposure = (prefix: string, tools = PASS_ALL): Exposure => ({ prefix, tools, prompts: PASS_ALL, resources: PASS_ALL });
const tables = () => ({ tools: createNameTable('__'), prompts: createNameTable('__') });

describe('fanOut', () => {
  it('returns outcomes in the order of the targets, whatever order they settle in, and times out the slow one', async () => {
    const delays: Record<string, number> = { a: 30, b: 0, c: 10_000 };
    const outcomes = await fanOut(
      ['a', 'b', 'c', 'd'],
      (t) =>
        t === 'd'
          ? Promise.reject(new Error('boom'))
          : new Promise<string>((resolve) => setTimeout(() => resolve(t.toUpperCase()), delays[t])),
      200,
    );
    expect(outcomes).toEqual([
      { target: 'a', ok: true, value: 'A' },
      { target: 'b', ok: true, value: 'B' },
      { target: 'c', ok: false, reason: 'no answer within 200 ms' },
      { target: 'd', ok: false, reason: 'boom' },
    ]);
  });
});

describe('mergePage', () => {
  it('renames tools in config order, keeps their other fields, drops filtered ones, keeps cursors and failures', () => {
    const page = mergePage(
      LIST_KINDS['tools/list'],
      [
        { target: 'one', ok: true, value: { tools: [{ name: 'echo', description: 'd', inputSchema: {} }], nextCursor: 'c1' } },
        { target: 'two', ok: false, reason: 'down' },
        { target: 'three', ok: true, value: { tools: [{ name: 'echo' }, { name: 'secret_x' }, 'junk'] } },
      ],
      (t) => (t === 'three' ? exposure('3', createNameFilter([], ['secret_*'])) : exposure(t)),
      tables(),
    );
    expect(page.items).toEqual([{ name: 'one__echo', description: 'd', inputSchema: {} }, { name: '3__echo' }]);
    expect(page.next).toEqual({ one: 'c1' });
    expect(page.failed).toEqual([{ target: 'two', reason: 'down' }]);
  });

  it('encodes resource URIs and template URIs with the target name, whatever its prefix', () => {
    const t = tables();
    const resources = mergePage(LIST_KINDS['resources/list'], [{ target: 'fs', ok: true, value: { resources: [{ uri: 'file:///a' }] } }], () => exposure(''), t);
    expect(resources.items).toEqual([{ uri: 'fs+file:///a' }]);
    const templates = mergePage(
      LIST_KINDS['resources/templates/list'],
      [{ target: 'fs', ok: true, value: { resourceTemplates: [{ uriTemplate: 'file:///{path}' }] } }],
      () => exposure('x'),
      t,
    );
    expect(templates.items).toEqual([{ uriTemplate: 'fs+file:///{path}' }]);
  });

  it('reports bare-name collisions naming both targets', () => {
    const page = mergePage(
      LIST_KINDS['tools/list'],
      [
        { target: 'one', ok: true, value: { tools: [{ name: 'echo' }] } },
        { target: 'two', ok: true, value: { tools: [{ name: 'echo' }, { name: 'only-two' }] } },
      ],
      () => exposure(''),
      tables(),
    );
    expect(page.items.map((i) => i.name)).toEqual(['echo', 'only-two']);
    expect(page.collisions).toEqual([{ exposed: 'echo', kept: { target: 'one', name: 'echo' }, dropped: { target: 'two', name: 'echo' } }]);
  });
});

describe('capabilities and instructions', () => {
  it('advertises a capability when at least one target has it, with listChanged always on', () => {
    expect(mergeCapabilities([{ tools: {} }, { resources: { subscribe: false } }])).toEqual({
      tools: { listChanged: true },
      resources: { listChanged: true },
    });
    expect(mergeCapabilities([{ resources: {} }, { resources: { subscribe: true }, logging: {}, completions: {}, prompts: {} }])).toEqual({
      resources: { subscribe: true, listChanged: true },
      logging: {},
      completions: {},
      prompts: { listChanged: true },
    });
    expect(mergeCapabilities([{}])).toEqual({});
  });

  it('combines instructions under the target names, skipping empty ones', () => {
    expect(combineInstructions([{ target: 'a', instructions: ' use a ' }, { target: 'b', instructions: undefined }, { target: 'c', instructions: 'use c' }])).toBe(
      '## a\n\nuse a\n\n## c\n\nuse c',
    );
    expect(combineInstructions([{ target: 'a', instructions: '' }])).toBeUndefined();
  });
});

describe('URIs inside answers', () => {
  it('encodes resources/read contents, resource links and embedded resources; leaves text alone', () => {
    const read = { contents: [{ uri: 'file:///a', text: 'x' }] };
    encodeResultUris('resources/read', 'fs', read);
    expect(read.contents[0]?.uri).toBe('fs+file:///a');
    const call = { content: [{ type: 'text', text: 'file:///a' }, { type: 'resource_link', uri: 'file:///b' }, { type: 'resource', resource: { uri: 'file:///c' } }] };
    encodeResultUris('tools/call', 'fs', call);
    expect(call.content).toEqual([
      { type: 'text', text: 'file:///a' },
      { type: 'resource_link', uri: 'fs+file:///b' },
      { type: 'resource', resource: { uri: 'fs+file:///c' } },
    ]);
    const prompt = { messages: [{ role: 'user', content: { type: 'resource', resource: { uri: 'file:///d' } } }] };
    encodeResultUris('prompts/get', 'fs', prompt);
    expect(prompt.messages[0]?.content.resource.uri).toBe('fs+file:///d');
  });
});
