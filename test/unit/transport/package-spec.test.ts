import { describe, expect, it } from 'vitest';
import { lockKey, parseRunnerCall } from '../../../src/transport/package-spec.ts';

describe('parseRunnerCall', () => {
  it('takes npx and bunx calls apart: package, range, program and its own arguments', () => {
    expect(parseRunnerCall('npx', ['-y', '@modelcontextprotocol/server-everything', 'stdio'])).toEqual({
      runner: 'npx', ecosystem: 'npm', name: '@modelcontextprotocol/server-everything', range: 'latest', bin: undefined, args: ['stdio'],
    });
    expect(parseRunnerCall('/usr/bin/npx', ['--yes', 'pkg@^1.2.0', '--flag', 'x'])).toMatchObject({ name: 'pkg', range: '^1.2.0', args: ['--flag', 'x'] });
    expect(parseRunnerCall('npx', ['-p', '@s/tools@2.0.0', 'tool-a', 'arg'])).toMatchObject({ name: '@s/tools', range: '2.0.0', bin: 'tool-a', args: ['arg'] });
    expect(parseRunnerCall('bunx', ['pkg@1'])).toMatchObject({ runner: 'bunx', ecosystem: 'npm', name: 'pkg', range: '1' });
  });

  it('takes uvx and pipx run calls apart', () => {
    expect(parseRunnerCall('uvx', ['mcp-server-time', '--local-timezone=UTC'])).toMatchObject({ runner: 'uvx', ecosystem: 'pypi', name: 'mcp-server-time', range: 'latest', args: ['--local-timezone=UTC'] });
    expect(parseRunnerCall('uvx', ['--from', 'mcp-server-git==0.6.2', 'mcp-server-git'])).toMatchObject({ name: 'mcp-server-git', range: '0.6.2', bin: 'mcp-server-git' });
    expect(parseRunnerCall('uvx', ['pkg[extra]>=1.0'])).toMatchObject({ name: 'pkg', range: '>=1.0' });
    expect(parseRunnerCall('pipx', ['run', 'pkg@3'])).toMatchObject({ runner: 'pipx', name: 'pkg', range: '3' });
  });

  it('leaves alone what it does not understand: other commands, unknown options, paths, URLs, git specs, shell text, leading dashes', () => {
    for (const [command, args] of [
      ['node', ['server.js']], ['pipx', ['install', 'x']], ['npx', ['--registry', 'http://evil', 'pkg']], ['npx', ['-y', './local']],
      ['npx', ['-y', 'github:user/repo']], ['npx', ['-y', 'https://example.com/x.tgz']], ['npx', ['-y', 'pkg@1; rm -rf /']], ['npx', ['-y']],
      ['uvx', ['--with', 'x', 'pkg']], ['uvx', ['-pkg']], ['npx', ['-y', 'UPPER']], ['npx', ['-y', 'pkg@1 2']],
    ] as const) {
      expect(parseRunnerCall(command, args), `${command} ${args.join(' ')}`).toBeUndefined();
    }
  });

  it('keys the lock by ecosystem, name and range as written', () => {
    expect(lockKey({ ecosystem: 'npm', name: '@a/b', range: 'latest' })).toBe('npm:@a/b@latest');
  });
});
