import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.ts';
import { aggregateOf, type GatewayConfig } from '../../../src/config/types.ts';
import { problemsOf } from '../../support/config-problems.ts';

function parse(document: unknown): GatewayConfig {
  return parseConfig(document, { env: {}, baseDir: '/srv' });
}

const problems = (document: unknown): string[] => problemsOf(() => parse(document));

describe('aggregate settings', () => {
  it('defaults: separator "__", prefix = server name, no filters, lazy, no groups', () => {
    const config = parse({ mcpServers: { a: { command: 'x' }, b: { command: 'y' } } });
    const aggregate = aggregateOf(config);
    expect(aggregate.separator).toBe('__');
    expect(aggregate.listTimeoutMs).toBe(10_000);
    expect(aggregate.exposure.get('a')).toEqual({
      prefix: 'a',
      eager: false,
      tools: { allow: [], deny: [] },
      prompts: { allow: [], deny: [] },
      resources: { allow: [], deny: [] },
    });
    expect(aggregate.groups.size).toBe(0);
  });

  it('maps prefixes, filters, eager (per server over the gateway default) and groups', () => {
    const config = parse({
      mcpServers: {
        a: { command: 'x', prefix: '', eager: false, tools: { allow: ['read_*'], deny: ['read_secret'] } },
        b: { command: 'y', prefix: 'bee', resources: { deny: ['file:///*'] } },
        c: { command: 'z', disabled: true },
      },
      gateway: { aggregate: { separator: '-', eager: true, listTimeoutMs: 500 }, groups: { dev: { servers: ['b', 'c', 'a'] } } },
    });
    const aggregate = aggregateOf(config);
    expect(aggregate.separator).toBe('-');
    expect(aggregate.listTimeoutMs).toBe(500);
    expect(aggregate.exposure.get('a')).toMatchObject({ prefix: '', eager: false, tools: { allow: ['read_*'], deny: ['read_secret'] } });
    expect(aggregate.exposure.get('b')).toMatchObject({ prefix: 'bee', eager: true, resources: { allow: [], deny: ['file:///*'] } });
    // The disabled server is left out of the group; order is the group's.
    expect(aggregate.groups.get('dev')).toEqual(['b', 'a']);
    expect(Object.isFrozen(aggregate.exposure.get('a'))).toBe(true);
  });

  it('rejects a group naming an unknown server, and two servers sharing a prefix (naming both)', () => {
    expect(
      problems({
        mcpServers: { a: { command: 'x', prefix: 'p' }, b: { command: 'y', prefix: 'p' }, c: { command: 'z', prefix: 'a' } },
        gateway: { groups: { dev: { servers: ['a', 'nope'] } } },
      }),
    ).toEqual([
      'gateway.groups.dev.servers[1]: unknown server "nope"',
      'mcpServers.b.prefix: servers "a" and "b" would both expose their names under the prefix "p"',
    ]);
    // A prefix equal to another server's name clashes with that server's default prefix.
    expect(problems({ mcpServers: { a: { command: 'x' }, b: { command: 'y', prefix: 'a' } } })).toEqual([
      'mcpServers.b.prefix: servers "a" and "b" would both expose their names under the prefix "a"',
    ]);
  });

  it('allows several bare ("") prefixes', () => {
    expect(() => parse({ mcpServers: { a: { command: 'x', prefix: '' }, b: { command: 'y', prefix: '' } } })).not.toThrow();
  });

  it('rejects bad separators, prefixes, group names and filter shapes', () => {
    const lines = problems({
      mcpServers: { a: { command: 'x', prefix: 'bad prefix', tools: { allow: 'x', other: [] } } },
      gateway: { aggregate: { separator: '.' }, groups: { 'bad/name': { servers: ['a'] }, empty: { servers: [] } } },
    });
    expect(lines.some((l) => l.startsWith('mcpServers.a.prefix: invalid prefix'))).toBe(true);
    expect(lines.some((l) => l.startsWith('mcpServers.a.tools.allow: expected a list of glob patterns'))).toBe(true);
    expect(lines.some((l) => l.startsWith('mcpServers.a.tools.other: unknown key'))).toBe(true);
    expect(lines.some((l) => l.startsWith('gateway.aggregate.separator: expected 1-8 letters'))).toBe(true);
    expect(lines.some((l) => l.includes('invalid group name'))).toBe(true);
    expect(lines.some((l) => l.startsWith('gateway.groups.empty.servers: a group needs at least one server'))).toBe(true);
  });
});

describe('extension and discovery settings', () => {
  it('bare names default to "unambiguous"; discovery is kept per endpoint key only where it searches', () => {
    const config = parse({
      mcpServers: { a: { command: 'x' }, b: { command: 'y' } },
      gateway: {
        aggregate: { discovery: { mode: 'search', alwaysVisible: ['a__*'] } },
        groups: { g: { servers: ['a'], discovery: { mode: 'search', maxResults: 3 } }, h: { servers: ['b'], discovery: { mode: 'off' } } },
        virtualServers: { v: { tools: [{ server: 'a', tool: 't' }], discovery: { mode: 'search' } } },
      },
    });
    const aggregate = aggregateOf(config);
    expect(aggregate.bareNames).toBe('unambiguous');
    expect([...(aggregate.discovery ?? new Map())]).toEqual([
      ['aggregate:*', { alwaysVisible: ['a__*'], maxResults: 8 }],
      ['group:g', { alwaysVisible: [], maxResults: 3 }],
      ['virtual:v', { alwaysVisible: [], maxResults: 8 }],
    ]);
  });

  it('refuses a bad mode, a bad bareNames and a result cap out of range', () => {
    expect(problems({ mcpServers: { a: { command: 'x' } }, gateway: { aggregate: { discovery: { mode: 'semantic' } } } }).join('\n')).toContain('expected "off" or "search"');
    expect(problems({ mcpServers: { a: { command: 'x' } }, gateway: { aggregate: { bareNames: 'always' } } }).join('\n')).toContain('expected "unambiguous" or "off"');
    expect(problems({ mcpServers: { a: { command: 'x' } }, gateway: { aggregate: { discovery: { mode: 'search', maxResults: 500 } } } })).not.toEqual([]);
  });
});
