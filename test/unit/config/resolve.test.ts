import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointUrls } from '../../../src/config/endpoints.ts';
import { parseConfig } from '../../../src/config/load.ts';
import { withOverrides } from '../../../src/config/normalise.ts';
import { resolveConfig } from '../../../src/config/resolve.ts';
import type { StdioTargetConfig, TargetConfig } from '../../../src/config/types.ts';

describe('resolveConfig', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-resolve-'));
    await writeFile(
      join(dir, 'gw.yaml'),
      'mcpServers: { a: { command: "${CMD}" } }\ngateway: { host: 10.0.0.1, port: 9000, logging: { level: warn } }\n',
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads a file relative to cwd with the given env, and lets flags win over it', async () => {
    const source = { kind: 'file', path: 'gw.yaml' } as const;
    const plain = await resolveConfig(source, {}, { cwd: dir, env: { CMD: 'deno' } });
    expect(plain.listen).toEqual({ host: '10.0.0.1', port: 9000 });
    expect(stdio(plain.targets.get('a'))?.command).toBe('deno');
    const overridden = await resolveConfig(source, { host: '::1', port: 0, logLevel: 'trace' }, { cwd: dir, env: { CMD: 'deno' } });
    expect(overridden.listen).toEqual({ host: '::1', port: 0 });
    expect(overridden.logging.level).toBe('trace');
    expect(Object.isFrozen(overridden.listen)).toBe(true);
  });

  it('lets one flag override without touching the other settings', async () => {
    const config = await resolveConfig({ kind: 'file', path: 'gw.yaml' }, { port: 1234 }, { cwd: dir, env: { CMD: 'x' } });
    expect(config.listen).toEqual({ host: '10.0.0.1', port: 1234 });
    expect(config.logging.level).toBe('warn');
  });

  it('builds quick mode and the built-in default', async () => {
    const quick = await resolveConfig({ kind: 'quick', command: 'npx', args: ['-y', 'pkg'], env: {}, headers: {} }, { port: 0 });
    expect([...quick.targets.keys()]).toEqual(['npx']);
    expect(quick.listen.port).toBe(0);
    const builtIn = await resolveConfig({ kind: 'default' }, {}, { resolveEverything: () => '/e/index.js' });
    expect(stdio(builtIn.targets.get('everything'))?.args).toEqual(['/e/index.js', 'stdio']);
    await expect(resolveConfig({ kind: 'default' }, {}, { resolveEverything: () => undefined })).rejects.toThrow(/not installed/);
  });
});

describe('withOverrides', () => {
  it('returns the same object when nothing is overridden, and never mutates its input', () => {
    const config = parseConfig({ mcpServers: { a: { command: 'x' } } }, { env: {} });
    expect(withOverrides(config, {})).toBe(config);
    const changed = withOverrides(config, { port: 1 });
    expect(changed.listen.port).toBe(1);
    expect(config.listen.port).toBe(8080);
    expect(changed.targets).toBe(config.targets);
  });
});

describe('endpointUrls', () => {
  it('lists /mcp first for a single target', () => {
    const config = parseConfig({ mcpServers: { a: { command: 'x' } } }, { env: {} });
    expect(endpointUrls(config, 'http://127.0.0.1:8080')).toEqual(['http://127.0.0.1:8080/mcp', 'http://127.0.0.1:8080/servers/a/mcp']);
  });

  it('lists /mcp (every target at once), then groups, then every target in config order otherwise', () => {
    const config = parseConfig(
      { mcpServers: { b: { command: 'x' }, a: { command: 'x' } }, gateway: { groups: { g: { servers: ['a'] } } } },
      { env: {} },
    );
    expect(endpointUrls(config, 'http://[::1]:1/')).toEqual([
      'http://[::1]:1/mcp',
      'http://[::1]:1/groups/g/mcp',
      'http://[::1]:1/servers/b/mcp',
      'http://[::1]:1/servers/a/mcp',
    ]);
  });

  it('lists virtual servers after groups', () => {
    const config = parseConfig(
      { mcpServers: { a: { command: 'x' } }, gateway: { virtualServers: { kit: { tools: [{ server: 'a', tool: 't' }] } } } },
      { env: {} },
    );
    expect(endpointUrls(config, 'http://h:1')).toEqual(['http://h:1/mcp', 'http://h:1/virtual/kit/mcp', 'http://h:1/servers/a/mcp']);
  });
});

/** The target when it is a stdio one (these tests only build stdio targets). */
function stdio(target: TargetConfig | undefined): StdioTargetConfig | undefined {
  return target?.type === 'stdio' ? target : undefined;
}
