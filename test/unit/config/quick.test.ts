import { describe, expect, it } from 'vitest';
import { isConfigError } from '../../../src/config/config-error.ts';
import {
  buildDefaultConfig,
  buildQuickConfig,
  DEFAULT_TARGET_NAME,
  resolveEverythingServer,
  toTargetName,
} from '../../../src/config/quick.ts';
import { TARGET_NAME_PATTERN } from '../../../src/config/schema.ts';

describe('toTargetName', () => {
  it.each([
    ['npx', 'npx'],
    ['uvx', 'uvx'],
    ['/usr/bin/my.server', 'my-server'],
    ['./bin/server.py', 'server-py'],
    ['C:\\tools\\srv.exe', 'srv-exe'],
    ['/opt/mcp/my server (v2)', 'my-server-v2'],
    ['node_modules/.bin/mcp-server-everything', 'mcp-server-everything'],
    ['.hidden', 'hidden'],
    ['_private', 'private'],
    ['a..b', 'a-b'],
    ['dir/', 'dir'],
    ['résumé', 'r-sum'],
  ])('%s -> %s', (command, name) => {
    expect(toTargetName(command)).toBe(name);
  });

  it('falls back to "server" when nothing usable is left', () => {
    for (const command of ['/', '...', 'ééé', '---']) expect(toTargetName(command)).toBe('server');
  });

  it('keeps at most 64 characters and never ends on a dash', () => {
    const name = toTargetName(`${'a'.repeat(63)}.b`);
    expect(name).toBe('a'.repeat(63));
    expect(toTargetName('x'.repeat(100))).toHaveLength(64);
  });

  it('always produces a valid target name', () => {
    for (const command of ['npx', '/usr/bin/my.server', '...', '-x-', 'a'.repeat(200), '0', 'é']) {
      expect(toTargetName(command)).toMatch(TARGET_NAME_PATTERN);
    }
  });
});

describe('buildQuickConfig', () => {
  it('builds one stdio target with the default settings and literal arguments', () => {
    const config = buildQuickConfig('/usr/bin/my.server', ['--root', '${HOME}', '']);
    expect([...config.targets.keys()]).toEqual(['my-server']);
    const target = config.targets.get('my-server');
    expect(target).toMatchObject({ type: 'stdio', command: '/usr/bin/my.server', args: ['--root', '${HOME}', ''], env: {}, cwd: undefined });
    expect(target?.timeouts.requestMs).toBe(300_000);
    expect(config.listen).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('rejects an empty command', () => {
    expect(() => buildQuickConfig('', [])).toThrow(/--: the command after -- must not be empty/);
  });
});

describe('buildDefaultConfig', () => {
  it('serves server-everything over stdio with this Node binary', () => {
    const config = buildDefaultConfig(() => '/x/dist/index.js');
    expect([...config.targets.keys()]).toEqual([DEFAULT_TARGET_NAME]);
    expect(config.targets.get(DEFAULT_TARGET_NAME)).toMatchObject({ command: process.execPath, args: ['/x/dist/index.js', 'stdio'] });
  });

  it('finds the installed server-everything (a devDependency of this package)', () => {
    expect(resolveEverythingServer()).toMatch(/@modelcontextprotocol[\\/]server-everything[\\/]dist[\\/]index\.js$/);
  });

  it('says to pass --config or a command when server-everything is not installed', () => {
    try {
      buildDefaultConfig(() => undefined);
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(isConfigError(error)).toBe(true);
      expect((error as Error).message).toMatch(/not installed: pass --config <file> or a command after --/);
    }
  });
});
