/**
 * The endpoint table's lookups across reloads (no sessions started: the integration suite
 * test/integration/reload-paths.test.ts drives real ones).
 */
import { describe, expect, it } from 'vitest';
import { createEndpointTable } from '../../../src/session/endpoint-table.ts';
import { buildAggregateConfig, colliderServer } from '../../support/aggregate.ts';

const config = (targets: string[], groups: Record<string, string[]> = {}) =>
  buildAggregateConfig({ targets: Object.fromEntries(targets.map((name) => [name, colliderServer()])), groups });

describe('endpoint table', () => {
  it('knows configured servers and groups, keeps removed ones closed, and forgets nothing it never had', () => {
    const table = createEndpointTable(config(['a', 'b'], { g: ['a'] }));
    expect(table.server('a')).toMatchObject({ endpoint: 'target:a', open: true });
    expect(table.group('g')).toMatchObject({ endpoint: 'group:g', open: true });
    expect(table.server('c')).toBeUndefined();
    expect(table.group('h')).toBeUndefined();

    table.update(config(['a', 'c'], { h: ['c'] }));
    expect(table.server('c')).toMatchObject({ endpoint: 'target:c', open: true });
    expect(table.group('h')).toMatchObject({ endpoint: 'group:h', open: true });
    // Removed: still found (its live sessions keep their path), closed to new sessions.
    expect(table.server('b')).toMatchObject({ endpoint: 'target:b', open: false });
    expect(table.group('g')).toMatchObject({ endpoint: 'group:g', open: false });
    expect(() => table.server('b')?.factory({} as never)).toThrow('server "b" was removed');
    expect(table.server('nope')).toBeUndefined();

    // Added back: open again under the same key.
    table.update(config(['a', 'b']));
    expect(table.server('b')).toMatchObject({ endpoint: 'target:b', open: true });
  });

  it('points the root at the lone server or at the aggregate, following the config', () => {
    const table = createEndpointTable(config(['a']));
    expect(table.root()?.endpoint).toBe('target:a');
    table.update(config(['a', 'b']));
    expect(table.root()?.endpoint).toBe('aggregate:*');
    table.update(config(['b']));
    expect(table.root()?.endpoint).toBe('target:b');
    // One entry per generation: lookups between reloads allocate nothing.
    expect(table.root()).toBe(table.root());
    expect(table.server('b')).toBe(table.server('b'));
  });

  it("grantKey: a server's own path changes with every config, the aggregate only with the policy; forwardsCredential follows the targets", () => {
    const rules = (deny: string[]) => [
      { effect: 'allow' as const, principals: ['*'], scopes: [], claims: {}, servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'] },
      { effect: 'deny' as const, principals: ['*'], scopes: ['x'], claims: {}, servers: ['*'], tools: deny, prompts: [], resources: [] },
    ];
    const withPolicy = (deny: string[]) => ({ ...config(['a', 'b']), policy: { rules: rules(deny) } });
    const table = createEndpointTable(withPolicy(['echo']));
    const alice = { id: 'alice', scopes: new Set<string>() };
    const wide = { id: 'alice', scopes: new Set(['x']) };
    const server = table.server('a')!.grantKey(alice);
    const aggregate = table.root()!.grantKey(alice);
    expect(table.server('a')!.grantKey(wide)).not.toBe(server);
    expect(table.root()!.grantKey(wide)).not.toBe(aggregate);
    expect(table.root()!.forwardsCredential).toBe(false);

    table.update(withPolicy(['echo']));
    expect(table.server('a')!.grantKey(alice)).not.toBe(server);
    expect(table.root()!.grantKey(alice)).toBe(aggregate);
    table.update(withPolicy(['other']));
    expect(table.root()!.grantKey(alice)).not.toBe(aggregate);

    const remote = { type: 'http' as const, name: 'r', url: 'http://127.0.0.1:1/mcp', headers: {}, forwardAuthorization: true, principalHeaders: {}, tokenExchange: undefined, maxConnections: 0, timeouts: { requestMs: 1_000, resetOnProgress: true, maxTotalMs: 0 }, restart: { onExit: 'end' as const, maxRestarts: 0, initialBackoffMs: 100, maxBackoffMs: 100 }, maxMessageBytes: 1_024 };
    const forwarding = buildAggregateConfig({ targets: { a: colliderServer(), r: { target: remote } } });
    table.update(forwarding);
    expect(table.server('r')!.forwardsCredential).toBe(true);
    expect(table.server('a')!.forwardsCredential).toBe(false);
    expect(table.root()!.forwardsCredential).toBe(true);
  });
});
