import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.ts';
import { aggregateOf, type GatewayConfig } from '../../../src/config/types.ts';
import { problemsOf } from '../../support/config-problems.ts';

const parse = (document: unknown): GatewayConfig => parseConfig(document, { env: {}, baseDir: '/srv' });

const problems = (document: unknown): string[] => problemsOf(() => parse(document));

describe('overrides', () => {
  it('are normalised per server', () => {
    const config = parse({
      mcpServers: { a: { command: 'x', overrides: { tools: { echo: { name: 'say', annotations: { readOnlyHint: 'true' } } }, serverInfo: { name: 'A' }, instructions: 'i' } } },
    });
    expect(aggregateOf(config).exposure.get('a')?.overrides).toEqual({
      tools: { echo: { name: 'say', annotations: { readOnlyHint: true } } },
      prompts: {},
      serverName: 'A',
      instructions: 'i',
    });
  });

  it('refuse unknown keys, bad names and globs, with reasons', () => {
    expect(problems({ mcpServers: { a: { command: 'x', overrides: { tools: { 'e*': {} } } } } }).join('\n')).toMatch(/"\*" and "\?" are not allowed/);
    const issues = problems({
      mcpServers: { a: { command: 'x', overrides: { tools: { e: { name: 'has space', color: 'red', annotations: { dangerous: true } } } } } },
    });
    expect(issues.join('\n')).toMatch(/1-64 letters, digits/);
    expect(issues.join('\n')).toMatch(/color/);
    expect(issues.join('\n')).toMatch(/dangerous/);
  });

  it('refuse two tools under one name: two renames, or a rename onto a name kept', () => {
    expect(problems({ mcpServers: { a: { command: 'x', overrides: { tools: { one: { name: 'same' }, two: { name: 'same' } } } } } }).join('\n')).toMatch(/"same" would name two tools/);
    expect(problems({ mcpServers: { a: { command: 'x', overrides: { tools: { one: { name: 'two' }, two: { description: 'kept' } } } } } }).join('\n')).toMatch(/"two" keeps that name/);
    // A swap is fine.
    expect(() => parse({ mcpServers: { a: { command: 'x', overrides: { tools: { one: { name: 'two' }, two: { name: 'one' } } } } } })).not.toThrow();
  });
});

describe('virtual servers', () => {
  const servers = { a: { command: 'x', overrides: { tools: { echo: { name: 'say' } } } }, b: { command: 'y' } };

  it('become, per picked server, its picks with their names', () => {
    const config = parse({
      mcpServers: servers,
      gateway: { virtualServers: { kit: { tools: [{ server: 'b', tool: 'add', as: 'sum' }, { server: 'a', tool: 'echo' }], resources: [{ server: 'a', uri: 'x://*' }] } } },
    });
    const kit = aggregateOf(config).virtuals?.get('kit');
    expect([...(kit?.keys() ?? [])]).toEqual(['b', 'a']);
    expect(kit?.get('a')?.prefix).toBe('');
    expect(kit?.get('a')?.picks).toEqual({ tools: ['echo'], prompts: [], resources: ['x://*'] });
    expect(kit?.get('a')?.overrides?.tools).toEqual({ echo: { name: 'say' } });
    expect(kit?.get('b')?.overrides?.tools).toEqual({ add: { name: 'sum' } });
  });

  it('refuse an unknown server, a name given twice, and an empty pick-list', () => {
    const issues = problems({
      mcpServers: servers,
      gateway: {
        virtualServers: {
          kit: { tools: [{ server: 'nope', tool: 't' }, { server: 'a', tool: 'echo' }, { server: 'b', tool: 'x', as: 'say' }] },
          empty: {},
        },
      },
    }).join('\n');
    expect(issues).toMatch(/gateway\.virtualServers\.kit\.tools\[0\]\.server: unknown server "nope"/);
    expect(issues).toMatch(/"say" is already the name of tools pick 1/);
    expect(issues).toMatch(/needs at least one tool, prompt or resource/);
  });
});
